#include "dist/part_offsets.h"

#include <ATen/ATen.h>

#include "directgnn/error.h"

namespace directgnn {

PartOffsets::PartOffsets(std::vector<int64_t> offsets, int parts, const char* what)
    : offsets_(std::move(offsets)) {
  DGNN_CHECK(static_cast<int>(offsets_.size()) == parts + 1, what, ": ", parts, " ranks need ",
             parts + 1, " offsets, got ", offsets_.size());
  for (size_t k = 1; k < offsets_.size(); ++k) {
    DGNN_CHECK(offsets_[k] >= offsets_[k - 1], what, ": offsets must ascend");
  }
  inner_ = at::tensor(std::vector<int64_t>(offsets_.begin() + 1, offsets_.end() - 1), at::kLong);
}

at::Tensor PartOffsets::owners(const at::Tensor& ids) const {
  return at::searchsorted(inner_, ids, /*out_int32=*/false, /*right=*/true);
}

std::vector<int64_t> to_vector(const at::Tensor& counts) {
  const at::Tensor c = counts.to(at::kCPU).contiguous();
  return {c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel()};
}

}  // namespace directgnn
