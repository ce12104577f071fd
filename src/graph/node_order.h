// Renumbering a graph's nodes so that rows sampled together lie together on disk
// (`directgnn convert --reorder`). An order is int64 [N] with order[v] = the current id of the
// node that becomes v; its inverse maps a current id to the new one.
//   - degree: by in-degree, largest first (ties by id), so the hot rows share the first blocks.
//   - rcm: reverse Cuthill-McKee over the stored lists, so a node's neighbours get nearby ids.
//   - metis: METIS's k-way parts (graph/partition.h) one after another, so a community's rows
//     lie together; within a part, by in-degree, largest first (ties by id).
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <string>

#include "graph/csr_graph.h"

namespace directgnn {

enum class NodeOrder { kNone, kDegree, kRcm, kMetis };

// How the metis order cuts the graph.
struct MetisOrder {
  int64_t parts = 0;     // 0: metis_order_parts' default
  bool directed = true;  // the stored lists hold one direction of each edge
  uint64_t seed = 0;     // METIS's seed
};

// The parts a metis order of `num_nodes` nodes uses: `requested`, or for 0 one per 16,384
// nodes, at least 2 (at most the node count) and at most 256.
int64_t metis_order_parts(int64_t num_nodes, int64_t requested);

// "none", "degree", "rcm" or "metis".
const char* node_order_name(NodeOrder order);

// The new order of `graph`'s nodes (int64 [N]); kNone gives the identity. `metis` is read for
// kMetis only; METIS's errors (no METIS in this build, too many parts) are thrown as they are.
at::Tensor node_order(const CsrGraph& graph, NodeOrder how, const MetisOrder& metis = {});

// inverse[order[v]] = v.
at::Tensor inverse_order(const at::Tensor& order);

// `graph` renumbered: new row v is the current row order[v], its entries mapped through
// `inverse` and sorted (edge weights follow their edges).
CsrGraph renumber_graph(const CsrGraph& graph, const at::Tensor& order, const at::Tensor& inverse);

// Checks that `ids` (a dataset's node_ids.npy) is a permutation of 0..n-1 (integers, one per
// node, each once) and returns it as int64; throws naming `where` and the first bad entry.
at::Tensor checked_node_ids(const at::Tensor& ids, int64_t n, const std::string& where);

}  // namespace directgnn
