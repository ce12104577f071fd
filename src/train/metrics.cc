#include "train/metrics.h"

#include <ATen/ATen.h>

#include <cmath>
#include <limits>

namespace directgnn {

double accuracy(const at::Tensor& logits, const at::Tensor& labels, const at::Tensor& ids) {
  if (ids.numel() == 0) return std::numeric_limits<double>::quiet_NaN();
  const at::Tensor pred = logits.index_select(0, ids).argmax(1);
  return pred.eq(labels.index_select(0, ids)).to(at::kDouble).mean().item<double>();
}

double roc_auc(const at::Tensor& scores_in, const at::Tensor& targets_in) {
  const at::Tensor scores = scores_in.to(at::kDouble).contiguous();
  const at::Tensor targets = targets_in.to(at::kLong).contiguous();
  const int64_t n = scores.numel();
  const at::Tensor order = scores.argsort();
  const int64_t* idx = order.data_ptr<int64_t>();
  const double* s = scores.data_ptr<double>();
  const int64_t* t = targets.data_ptr<int64_t>();
  double positive_rank_sum = 0.0;
  int64_t positives = 0;
  for (int64_t i = 0; i < n;) {
    int64_t j = i;
    while (j + 1 < n && s[idx[j + 1]] == s[idx[i]]) ++j;
    const double rank = 0.5 * static_cast<double>(i + j) + 1.0;  // ranks are 1-based
    for (int64_t k = i; k <= j; ++k) {
      if (t[idx[k]] == 1) {
        positive_rank_sum += rank;
        ++positives;
      }
    }
    i = j + 1;
  }
  const int64_t negatives = n - positives;
  if (positives == 0 || negatives == 0) return std::numeric_limits<double>::quiet_NaN();
  const auto p = static_cast<double>(positives);
  return (positive_rank_sum - p * (p + 1) / 2) / (p * static_cast<double>(negatives));
}

}  // namespace directgnn
