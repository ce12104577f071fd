// The starting rows of learnable embedding tables drawn from the graph's structure: a node's
// first row is the mean of its neighbours' rows, repeated over a few hops, so that nodes close in
// the graph start close, and rows that training never reaches still say where their node sits.
// FastRP's idea (random projections smoothed over the adjacency), and the average-of-neighbours
// inputs of OGB-LSC MAG240M's baselines, in one rule for every node type. Internal to train/.
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "graph/hetero_graph.h"

namespace directgnn {

// `tables` holds, per type of `graph`, a float32 [count, dim] contiguous tensor or an undefined
// one; the defined ones are smoothed in place. A type without a table takes part, when it has
// features, through a random projection of them to `dim` (drawn from `seed`, rows scaled to norm
// 1), held fixed: the tables are what moves. Each of `hops` rounds replaces a table's row by the
// mean of the rows of its in-neighbours over every relation into its type, scaled to norm 1; a
// row without in-neighbours keeps its value. Besides the tables it holds one hop's new rows
// (as much memory again as the tables) and the projections. The same result for any thread
// count. `progress` draws a progress line of the hops on a terminal.
// A featured type that holds one part's rows only (NodeType::feature_part, a rank of a sharded
// run) projects those rows into its part's range of a zero table, and `sum_over_ranks` (a
// collective, called for such types in type order) adds the other ranks' parts in place.
using SumOverRanks = std::function<void(at::Tensor&)>;
void smooth_rows_in_place(const HeteroDataset& graph, const std::vector<at::Tensor>& tables,
                          int64_t hops, uint64_t seed, bool progress = false,
                          const SumOverRanks& sum_over_ranks = {});

// The same on copies of `start` (any float dtype): the smoothed rows of the types given a start,
// undefined for the others.
std::vector<at::Tensor> smoothed_rows(const HeteroDataset& graph, std::vector<at::Tensor> start,
                                      int64_t hops, uint64_t seed, bool progress = false);

}  // namespace directgnn
