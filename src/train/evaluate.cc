#include "train/evaluate.h"

#include <ATen/ATen.h>

#include <limits>

#include "train/metrics.h"

namespace directgnn {

EvalResult evaluate(GnnModel& model, const Dataset& dataset, const Split& split) {
  const at::Tensor logits = model.infer(dataset.graph, dataset.features);
  EvalResult r;
  r.val_acc = accuracy(logits, dataset.labels, split.val);
  r.test_acc = accuracy(logits, dataset.labels, split.test);
  if (dataset.num_classes == 2) {
    // The log-odds of class 1 rank nodes exactly as its softmax probability does.
    const at::Tensor score = logits.select(1, 1) - logits.select(1, 0);
    r.val_roc_auc =
        roc_auc(score.index_select(0, split.val), dataset.labels.index_select(0, split.val));
    r.test_roc_auc =
        roc_auc(score.index_select(0, split.test), dataset.labels.index_select(0, split.test));
  }
  return r;
}

}  // namespace directgnn
