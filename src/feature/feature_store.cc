#include "feature/feature_store.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "core/parallel.h"
#include "directgnn/error.h"
#include "feature/cpu/gather.h"

namespace directgnn {
namespace {

template <typename Id>
void check_range(const Id* ids, int64_t count, int64_t num_rows) {
  const int64_t i = first_index_where(count, 1 << 16, [&](int64_t k) {
    return ids[k] < 0 || static_cast<int64_t>(ids[k]) >= num_rows;
  });
  DGNN_CHECK(i < 0, "feature gather: ids[", i, "] = ", i < 0 ? 0 : static_cast<int64_t>(ids[i]),
             " is out of range for a table of ", num_rows, " rows");
}

}  // namespace

Placement parse_placement(const std::string& name) {
  if (name == "host") return Placement::kHost;
  fail("--features '", name, "' is not a placement this build supports (supported: host)");
}

std::string placement_name(Placement placement) {
  switch (placement) {
    case Placement::kHost:
      return "host";
  }
  return "unknown";
}

void check_ids_in_range(const at::Tensor& ids, int64_t num_rows) {
  DGNN_CHECK(ids.dim() == 1 && ids.device().is_cpu() && ids.is_contiguous(),
             "feature gather: ids must be a contiguous 1-D CPU tensor");
  if (ids.scalar_type() == at::kInt) {
    check_range(ids.data_ptr<int32_t>(), ids.numel(), num_rows);
  } else if (ids.scalar_type() == at::kLong) {
    check_range(ids.data_ptr<int64_t>(), ids.numel(), num_rows);
  } else {
    fail("feature gather: ids have dtype ", ids.scalar_type(), "; use int32 or int64");
  }
}

FeatureStore::FeatureStore(at::Tensor table, Placement placement)
    : table_(std::move(table)), placement_(placement) {
  DGNN_CHECK(table_.defined() && table_.dim() == 2 && table_.device().is_cpu(),
             "feature table must be a 2-D CPU tensor");
  if (!table_.is_contiguous()) table_ = table_.contiguous();
}

at::Tensor FeatureStore::gather(const at::Tensor& ids) const {
  at::Tensor out = at::empty({ids.numel(), dim()}, table_.options());
  gather_into(ids, out);
  return out;
}

void FeatureStore::gather_into(const at::Tensor& ids_in, at::Tensor& out) const {
  const at::Tensor ids = ids_in.contiguous();
  check_ids_in_range(ids, num_rows());
  DGNN_CHECK(out.is_contiguous() && out.dim() == 2 && out.size(0) == ids.numel() &&
                 out.size(1) == dim() && out.scalar_type() == table_.scalar_type(),
             "feature gather: output must be a contiguous [", ids.numel(), ", ", dim(), "] ",
             table_.scalar_type(), " tensor");
  const auto* base = static_cast<const uint8_t*>(table_.data_ptr());
  auto* dst = static_cast<uint8_t*>(out.data_ptr());
  if (ids.scalar_type() == at::kInt) {
    cpu::gather_rows(base, row_bytes(), ids.data_ptr<int32_t>(), ids.numel(), dst);
  } else {
    cpu::gather_rows(base, row_bytes(), ids.data_ptr<int64_t>(), ids.numel(), dst);
  }
}

}  // namespace directgnn
