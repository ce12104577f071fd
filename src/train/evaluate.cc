#include "train/evaluate.h"

#include <ATen/ATen.h>

#include <limits>

#include "train/metrics.h"

namespace directgnn {

EvalResult evaluate(GnnModel& model, const Dataset& dataset, const Split& split) {
  // Only the validation and test nodes (and the neighbourhoods they read) are computed.
  const at::Tensor targets = std::get<0>(at::_unique(at::cat({split.val, split.test})));
  const at::Tensor logits = model.infer_nodes(dataset.graph, dataset.features, targets);
  const at::Tensor labels = dataset.labels.index_select(0, targets);
  const at::Tensor val = at::searchsorted(targets, split.val);
  const at::Tensor test = at::searchsorted(targets, split.test);
  EvalResult r;
  r.val_acc = accuracy(logits, labels, val);
  r.test_acc = accuracy(logits, labels, test);
  if (dataset.num_classes == 2) {
    // The log-odds of class 1 rank nodes exactly as its softmax probability does.
    const at::Tensor score = logits.select(1, 1) - logits.select(1, 0);
    r.val_roc_auc = roc_auc(score.index_select(0, val), labels.index_select(0, val));
    r.test_roc_auc = roc_auc(score.index_select(0, test), labels.index_select(0, test));
  }
  return r;
}

}  // namespace directgnn
