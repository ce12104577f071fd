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

std::vector<double> class_accuracy(const at::Tensor& logits, const at::Tensor& labels,
                                   const at::Tensor& ids, int64_t num_classes) {
  const at::Tensor truth = labels.index_select(0, ids);
  const at::Tensor hit = logits.index_select(0, ids).argmax(1).eq(truth).to(at::kLong);
  const at::Tensor total = at::bincount(truth, {}, num_classes).to(at::kLong);
  const at::Tensor right = at::zeros({num_classes}, at::kLong).index_add_(0, truth, hit);
  std::vector<double> out(static_cast<size_t>(num_classes));
  for (int64_t k = 0; k < num_classes; ++k) {
    const int64_t n = total[k].item<int64_t>();
    out[static_cast<size_t>(k)] =
        n == 0 ? std::numeric_limits<double>::quiet_NaN()
               : static_cast<double>(right[k].item<int64_t>()) / static_cast<double>(n);
  }
  return out;
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
