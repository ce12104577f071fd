// Compressed sparse row graph: row v lists the nodes v receives messages from. An edge
// (src, dst) puts src in dst's list (PyG's source_to_target flow; as a PyG user reads it, the
// graph's CSC); an undirected graph stores both directions. `indptr` is int64 [N+1] on the CPU;
// `indices` is int32 when N < 2^31 (the usual case: half the memory of int64) and int64 otherwise.
// `weights`, when defined, gives each edge a weight in the same order (weighted sampling draws
// a neighbour with probability proportional to its edge's weight).
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <string>

namespace directgnn {

struct CsrGraph {
  at::Tensor indptr;   // int64 [num_nodes + 1], indptr[0] = 0, non-decreasing
  at::Tensor indices;  // int32 or int64 [num_edges], each in [0, num_nodes)
  at::Tensor weights;  // optional: float32 [num_edges], each finite and >= 0

  int64_t num_nodes() const { return indptr.numel() - 1; }
  int64_t num_edges() const { return indices.numel(); }
  // Degree of every node as int64 [N].
  at::Tensor degrees() const;
};

// The index dtype for a graph of `num_nodes` nodes.
at::ScalarType index_type_for(int64_t num_nodes);

// Checks every invariant above and throws naming `where`, the field and the first bad entry.
// Converts an int64 `indices` of a small graph to int32, and other floating weights to float32.
// `num_src` >= 0 bounds the indices instead of the row count (a relation between two node
// types: rows are destinations, indices sources).
void validate_csr(CsrGraph& graph, const std::string& where, int64_t num_src = -1);

// The weights' checks alone (validate_csr runs them when weights are defined).
void validate_edge_weights(CsrGraph& graph, const std::string& where);

}  // namespace directgnn
