#include "nn/sage_conv.h"

#include <ATen/ATen.h>

#include <cmath>

#include "nn/aggregate.h"
#include "nn/linear.h"

namespace directgnn {

SAGEConv::SAGEConv(int64_t in_dim, int64_t out_dim) {
  // PyTorch's Linear initialisation: U(-1/sqrt(in), 1/sqrt(in)).
  const double bound = 1.0 / std::sqrt(static_cast<double>(in_dim));
  weight_l_ =
      register_parameter("lin_l_weight", at::empty({out_dim, in_dim}).uniform_(-bound, bound));
  bias_l_ = register_parameter("lin_l_bias", at::empty({out_dim}).uniform_(-bound, bound));
  weight_r_ =
      register_parameter("lin_r_weight", at::empty({out_dim, in_dim}).uniform_(-bound, bound));
}

at::Tensor SAGEConv::forward(const Block& block, const at::Tensor& x_src, const at::Tensor& x_dst) {
  const at::Tensor mean = csr_aggregate(block.indptr, block.indices, at::Tensor(), x_src);
  return parallel_linear(mean, weight_l_, bias_l_) +
         parallel_linear(x_dst, weight_r_, at::Tensor());
}

}  // namespace directgnn
