#include "nn/gat_conv.h"

#include <ATen/ATen.h>

#include <cmath>

#include "nn/attention.h"
#include "nn/dropout.h"
#include "nn/linear.h"

namespace directgnn {
namespace {

// Whether x_dst is the first rows of x_src (the same memory), as in a sampled block.
bool is_prefix(const at::Tensor& x_dst, const at::Tensor& x_src) {
  return x_dst.data_ptr() == x_src.data_ptr() && x_dst.size(0) <= x_src.size(0) &&
         x_dst.size(1) == x_src.size(1) && x_dst.strides() == x_src.strides() &&
         x_dst.scalar_type() == x_src.scalar_type();
}

}  // namespace

GATConv::GATConv(int64_t in_dim, int64_t out_dim, int64_t heads, bool concat, double attn_dropout)
    : heads_(heads), out_dim_(out_dim), concat_(concat), attn_dropout_(attn_dropout) {
  weight_ =
      register_parameter("lin_weight", glorot({heads * out_dim, in_dim}, in_dim, heads * out_dim));
  att_src_ = register_parameter("att_src", glorot({1, heads, out_dim}, heads, out_dim));
  att_dst_ = register_parameter("att_dst", glorot({1, heads, out_dim}, heads, out_dim));
  bias_ = register_parameter("bias", at::zeros({concat ? heads * out_dim : out_dim}));
}

at::Tensor GATConv::forward(const Block& block, const at::Tensor& x_src, const at::Tensor& x_dst) {
  const int64_t num_dst = block.num_dst, width = heads_ * out_dim_;
  const at::Tensor h_src = parallel_linear(x_src, weight_, at::Tensor());
  const at::Tensor h_dst = is_prefix(x_dst, x_src) ? h_src.narrow(0, 0, num_dst)
                                                   : parallel_linear(x_dst, weight_, at::Tensor());
  const at::Tensor heads_src = h_src.view({h_src.size(0), heads_, out_dim_});
  const at::Tensor heads_dst = h_dst.view({num_dst, heads_, out_dim_});
  const EdgeAttention att =
      edge_softmax(block.indptr, block.indices, (heads_src * att_src_).sum(-1),
                   (heads_dst * att_src_).sum(-1), (heads_dst * att_dst_).sum(-1), kNegativeSlope);
  const bool training = is_training();
  const at::Tensor alpha = directgnn::dropout(att.edges, attn_dropout_, training);
  const at::Tensor alpha_self = directgnn::dropout(att.self, attn_dropout_, training);
  at::Tensor out = multi_head_aggregate(block.indptr, block.indices, alpha, h_src) +
                   (heads_dst * alpha_self.unsqueeze(2)).reshape({num_dst, width});
  if (!concat_) out = out.view({num_dst, heads_, out_dim_}).mean(1);
  return out + bias_;
}

}  // namespace directgnn
