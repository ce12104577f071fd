// The CPU twin of the sparse aggregation over a block (nn/aggregate.h is the front door, and
// says what it computes): a parallel kernel over destination rows, and a hand-written backward
// that splits feature columns across threads, so it needs no atomics and every sum runs in edge
// order whatever the thread count.
#pragma once

#include <ATen/Tensor.h>

namespace directgnn::cpu {

// Arguments checked by the front door: contiguous CPU tensors, float32 x_src and weight.
at::Tensor csr_aggregate(const at::Tensor& indptr, const at::Tensor& indices,
                         const at::Tensor& weight, const at::Tensor& x_src);

}  // namespace directgnn::cpu
