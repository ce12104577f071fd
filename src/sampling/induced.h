// The induced subgraph of a set of nodes: every edge of the graph between two of them (PyG's
// subgraph_type="induced", torch-sparse's undirected neighbour sampling). The node set comes from
// the sampler; this adds the edges among its nodes that the draw did not pick.
#pragma once

#include <ATen/Tensor.h>

#include "graph/csr_graph.h"

namespace directgnn {

struct InducedEdges {
  at::Tensor src;    // int64 [E']: local id (position in `nodes`) of the source
  at::Tensor dst;    // int64 [E']: local id of the destination, non-decreasing
  at::Tensor edges;  // int64 [E']: each edge's position in the graph's CSR (its edge id)
};

// `nodes`: distinct int64 ids in range (throws naming the first that is not). Edges come grouped
// by destination in the order of `nodes`, each group in CSR order. Parallel over destinations;
// the result does not depend on the thread count.
InducedEdges induced_subgraph(const CsrGraph& graph, const at::Tensor& nodes);

}  // namespace directgnn
