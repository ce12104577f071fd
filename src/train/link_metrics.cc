#include "train/link_metrics.h"

#include <ATen/ATen.h>

#include <limits>

#include "directgnn/error.h"

namespace directgnn {

double average_precision(const at::Tensor& scores_in, const at::Tensor& targets_in) {
  const at::Tensor scores = scores_in.to(at::kDouble).contiguous();
  const at::Tensor targets = targets_in.to(at::kLong).contiguous();
  const int64_t n = scores.numel();
  const at::Tensor order = scores.argsort(/*stable=*/true, 0, /*descending=*/true);
  const int64_t* idx = order.data_ptr<int64_t>();
  const double* s = scores.data_ptr<double>();
  const int64_t* t = targets.data_ptr<int64_t>();
  const int64_t positives = targets.sum().item<int64_t>();
  if (positives == 0) return std::numeric_limits<double>::quiet_NaN();
  double ap = 0.0;
  int64_t seen = 0, hits = 0;
  for (int64_t i = 0; i < n;) {
    int64_t j = i, gained = 0;
    while (j < n && s[idx[j]] == s[idx[i]]) gained += t[idx[j++]];
    seen = j;
    hits += gained;
    ap += static_cast<double>(gained) / static_cast<double>(positives) *
          (static_cast<double>(hits) / static_cast<double>(seen));
    i = j;
  }
  return ap;
}

double hits_at_k(const at::Tensor& pos, const at::Tensor& neg, int64_t k) {
  DGNN_CHECK_ARG(k >= 1, "hits_k", "must be at least 1, got ", k);
  if (neg.numel() < k) return 1.0;
  const at::Tensor kth = std::get<0>(neg.to(at::kDouble).topk(k)).select(0, k - 1);
  return pos.to(at::kDouble).gt(kth).to(at::kDouble).mean().item<double>();
}

at::Tensor ranks_among_negatives(const at::Tensor& pos, const at::Tensor& neg) {
  DGNN_CHECK(neg.dim() == 2 && neg.size(0) == pos.numel(),
             "ranks_among_negatives: negatives must be [E, K] for E positives");
  const at::Tensor p = pos.to(at::kDouble).view({-1, 1}), n = neg.to(at::kDouble);
  const at::Tensor optimistic = n.gt(p).sum(1).to(at::kDouble);
  const at::Tensor pessimistic = n.ge(p).sum(1).to(at::kDouble);
  return 0.5 * (optimistic + pessimistic) + 1.0;
}

double mean_reciprocal_rank(const at::Tensor& ranks) {
  return ranks.reciprocal().mean().item<double>();
}

double hits_of_ranks(const at::Tensor& ranks, int64_t k) {
  return ranks.le(static_cast<double>(k)).to(at::kDouble).mean().item<double>();
}

}  // namespace directgnn
