#include "train/evaluate.h"

#include <ATen/ATen.h>

#include "train/metrics.h"

namespace directgnn {

EvalResult evaluate(GnnModel& model, const Dataset& dataset, const Split& split,
                    ProcessGroup* group, FeatureExchange* exchange) {
  // Only the validation and test nodes (and the neighbourhoods they read) are computed, an
  // equal share on each rank; the logits are summed into place across ranks.
  const at::Tensor targets = at::cat({split.val, split.test});
  const int64_t n = targets.numel();
  const int rank = group != nullptr ? group->rank() : 0;
  const int ranks = group != nullptr ? group->size() : 1;
  const int64_t lo = n * rank / ranks, hi = n * (rank + 1) / ranks;
  std::vector<at::Tensor> logits{at::zeros({n, dataset.num_classes}, at::kFloat)};
  InferHooks hooks;
  if (exchange != nullptr) {
    hooks.input_rows = [exchange](const at::Tensor& ids) { return exchange->gather(ids); };
  }
  if (hi > lo) {
    const at::Tensor mine = targets.narrow(0, lo, hi - lo);
    const at::Tensor unique = std::get<0>(at::_unique(mine));
    logits[0]
        .narrow(0, lo, hi - lo)
        .copy_(model.infer_nodes(dataset.graph, dataset.features, mine, 65536, hooks)
                   .index_select(0, at::searchsorted(unique, mine)));
  } else if (exchange != nullptr) {
    exchange->gather(at::empty({0}, at::kLong));  // the others' exchange needs this rank too
  }
  if (group != nullptr) group->all_reduce_sum(logits);
  // Rows of `logits` and `labels` follow `targets`: the validation nodes, then the test nodes.
  const at::Tensor labels = dataset.labels.index_select(0, targets);
  const int64_t n_val = split.val.numel();
  const at::Tensor val = at::arange(0, n_val, at::kLong);
  const at::Tensor test = at::arange(n_val, n, at::kLong);
  EvalResult r;
  r.val_acc = accuracy(logits[0], labels, val);
  r.test_acc = accuracy(logits[0], labels, test);
  r.test_class_acc = class_accuracy(logits[0], labels, test, dataset.num_classes);
  if (dataset.num_classes == 2) {
    // The log-odds of class 1 rank nodes exactly as its softmax probability does.
    const at::Tensor score = logits[0].select(1, 1) - logits[0].select(1, 0);
    r.val_roc_auc = roc_auc(score.index_select(0, val), labels.index_select(0, val));
    r.test_roc_auc = roc_auc(score.index_select(0, test), labels.index_select(0, test));
  }
  return r;
}

}  // namespace directgnn
