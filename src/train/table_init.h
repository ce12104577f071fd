// The starting rows of learnable embedding tables drawn from the graph's structure: a node's
// first row is the mean of its neighbours' rows, repeated over a few hops, so that nodes close in
// the graph start close, and rows that training never reaches still say where their node sits.
// FastRP's idea (random projections smoothed over the adjacency), and the average-of-neighbours
// inputs of OGB-LSC MAG240M's baselines, in one rule for every node type. Internal to train/.
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <vector>

#include "graph/hetero_graph.h"

namespace directgnn {

// `start` holds, per type of `graph`, a float32 [count, dim] tensor or an undefined one. A type
// without a start takes part, when it has features, through a random projection of them to
// `dim` (drawn from `seed`, rows scaled to norm 1), held fixed: the rows of the types given a
// start are what moves. Each of `hops` rounds replaces such a row by the mean of the rows of its
// in-neighbours over every relation into its type, scaled to norm 1; a row without
// in-neighbours keeps its value. Returns the rows of the types given a start, undefined for the
// others. The same result for any thread count. `progress` draws a progress line of the hops
// on a terminal.
std::vector<at::Tensor> smoothed_rows(const HeteroDataset& graph, std::vector<at::Tensor> start,
                                      int64_t hops, uint64_t seed, bool progress = false);

}  // namespace directgnn
