#include "nn/attention.h"

#include <ATen/ATen.h>

#include <limits>

#include "directgnn/error.h"
#include "nn/aggregate.h"
#include "nn/cpu/attention.h"

namespace directgnn {

EdgeAttention edge_softmax(const at::Tensor& indptr, const at::Tensor& indices,
                           const at::Tensor& score_src, const at::Tensor& score_self,
                           const at::Tensor& score_dst, double negative_slope) {
  const int64_t num_edges = indices.numel();
  const at::Tensor dst = edge_destinations(indptr, num_edges);
  const at::Tensor logit = at::leaky_relu(
      score_src.index_select(0, indices.to(at::kLong)) + score_dst.index_select(0, dst),
      negative_slope);
  const bool self_loops = score_self.defined();
  const at::Tensor logit_self =
      self_loops ? at::leaky_relu(score_self + score_dst, negative_slope)
                 : at::full_like(score_dst, -std::numeric_limits<float>::infinity());
  // The per-destination maximum only keeps exp() in range; a softmax does not depend on it,
  // so it is a constant for autograd. Without self loops a destination without edges keeps
  // -inf, which no edge reads.
  const at::Tensor rows = dst.unsqueeze(1).expand({num_edges, logit.size(1)});
  const at::Tensor peak =
      logit_self.detach().scatter_reduce(0, rows, logit.detach(), "amax", /*include_self=*/true);
  const at::Tensor p = at::exp(logit - peak.index_select(0, dst));
  if (!self_loops) {
    const at::Tensor sum = at::zeros_like(score_dst).index_add(0, dst, p);
    return {p / sum.index_select(0, dst), at::Tensor()};
  }
  const at::Tensor p_self = at::exp(logit_self - peak);
  const at::Tensor sum = p_self.index_add(0, dst, p);
  return {p / sum.index_select(0, dst), p_self / sum};
}

at::Tensor multi_head_aggregate_generic(const at::Tensor& indptr, const at::Tensor& indices,
                                        const at::Tensor& alpha, const at::Tensor& h_src) {
  const int64_t num_dst = indptr.numel() - 1, heads = alpha.size(1);
  const int64_t channels = h_src.size(1) / heads;
  const int64_t num_edges = indices.numel();
  const at::Tensor dst = edge_destinations(indptr, num_edges);
  const at::Tensor messages =
      h_src.index_select(0, indices.to(at::kLong)).view({num_edges, heads, channels}) *
      alpha.unsqueeze(2);
  return at::zeros({num_dst, h_src.size(1)}, h_src.options())
      .index_add(0, dst, messages.view({num_edges, h_src.size(1)}));
}

at::Tensor multi_head_aggregate(const at::Tensor& indptr, const at::Tensor& indices,
                                const at::Tensor& alpha, const at::Tensor& h_src) {
  DGNN_CHECK(alpha.dim() == 2 && alpha.size(0) == indices.numel() && alpha.size(1) >= 1 &&
                 alpha.scalar_type() == at::kFloat,
             "multi_head_aggregate: alpha must be float32 [num_edges, heads], got ", alpha.sizes());
  DGNN_CHECK(
      h_src.dim() == 2 && h_src.scalar_type() == at::kFloat && h_src.size(1) % alpha.size(1) == 0,
      "multi_head_aggregate: h_src must be float32 [num_src, heads * channels], got ",
      h_src.sizes(), " for ", alpha.size(1), " heads");
  if (!h_src.device().is_cpu()) return multi_head_aggregate_generic(indptr, indices, alpha, h_src);
  DGNN_CHECK(indptr.scalar_type() == at::kLong && indptr.dim() == 1 && indptr.is_contiguous(),
             "multi_head_aggregate: indptr must be contiguous int64");
  DGNN_CHECK((indices.scalar_type() == at::kInt || indices.scalar_type() == at::kLong) &&
                 indices.is_contiguous(),
             "multi_head_aggregate: indices must be contiguous int32 or int64");
  return cpu::multi_head_aggregate(indptr, indices, alpha.contiguous(), h_src.contiguous());
}

}  // namespace directgnn
