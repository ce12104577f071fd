// A dataset renumbered by `directgnn convert --reorder` (graph/node_order.h), and the map back:
// node_ids[v] is the original id of stored node v. Everything stored (graph, features, labels,
// node and link splits) is in the new order; what a user reads back (embeddings, the default
// split's choice, Python's ids) goes through the map.
#pragma once

#include <ATen/Tensor.h>

#include <string>

#include "graph/node_order.h"
#include "io/dataset.h"

namespace directgnn {

// Renumbers `ds` (graph, labels, node splits, link split) in the order `how` and composes
// ds.node_ids with it (a dataset renumbered before keeps its original ids). The features are
// left as they are: store them through permuted_features(ds.features, order, dtype).
// Returns the order (order[v] = the id in `ds` before the call of the node that becomes v).
// For kMetis, `metis` gives the parts and seed (its `directed` is the dataset's).
at::Tensor reorder_dataset(Dataset& ds, NodeOrder how, MetisOrder metis = {});

// The same with an order given: `order` (int64 [N], a permutation) names the node that becomes
// each id, and `name` (how it was made: degree, rcm, metis, random) goes to ds.node_order.
void renumber_dataset(Dataset& ds, const at::Tensor& order, const std::string& name);

// The rows of `x` in `order`, stored as `dtype`, a chunk at a time (never whole in memory).
FeatureStream permuted_features(const at::Tensor& x, const at::Tensor& order, at::ScalarType dtype);

// The stored row of each original id: position o holds the stored id of original node o
// (the identity when the dataset was not renumbered).
at::Tensor stored_of_original(const Dataset& ds);

}  // namespace directgnn
