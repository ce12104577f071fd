#include "train/evaluate.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <algorithm>

#include "core/random.h"
#include "directgnn/error.h"
#include "train/metrics.h"

namespace directgnn {

namespace {

// The nodes an evaluation computes (the validation nodes, then the test nodes) and this rank's
// equal share of them, [lo, hi).
struct Targets {
  at::Tensor ids;
  int64_t lo = 0, hi = 0;
};
Targets targets_of(const Split& split, ProcessGroup* group) {
  Targets t;
  t.ids = at::cat({split.val, split.test});
  const int64_t n = t.ids.numel();
  const int rank = group != nullptr ? group->rank() : 0;
  const int ranks = group != nullptr ? group->size() : 1;
  t.lo = n * rank / ranks;
  t.hi = n * (rank + 1) / ranks;
  return t;
}

// The metrics of `logits` (rows in Targets::ids order, summed over the ranks).
EvalResult results_of(const at::Tensor& logits, const Dataset& dataset, const Split& split,
                      const at::Tensor& targets) {
  const at::Tensor labels = dataset.labels.index_select(0, targets);
  const int64_t n_val = split.val.numel(), n = targets.numel();
  const at::Tensor val = at::arange(0, n_val, at::kLong);
  const at::Tensor test = at::arange(n_val, n, at::kLong);
  EvalResult r;
  r.val_acc = accuracy(logits, labels, val);
  r.test_acc = accuracy(logits, labels, test);
  r.test_class_acc = class_accuracy(logits, labels, test, dataset.num_classes);
  if (dataset.num_classes == 2) {
    // The log-odds of class 1 rank nodes exactly as its softmax probability does.
    const at::Tensor score = logits.select(1, 1) - logits.select(1, 0);
    r.val_roc_auc = roc_auc(score.index_select(0, val), labels.index_select(0, val));
    r.test_roc_auc = roc_auc(score.index_select(0, test), labels.index_select(0, test));
  }
  return r;
}

}  // namespace

EvalResult evaluate(GnnModel& model, const Dataset& dataset, const Split& split,
                    ProcessGroup* group, FeatureExchange* exchange) {
  // Only the validation and test nodes (and the neighbourhoods they read) are computed, an
  // equal share on each rank; the logits are summed into place across ranks.
  DGNN_CHECK(dataset.structure_part < 0,
             "evaluation: this rank holds one part's edges only; full neighbourhoods need the "
             "whole graph (evaluate_sampled samples them)");
  const Targets t = targets_of(split, group);
  const at::Tensor& targets = t.ids;
  const int64_t n = targets.numel(), lo = t.lo, hi = t.hi;
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
  return results_of(logits[0], dataset, split, targets);
}

PartEvaluator::PartEvaluator(const Dataset& ds, ProcessGroup& group, FeatureExchange* features,
                             at::Tensor in_degree, int64_t chunk)
    : ds_(ds),
      group_(group),
      features_(features),
      degree_(in_degree.to(at::kFloat)),
      chunk_(chunk) {
  const std::vector<int64_t>& offsets = ds.partition.offsets;
  DGNN_CHECK(ds.structure_part == group.rank() && ds.partition.parts() == group.size(),
             "evaluation over parts: rank ", group.rank(), " of ", group.size(),
             " must hold its own part's edges");
  first_ = offsets[group.rank()];
  rows_ = offsets[group.rank() + 1] - first_;
  int64_t largest = 0;
  for (size_t k = 0; k + 1 < offsets.size(); ++k) {
    largest = std::max(largest, offsets[k + 1] - offsets[k]);
  }
  steps_ = (largest + chunk_ - 1) / chunk_;
}

PartEvaluator::~PartEvaluator() = default;

at::Tensor PartEvaluator::inputs(size_t l, const at::Tensor& ids) {
  if (l > 0) return layers_->gather(ids);
  if (features_ != nullptr) return features_->gather(ids);
  return ds_.features.index_select(0, ids);
}

at::Tensor PartEvaluator::layer(GnnModel& model, size_t l) {
  const bool last = l + 1 == model.num_layers();
  const int64_t dim = last ? model.config().num_classes : model.config().hidden_width();
  at::Tensor out = at::empty({rows_, dim}, at::kFloat);
  const CsrGraph& g = ds_.graph;
  const int64_t* indptr = g.indptr.data_ptr<int64_t>();
  for (int64_t step = 0; step < steps_; ++step) {
    const int64_t lo = std::min(step * chunk_, rows_), hi = std::min(lo + chunk_, rows_);
    const int64_t begin = first_ + lo, end = first_ + hi;
    const at::Tensor nodes = at::arange(begin, end, at::kLong);
    const at::Tensor neighbours =
        g.indices.narrow(0, indptr[begin], indptr[end] - indptr[begin]).to(at::kLong);
    // The sources and the chunk's own nodes, each once, in id order: one fetch a chunk.
    const at::Tensor ids = std::get<0>(at::_unique(at::cat({neighbours, nodes}), /*sorted=*/true));
    const at::Tensor x = inputs(l, ids).to(at::kFloat);
    if (hi == lo) continue;  // this part has no more nodes; the others' fetches needed it
    Block block;
    block.num_dst = hi - lo;
    block.num_src = ids.numel();
    block.indptr = g.indptr.narrow(0, begin, hi - lo + 1) - indptr[begin];
    block.indices = at::searchsorted(ids, neighbours);
    block.src_degree = degree_.index_select(0, ids);
    block.dst_degree = degree_.narrow(0, begin, hi - lo);
    const at::Tensor x_dst = x.index_select(0, at::searchsorted(ids, nodes));
    out.narrow(0, lo, hi - lo).copy_(model.infer_layer(l, block, x, x_dst));
  }
  return out;
}

void PartEvaluator::serve(const at::Tensor& outputs) {
  if (layers_ == nullptr) {
    layers_ = std::make_unique<FeatureExchange>(ds_.partition.offsets, FeatureStore(outputs),
                                                group_.subgroup("layers", true));
  } else {
    layers_->serve(FeatureStore(outputs));
  }
}

EvalResult PartEvaluator::evaluate(GnnModel& model, const Split& split) {
  torch::NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  at::Tensor h;
  for (size_t l = 0; l < model.num_layers(); ++l) {
    h = layer(model, l);
    if (l + 1 < model.num_layers()) serve(h);
  }
  model.train(was_training);
  // Each rank places the logits of the targets it owns; the sum over the ranks has them all.
  const at::Tensor targets = at::cat({split.val, split.test}).to(at::kLong);
  const at::Tensor mine =
      at::nonzero(targets.ge(first_).logical_and(targets.lt(first_ + rows_))).squeeze(1);
  std::vector<at::Tensor> logits{at::zeros({targets.numel(), ds_.num_classes}, at::kFloat)};
  logits[0].index_copy_(0, mine, h.index_select(0, targets.index_select(0, mine) - first_));
  group_.all_reduce_sum(logits);
  return results_of(logits[0], ds_, split, targets);
}

}  // namespace directgnn
