// Helpers of the tests that build small graphs by hand: id tensors from lists and back.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace directgnn::testing {

// An int64 tensor of `v`.
inline at::Tensor ids(std::vector<int64_t> v) {
  return at::tensor(at::ArrayRef<int64_t>(v), at::kLong);
}

// The values of an integer tensor, as int64.
inline std::vector<int64_t> values(const at::Tensor& t) {
  const at::Tensor c = t.to(at::kLong).contiguous();
  return {c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel()};
}

}  // namespace directgnn::testing
