// Sparse aggregation over a block: out[i] = sum over edges e of row i of w[e] * x_src[idx[e]].
//
// `indptr` int64 [num_dst + 1], `indices` int32/int64 into x_src's rows, `weight` float32
// [num_edges] or undefined for the mean (1 / row length; rows without edges give 0).
// x_src is float32 [num_src, F]. On the CPU the parallel kernel of nn/cpu/aggregate.h runs
// (its backward pass splits feature columns across threads, so it needs no atomics and is
// deterministic); on other devices csr_aggregate_generic, the tensor-operation twin below.
// Differentiable in x_src.
#pragma once

#include <ATen/Tensor.h>

namespace directgnn {

at::Tensor csr_aggregate(const at::Tensor& indptr, const at::Tensor& indices,
                         const at::Tensor& weight, const at::Tensor& x_src);

// The same from tensor operations (gather the source rows, weight, index_add), on any device:
// the GPU path, and a second implementation the CPU kernels are tested against. Autograd
// comes from the operations.
at::Tensor csr_aggregate_generic(const at::Tensor& indptr, const at::Tensor& indices,
                                 const at::Tensor& weight, const at::Tensor& x_src);

// The destination row of each of the `num_edges` edges of a CSR, by binary search (no
// host synchronisation on a GPU).
at::Tensor edge_destinations(const at::Tensor& indptr, int64_t num_edges);

}  // namespace directgnn
