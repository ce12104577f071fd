// GraphSAGE convolution with the mean aggregator and a root weight, as PyG's SAGEConv and
// DGL's SAGEConv('mean'):  out_i = W_l * mean_{j in N(i)} x_j + b + W_r * x_i.
#pragma once

#include <ATen/Tensor.h>
#include <torch/nn/module.h>

#include "sampling/block.h"

namespace directgnn {

class SAGEConv : public torch::nn::Module {
 public:
  SAGEConv(int64_t in_dim, int64_t out_dim);
  // x_src [block.num_src, in], x_dst [block.num_dst, in] (normally x_src's first rows).
  at::Tensor forward(const Block& block, const at::Tensor& x_src, const at::Tensor& x_dst);

 private:
  at::Tensor weight_l_, bias_l_, weight_r_;
};

}  // namespace directgnn
