// Multi-head attention over a block, the two halves of a GAT layer's message passing.
//
// edge_softmax: for each destination i, a softmax over its sampled in-edges (source j =
// indices[e]) and its self loop (source: i itself) of LeakyReLU(score_src[j] + score_dst[i]),
// one per head. Plain ATen operations (gathers, scatter_reduce, index_add), so the same code
// runs on the CPU and the GPU, and autograd differentiates it.
//
// multi_head_aggregate: out[i, h, :] = sum over row i's edges e of alpha[e, h] * h_src[j, h, :].
// On the CPU a parallel kernel with a hand-written backward (nn/cpu/attention.h;
// deterministic: no atomics); on other devices multi_head_aggregate_generic, the tensor-operation
// twin it is tested against.
#pragma once

#include <ATen/Tensor.h>

namespace directgnn {

struct EdgeAttention {
  at::Tensor edges;  // float32 [num_edges, heads]: the block's edges in CSR order
  at::Tensor self;   // float32 [num_dst, heads]: each destination's self loop (undefined: none)
};

// indptr int64 [num_dst + 1], indices int32/int64 [num_edges] into [0, num_src);
// score_src float32 [num_src, heads] (a_src . W x_j), score_self [num_dst, heads] (the same of
// each destination, its self loop's source), score_dst [num_dst, heads] (a_dst . W x_i).
// An undefined score_self takes no self loop (PyG's add_self_loops=False): the softmax runs over
// the in-edges alone, and a destination without any has no weights at all.
EdgeAttention edge_softmax(const at::Tensor& indptr, const at::Tensor& indices,
                           const at::Tensor& score_src, const at::Tensor& score_self,
                           const at::Tensor& score_dst, double negative_slope);

// alpha float32 [num_edges, heads], h_src float32 [num_src, heads * channels] (head-major
// rows); returns [num_dst, heads * channels]. Differentiable in alpha and h_src.
at::Tensor multi_head_aggregate(const at::Tensor& indptr, const at::Tensor& indices,
                                const at::Tensor& alpha, const at::Tensor& h_src);
at::Tensor multi_head_aggregate_generic(const at::Tensor& indptr, const at::Tensor& indices,
                                        const at::Tensor& alpha, const at::Tensor& h_src);

}  // namespace directgnn
