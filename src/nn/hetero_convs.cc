#include "nn/hetero_convs.h"

#include <ATen/ATen.h>

#include "directgnn/error.h"
#include "nn/aggregate.h"
#include "nn/attention.h"
#include "nn/dropout.h"
#include "nn/gat_conv.h"
#include "nn/linear.h"

namespace directgnn {

at::Tensor relation_gcn(const Block& block, const at::Tensor& x_src, const at::Tensor& weight,
                        const at::Tensor& bias) {
  DGNN_CHECK(block.src_degree.defined() && block.dst_degree.defined(),
             "the gcn model needs each relation's degrees in its blocks (HeteroSamplerOptions::"
             "degrees, or full_relation_block's degrees)");
  const at::Tensor dst = edge_destinations(block.indptr, block.num_edges());
  const at::Tensor kept =
      (block.indptr.narrow(0, 1, block.num_dst) - block.indptr.narrow(0, 0, block.num_dst))
          .to(at::kFloat)
          .clamp_min(1.0f);
  const at::Tensor d_dst = block.dst_degree.clamp_min(1.0f);
  // (d_v / k_v) / sqrt(d_v) per destination, 1 / sqrt(d_u) per source.
  const at::Tensor row_scale = d_dst.sqrt() / kept;
  const at::Tensor src_scale =
      block.src_degree.clamp_min(1.0f).rsqrt().index_select(0, block.indices.to(at::kLong));
  const at::Tensor edge = row_scale.index_select(0, dst) * src_scale;
  return parallel_linear(csr_aggregate(block.indptr, block.indices, edge, x_src), weight, bias);
}

at::Tensor relation_gat(const Block& block, const at::Tensor& x_src, const at::Tensor& x_dst,
                        const RelationGat& p, double attn_dropout, bool training) {
  const int64_t num_dst = block.num_dst;
  const at::Tensor h_src = parallel_linear(x_src, p.lin_src, at::Tensor());
  const at::Tensor heads_src = h_src.view({h_src.size(0), p.heads, p.channels});
  at::Tensor score_dst = at::zeros({num_dst, p.heads}, h_src.options());
  if (p.lin_dst.defined()) {
    const at::Tensor h_dst = parallel_linear(x_dst, p.lin_dst, at::Tensor());
    score_dst = (h_dst.view({num_dst, p.heads, p.channels}) * p.att_dst).sum(-1);
  }
  const EdgeAttention att =
      edge_softmax(block.indptr, block.indices, (heads_src * p.att_src).sum(-1), at::Tensor(),
                   score_dst, GATConv::kNegativeSlope);
  const at::Tensor alpha = directgnn::dropout(att.edges, attn_dropout, training);
  at::Tensor out = multi_head_aggregate(block.indptr, block.indices, alpha, h_src);
  if (!p.concat) out = out.view({num_dst, p.heads, p.channels}).mean(1);
  return out + p.bias;
}

}  // namespace directgnn
