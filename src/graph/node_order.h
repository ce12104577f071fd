// Renumbering a graph's nodes so that rows sampled together lie together on disk
// (`directgnn convert --reorder`). An order is int64 [N] with order[v] = the current id of the
// node that becomes v; its inverse maps a current id to the new one.
//   - degree: by in-degree, largest first (ties by id), so the hot rows share the first blocks.
//   - rcm: reverse Cuthill-McKee over the stored lists, so a node's neighbours get nearby ids.
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <string>

#include "graph/csr_graph.h"

namespace directgnn {

enum class NodeOrder { kNone, kDegree, kRcm };

// "none", "degree" or "rcm".
const char* node_order_name(NodeOrder order);

// The new order of `graph`'s nodes (int64 [N]); kNone gives the identity.
at::Tensor node_order(const CsrGraph& graph, NodeOrder how);

// inverse[order[v]] = v.
at::Tensor inverse_order(const at::Tensor& order);

// `graph` renumbered: new row v is the current row order[v], its entries mapped through
// `inverse` and sorted (edge weights follow their edges).
CsrGraph renumber_graph(const CsrGraph& graph, const at::Tensor& order, const at::Tensor& inverse);

// Checks that `ids` (a dataset's node_ids.npy) is a permutation of 0..n-1 (integers, one per
// node, each once) and returns it as int64; throws naming `where` and the first bad entry.
at::Tensor checked_node_ids(const at::Tensor& ids, int64_t n, const std::string& where);

}  // namespace directgnn
