// Evaluation of a model on a split: full-neighbourhood, layer-wise inference over the whole
// graph, then accuracy (and ROC-AUC for two-class tasks) on the validation and test nodes.
#pragma once

#include "io/dataset.h"
#include "nn/model.h"

namespace directgnn {

struct EvalResult {
  double val_acc = 0, test_acc = 0;
  double val_roc_auc, test_roc_auc;  // NaN unless the task has two classes
};

EvalResult evaluate(GnnModel& model, const Dataset& dataset, const Split& split);

}  // namespace directgnn
