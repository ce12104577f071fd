// The CPU twin of multi-head attention's aggregation (nn/attention.h is the front door, and says
// what it computes): a parallel kernel over destination rows and a hand-written backward, one
// writer per edge for alpha's gradient and disjoint column shares for the sources', so it needs
// no atomics and is deterministic.
#pragma once

#include <ATen/Tensor.h>

namespace directgnn::cpu {

// Arguments checked by the front door: contiguous CPU tensors, float32 alpha and h_src.
at::Tensor multi_head_aggregate(const at::Tensor& indptr, const at::Tensor& indices,
                                const at::Tensor& alpha, const at::Tensor& h_src);

}  // namespace directgnn::cpu
