// torch.ops.directgnn.gather_many: rows `ids` of several tables in one call (a PyG batch's x,
// y and masks). CPU ids over CPU tables take one pass: a parallel loop reads and checks each
// id once and copies its row of every table. Otherwise each table is gathered in turn as
// directgnn.gather would (on the current stream, without going back to Python in between).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "directgnn/error.h"
#include "errors.h"
#include "feature/feature_store.h"
#include "ops.h"

namespace directgnn::ops {
namespace {

struct RowCopy {
  const uint8_t* base;
  uint8_t* dst;
  int64_t row_bytes;
};

template <typename Id>
void copy_rows(const std::vector<RowCopy>& copies, const Id* ids, int64_t count) {
  // About 2 MiB of rows per task: waking the second thread costs tens of microseconds
  // (idle threads sleep under OMP_WAIT_POLICY=PASSIVE); on Cora batches of 64 (4.5 MB of rows)
  // 2 MiB tasks beat 512 KiB and 8 MiB ones (docs/benchmarks.md).
  int64_t bytes_per_id = 0;
  for (const RowCopy& c : copies) bytes_per_id += c.row_bytes;
  const int64_t grain =
      std::max<int64_t>(16, (int64_t{2048} << 10) / std::max<int64_t>(bytes_per_id, 1));
  at::parallel_for(0, count, grain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const auto id = static_cast<int64_t>(ids[i]);
      for (const RowCopy& c : copies) {
        std::memcpy(c.dst + i * c.row_bytes, c.base + id * c.row_bytes, c.row_bytes);
      }
    }
  });
}

std::vector<int64_t> out_shape(const at::Tensor& table, int64_t count) {
  std::vector<int64_t> shape(table.sizes().begin(), table.sizes().end());
  shape[0] = count;
  return shape;
}

std::vector<at::Tensor> gather_on_cpu(const std::vector<at::Tensor>& tables,
                                      const at::Tensor& ids_in) {
  const at::Tensor ids = ids_in.contiguous();
  check_ids_in_range(ids, tables[0].size(0));
  std::vector<at::Tensor> outs;
  std::vector<RowCopy> copies;
  for (size_t t = 0; t < tables.size(); ++t) {
    DGNN_CHECK_ARG(tables[t].is_contiguous(), "tables", "table ", t,
                   " is not contiguous; tables are read in place, so pass contiguous ones");
    outs.push_back(at::empty(out_shape(tables[t], ids.numel()), tables[t].options()));
    const int64_t row_bytes =
        tables[t].size(0) == 0 ? 0 : tables[t].nbytes() / static_cast<int64_t>(tables[t].size(0));
    copies.push_back({static_cast<const uint8_t*>(tables[t].data_ptr()),
                      static_cast<uint8_t*>(outs.back().data_ptr()), row_bytes});
  }
  if (ids.scalar_type() == at::kInt) {
    copy_rows(copies, ids.data_ptr<int32_t>(), ids.numel());
  } else {
    copy_rows(copies, ids.data_ptr<int64_t>(), ids.numel());
  }
  return outs;
}

std::vector<at::Tensor> gather_many(at::TensorList tables, const at::Tensor& ids,
                                    c10::string_view method, int64_t max_threads) {
  DGNN_CHECK_ARG(!tables.empty(), "tables", "no tables given");
  DGNN_CHECK_TYPE(
      ids.dim() == 1 && (ids.scalar_type() == at::kLong || ids.scalar_type() == at::kInt),
      "directgnn.gather_many: ids must be a 1-D int64 or int32 tensor");
  const std::string how(method);
  const GatherMethod parsed = parse_gather_method(how);
  bool on_cpu =
      ids.is_cpu() && parsed != GatherMethod::kZeroCopy && parsed != GatherMethod::kAligned;
  for (size_t t = 0; t < tables.size(); ++t) {
    DGNN_CHECK_ARG(tables[t].dim() >= 1 && tables[t].size(0) == tables[0].size(0), "tables",
                   "table ", t, " has shape ", tables[t].sizes(), " but table 0 has ",
                   tables[0].size(0), " rows; every table needs one row per node");
    on_cpu = on_cpu && tables[t].is_cpu();
  }
  if (on_cpu) return gather_on_cpu(tables.vec(), ids);
  std::vector<at::Tensor> outs;
  for (const at::Tensor& table : tables) {
    const at::Tensor rows = table.reshape({table.size(0), -1});
    outs.push_back(gather(rows, ids, how, false, max_threads).view(out_shape(table, ids.numel())));
  }
  return outs;
}

}  // namespace

void define_gather_many(torch::Library& m) {
  m.def(
      "gather_many(Tensor[] tables, Tensor ids, *, str method=\"auto\", int max_threads=0) -> "
      "Tensor[]");
}

void impl_gather_many(torch::Library& m) { m.impl("gather_many", guarded<&gather_many>); }

}  // namespace directgnn::ops
