#include "graph/splits.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "core/random.h"
#include "directgnn/error.h"
#include "graph/node_order.h"

namespace directgnn {
namespace {

constexpr int64_t kPerClass = 20, kVal = 500, kTest = 1000;

at::Tensor to_tensor(std::vector<int64_t> ids) {
  std::sort(ids.begin(), ids.end());
  return at::tensor(ids, at::kLong);
}

}  // namespace

ChosenSplit random_split(const at::Tensor& labels, int64_t num_classes, uint64_t seed) {
  const int64_t* lab = labels.data_ptr<int64_t>();
  std::vector<int64_t> order(labels.numel());
  std::iota(order.begin(), order.end(), 0);
  SplitRng rng(mix64(seed, 0x5b17));
  for (int64_t i = static_cast<int64_t>(order.size()) - 1; i > 0; --i) {
    std::swap(order[i], order[rng.below(i + 1)]);
  }
  std::vector<int64_t> taken(num_classes, 0), train, rest;
  for (int64_t v : order) {
    if (lab[v] < 0) continue;
    if (taken[lab[v]] < kPerClass) {
      ++taken[lab[v]];
      train.push_back(v);
    } else {
      rest.push_back(v);
    }
  }
  int64_t val = kVal, test = kTest;
  if (static_cast<int64_t>(rest.size()) < kVal + kTest) {
    val = static_cast<int64_t>(rest.size()) / 3;
    test = static_cast<int64_t>(rest.size()) - val;
  }
  DGNN_CHECK(!train.empty() && val > 0 && test > 0,
             "too few labelled nodes for a train/validation/test split (",
             train.size() + rest.size(), " labelled); label more nodes or supply a split");
  ChosenSplit out;
  out.split.train = to_tensor(train);
  out.split.val = to_tensor({rest.begin(), rest.begin() + val});
  out.split.test = to_tensor({rest.begin() + val, rest.begin() + val + test});
  out.description = "random split (seed " + std::to_string(seed) +
                    "): " + std::to_string(train.size()) + " train (" + std::to_string(kPerClass) +
                    " per class), " + std::to_string(val) + " validation, " + std::to_string(test) +
                    " test nodes";
  return out;
}

ChosenSplit random_split(const at::Tensor& labels, int64_t num_classes, uint64_t seed,
                         const at::Tensor& node_ids) {
  if (!node_ids.defined()) return random_split(labels, num_classes, seed);
  at::Tensor original = at::empty_like(labels);
  original.index_put_({node_ids}, labels);
  ChosenSplit out = random_split(original, num_classes, seed);
  const at::Tensor stored = inverse_order(node_ids);
  for (at::Tensor* ids : {&out.split.train, &out.split.val, &out.split.test}) {
    *ids = stored.index_select(0, *ids);
  }
  out.description += " (drawn by original node ids)";
  return out;
}

ChosenSplit choose_split(const Dataset& dataset, int64_t index, uint64_t seed) {
  require_labels(dataset);
  if (dataset.splits.empty()) {
    DGNN_CHECK_ARG(index == 0, "split", dataset.source, " has no stored splits, so split ", index,
                   " does not exist (leave split at 0 to use a seeded random split)");
    return random_split(dataset.labels, dataset.num_classes, seed, dataset.node_ids);
  }
  const auto count = static_cast<int64_t>(dataset.splits.size());
  DGNN_CHECK_ARG(index >= 0 && index < count, "split", index, " is out of range; ", dataset.source,
                 " has ", count, " split(s): use 0..", count - 1);
  ChosenSplit out;
  out.split = dataset.splits[index];
  out.description = "dataset split " + std::to_string(index) + " of " + std::to_string(count) +
                    ": " + std::to_string(out.split.train.numel()) + " train, " +
                    std::to_string(out.split.val.numel()) + " validation, " +
                    std::to_string(out.split.test.numel()) + " test nodes";
  return out;
}

ChosenLinkSplit choose_link_split(const Dataset& dataset, uint64_t seed) {
  ChosenLinkSplit out;
  if (dataset.link.defined()) {
    out.graph = dataset.graph;
    out.split = dataset.link;
    out.description = "the dataset's link split";
  } else {
    LinkSplitOptions o;
    o.seed = seed;
    RandomLinkSplit random = random_link_split(dataset.graph, dataset.directed, o);
    out.graph = std::move(random.graph);
    out.split = std::move(random.split);
    out.description = "random link split 85/5/10 (seed " + std::to_string(seed) + ")";
  }
  const LinkSplit& s = out.split;
  out.description += ": " + std::to_string(s.train.size(0)) + " train, " +
                     std::to_string(s.val.size(0)) + " validation, " +
                     std::to_string(s.test.size(0)) + " test edges";
  return out;
}

}  // namespace directgnn
