// Evaluation of a model on a split: full-neighbourhood, layer-wise inference of the validation
// and test nodes (each layer computing only the nodes the next reads), or sampled
// neighbourhoods, then accuracy (and ROC-AUC for two-class tasks) on the validation and test
// nodes.
#pragma once

#include <limits>
#include <vector>

#include "dist/feature_exchange.h"
#include "dist/process_group.h"
#include "io/dataset.h"
#include "loader/loader.h"
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
// are combined, so every rank returns the same result. With an `exchange` (a feature table
// sharded over the group's ranks), layer 0's input rows come from it, one exchange per rank.
EvalResult evaluate(GnnModel& model, const Dataset& dataset, const Split& split,
                    ProcessGroup* group = nullptr, FeatureExchange* exchange = nullptr);

// The same by sampled neighbourhoods, for a partitioned structure (whose full neighbourhoods
// no rank holds): each rank's share of the nodes in batches of the loader's size, drawn by its
// sampler with its fan-outs (streams from `seed`), their rows from `exchange` or the loader's
// table, on the CPU. Every rank takes the same number of batches, since its hops and
// exchanges are collectives. An estimate: the neighbourhoods are sampled, not whole.
EvalResult evaluate_sampled(GnnModel& model, const MinibatchLoader& loader, const Dataset& dataset,
                            const Split& split, ProcessGroup* group, FeatureExchange* exchange,
                            uint64_t seed);

}  // namespace directgnn
