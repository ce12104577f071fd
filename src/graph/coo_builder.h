// Builds a CsrGraph from an edge list (COO): optionally adds the reverse of every edge,
// drops duplicate edges, and optionally drops self-loops. Rows come out sorted, so the
// result is the same whatever the thread count. Holds one extra copy of the edge array.
#pragma once

#include <ATen/Tensor.h>

#include <string>

#include "graph/csr_graph.h"

namespace directgnn {

struct CooBuildOptions {
  bool symmetrize = true;
  bool remove_self_loops = true;
};

// `src` and `dst` are int32 or int64 [M] with ids in [0, num_nodes); `where` names the
// source in errors (an out-of-range id names the edge and the value).
CsrGraph build_csr_from_coo(const at::Tensor& src, const at::Tensor& dst, int64_t num_nodes,
                            const CooBuildOptions& options, const std::string& where);

}  // namespace directgnn
