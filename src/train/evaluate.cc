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

EvalResult evaluate_sampled(GnnModel& model, const MinibatchLoader& loader, const Dataset& dataset,
                            const Split& split, ProcessGroup* group, FeatureExchange* exchange,
                            uint64_t seed) {
  torch::NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  const Targets t = targets_of(split, group);
  const int64_t n = t.ids.numel(), ranks = group != nullptr ? group->size() : 1;
  // This rank's nodes, each once (a batch's seeds must be distinct), in batches; every rank
  // takes the batches of the largest share, the smaller ones ending with empty ones.
  const at::Tensor mine = t.ids.narrow(0, t.lo, t.hi - t.lo);
  const at::Tensor unique = std::get<0>(at::_unique(mine));
  const int64_t batch = loader.settings().batch_size;
  const int64_t steps = loader.steps((n + ranks - 1) / ranks);
  at::Tensor out = at::empty({unique.numel(), dataset.num_classes}, at::kFloat);
  for (int64_t step = 0; step < steps; ++step) {
    const int64_t start = std::min(step * batch, unique.numel());
    const int64_t len = std::min(batch, unique.numel() - start);
    const MiniBatch b = loader.sample(unique.narrow(0, start, len), mix64(seed, step));
    const at::Tensor ids = b.input_nodes.to(at::kCPU).to(at::kLong);
    const at::Tensor x = exchange != nullptr ? exchange->gather(ids) : loader.store().gather(ids);
    if (len > 0) out.narrow(0, start, len).copy_(model.forward(b.blocks, x, at::Tensor()));
  }
  std::vector<at::Tensor> logits{at::zeros({n, dataset.num_classes}, at::kFloat)};
  if (mine.numel() > 0) {
    logits[0]
        .narrow(0, t.lo, mine.numel())
        .copy_(out.index_select(0, at::searchsorted(unique, mine)));
  }
  if (group != nullptr) group->all_reduce_sum(logits);
  model.train(was_training);
  return results_of(logits[0], dataset, split, t.ids);
}

}  // namespace directgnn
