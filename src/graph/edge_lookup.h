// Edge membership: is src -> dst an edge of a CSR graph (src in dst's list)? A binary search
// in dst's row; the rows are searched in place when they come sorted (as build_csr_from_coo
// writes them), else in a sorted copy of `indices`.
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>

#include "graph/csr_graph.h"

namespace directgnn {

class EdgeLookup {
 public:
  explicit EdgeLookup(const CsrGraph& graph);
  // src and dst in [0, num_nodes).
  bool contains(int64_t src, int64_t dst) const;
  // Either direction: for an undirected graph's pairs.
  bool connects(int64_t a, int64_t b) const { return contains(a, b) || contains(b, a); }
  int64_t num_nodes() const { return num_nodes_; }
  bool sorted_in_place() const { return in_place_; }
  // The rows searched: the graph's indptr, and its indices with every row sorted.
  const at::Tensor& indptr() const { return indptr_; }
  const at::Tensor& sorted_indices() const { return indices_; }

 private:
  at::Tensor indptr_, indices_;  // indices_: the graph's, or the row-sorted copy
  const int64_t* ptr_ = nullptr;
  const int32_t* ids32_ = nullptr;
  const int64_t* ids64_ = nullptr;
  int64_t num_nodes_ = 0;
  bool in_place_ = true;
};

}  // namespace directgnn
