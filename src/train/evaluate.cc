#include "train/evaluate.h"

#include <ATen/ATen.h>

#include <limits>

#include "train/metrics.h"

namespace directgnn {

EvalResult evaluate(GnnModel& model, const Dataset& dataset, const Split& split,
                    ProcessGroup* group) {
  // Only the validation and test nodes (and the neighbourhoods they read) are computed, an
  // equal share on each rank; predictions (and two-class scores) are summed into place.
  const at::Tensor targets = at::cat({split.val, split.test});
  const int64_t n = targets.numel();
  const int rank = group != nullptr ? group->rank() : 0;
  const int ranks = group != nullptr ? group->size() : 1;
  const int64_t lo = n * rank / ranks, hi = n * (rank + 1) / ranks;
  const bool binary = dataset.num_classes == 2;
  std::vector<at::Tensor> combined{at::zeros({n}, at::kDouble), at::zeros({n}, at::kDouble)};
  if (hi > lo) {
    const at::Tensor mine = targets.narrow(0, lo, hi - lo);
    const at::Tensor unique = std::get<0>(at::_unique(mine));
    const at::Tensor logits = model.infer_nodes(dataset.graph, dataset.features, mine)
                                  .index_select(0, at::searchsorted(unique, mine));
    combined[0].narrow(0, lo, hi - lo).copy_(logits.argmax(1));
    // The log-odds of class 1 rank nodes exactly as its softmax probability does.
    if (binary) combined[1].narrow(0, lo, hi - lo).copy_(logits.select(1, 1) - logits.select(1, 0));
  }
  if (group != nullptr) group->all_reduce_sum(combined);
  const at::Tensor labels = dataset.labels.index_select(0, targets);
  const int64_t n_val = split.val.numel();
  auto acc = [&](int64_t from, int64_t count) {
    if (count == 0) return std::numeric_limits<double>::quiet_NaN();
    return combined[0]
        .narrow(0, from, count)
        .to(at::kLong)
        .eq(labels.narrow(0, from, count))
        .to(at::kDouble)
        .mean()
        .item<double>();
  };
  EvalResult r;
  r.val_acc = acc(0, n_val);
  r.test_acc = acc(n_val, n - n_val);
  if (binary) {
    r.val_roc_auc = roc_auc(combined[1].narrow(0, 0, n_val), labels.narrow(0, 0, n_val));
    r.test_roc_auc =
        roc_auc(combined[1].narrow(0, n_val, n - n_val), labels.narrow(0, n_val, n - n_val));
  }
  return r;
}

}  // namespace directgnn
