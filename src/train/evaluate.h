// Evaluation of a model on a split: full-neighbourhood, layer-wise inference of the validation
// and test nodes (each layer computing only the nodes the next reads), then accuracy (and ROC-AUC
// for two-class tasks) on the validation and test nodes.
#pragma once

#include <limits>
#include <vector>

#include "dist/process_group.h"
#include "io/dataset.h"
#include "nn/model.h"

namespace directgnn {

struct EvalResult {
  double val_acc = 0, test_acc = 0;
  // NaN unless the task has two classes.
  double val_roc_auc = std::numeric_limits<double>::quiet_NaN();
  double test_roc_auc = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> test_class_acc;  // per class (metrics.h class_accuracy)
};

// With a process group, each rank computes an equal share of the nodes and the predictions
// are combined, so every rank returns the same result.
EvalResult evaluate(GnnModel& model, const Dataset& dataset, const Split& split,
                    ProcessGroup* group = nullptr);

}  // namespace directgnn
