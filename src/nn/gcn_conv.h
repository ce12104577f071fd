// GCN convolution (Kipf & Welling) with symmetric normalisation and self-loops, computed on
// the block:  out_i = W * ( x_i / (d_i + 1) + (d_i / k_i) * sum_{j sampled} x_j /
// sqrt((d_i+1)(d_j+1)) ) + b where d are degrees in the whole graph and k_i the neighbours kept by
// sampling. On a full-neighbourhood block (k_i = d_i) this is exactly row i of  D^-1/2 (A + I)
// D^-1/2 X W^T + b; on a sampled block it is an unbiased estimate of it.
#pragma once

#include <ATen/Tensor.h>
#include <torch/nn/module.h>

#include "sampling/block.h"

namespace directgnn {

class GCNConv : public torch::nn::Module {
 public:
  GCNConv(int64_t in_dim, int64_t out_dim);
  at::Tensor forward(const Block& block, const at::Tensor& x_src, const at::Tensor& x_dst);

 private:
  at::Tensor weight_, bias_;
};

}  // namespace directgnn
