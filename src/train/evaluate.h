// Evaluation of a model on a split: full-neighbourhood, layer-wise inference of the validation
// and test nodes (each layer computing only the nodes the next reads), or sampled
// neighbourhoods, then accuracy (and ROC-AUC for two-class tasks) on the validation and test
// nodes.
#pragma once

#include <limits>
#include <memory>
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

// Exact layer-wise evaluation over a partitioned structure, whose full neighbourhoods no rank
// holds (DistDGL's layer-wise inference): each layer, every rank computes its own part's nodes
// from their in-edges, which it holds, in chunks; the rows of the previous layer it needs come
// from their owners through an exchange (layer 0's from the feature exchange, or the whole
// table when the rank holds it), the outputs it computes serving the next layer. Every rank
// takes the same number of chunks (those of the largest part), since every fetch is a
// collective. The logits of the validation and test nodes are summed into place over the ranks,
// so every rank returns the same result; with the same model it equals evaluate()'s on the
// whole graph up to the order of floating-point sums.
class PartEvaluator {
 public:
  // `ds` holds its part's edges (Dataset::structure_part); `in_degree` is the whole graph's
  // (train/sharding.h, whole_in_degrees); `features` is the run's feature exchange, or null when
  // every rank holds the whole table. `group` makes the layers' exchange (a subgroup of its
  // own). All outlive the evaluator.
  PartEvaluator(const Dataset& ds, ProcessGroup& group, FeatureExchange* features,
                at::Tensor in_degree, int64_t chunk = 65536);
  ~PartEvaluator();
  EvalResult evaluate(GnnModel& model, const Split& split);

 private:
  // Layer l's input rows of the sorted global `ids` (a collective unless layer 0 reads a whole
  // table here).
  at::Tensor inputs(size_t l, const at::Tensor& ids);
  // Layer l's outputs for this part's nodes.
  at::Tensor layer(GnnModel& model, size_t l);
  // The outputs of a layer, served to the others for the next.
  void serve(const at::Tensor& outputs);

  const Dataset& ds_;
  ProcessGroup& group_;
  FeatureExchange* features_;
  at::Tensor degree_;  // float32, the whole graph's in-degrees
  int64_t chunk_, first_ = 0, rows_ = 0, steps_ = 0;
  std::unique_ptr<FeatureExchange> layers_;
};

}  // namespace directgnn
