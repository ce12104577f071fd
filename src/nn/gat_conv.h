// Graph attention convolution (Velickovic et al.), as PyG's GATConv with its defaults
// (add_self_loops=True, negative_slope=0.2, bias=True) and DGL's GATConv on a graph with self
// loops added:
//   h_j = W x_j split into `heads` blocks of `out_dim` channels (no bias in the projection)
//   e_ij = LeakyReLU(a_src . h_j + a_dst . h_i, 0.2) per head
//   alpha_ij = softmax of e_ij over i's sampled in-neighbours j and i itself (the self loop)
//   out_i = concat or mean over heads of sum_j dropout(alpha_ij) h_j, plus a bias.
// On a block the self loop's source is destination i itself (x_dst, the prefix of x_src in a
// sampled block). Edges the graph already has from a node to itself count as ordinary edges
// (the importers drop them unless --keep-self-loops is given). Attention dropout draws its
// mask from directgnn::dropout, so it repeats for a seed on the CPU and the GPU.
#pragma once

#include <ATen/Tensor.h>
#include <torch/nn/module.h>

#include "sampling/block.h"

namespace directgnn {

class GATConv : public torch::nn::Module {
 public:
  // out_dim channels per head; the output is heads * out_dim wide when `concat`, else out_dim.
  GATConv(int64_t in_dim, int64_t out_dim, int64_t heads, bool concat, double attn_dropout);
  // x_src [block.num_src, in], x_dst [block.num_dst, in] (normally x_src's first rows, which
  // are then projected once). Tensors on any device; the CPU aggregates with its own kernel.
  at::Tensor forward(const Block& block, const at::Tensor& x_src, const at::Tensor& x_dst);

  static constexpr double kNegativeSlope = 0.2;

 private:
  int64_t heads_, out_dim_;
  bool concat_;
  double attn_dropout_;
  at::Tensor weight_, att_src_, att_dst_, bias_;
};

}  // namespace directgnn
