// Train / validation / test node sets: the dataset's own split when it ships one, otherwise
// the usual seeded protocol for citation graphs (Shchur et al. 2018): 20 labelled nodes per
// class for training, 500 for validation and 1000 for testing.
#pragma once

#include <cstdint>
#include <string>

#include "io/dataset.h"

namespace directgnn {

struct ChosenSplit {
  Split split;
  std::string description;  // one line for the user, stating where the split came from
};

// `index` picks one of the dataset's splits (error when out of range); `seed` drives the
// random split when the dataset has none.
ChosenSplit choose_split(const Dataset& dataset, int64_t index, uint64_t seed);

// Link prediction's split: the dataset's stored one (its graph is the message-passing graph)
// or, when it stores none, random_link_split's 85/5/10 with one shared negative pair per
// validation and test positive, from `seed`.
struct ChosenLinkSplit {
  CsrGraph graph;  // message passing
  LinkSplit split;
  std::string description;  // one line for the user, stating where the split came from
};
ChosenLinkSplit choose_link_split(const Dataset& dataset, uint64_t seed);

// 20 per class / 500 / 1000 (scaled down, and said so, when too few nodes are labelled).
ChosenSplit random_split(const at::Tensor& labels, int64_t num_classes, uint64_t seed);
// The same, for a renumbered dataset (node_ids[v]: the original id of stored node v): drawn by
// original ids, so it picks the nodes it picks before renumbering, returned as stored ids.
ChosenSplit random_split(const at::Tensor& labels, int64_t num_classes, uint64_t seed,
                         const at::Tensor& node_ids);

}  // namespace directgnn
