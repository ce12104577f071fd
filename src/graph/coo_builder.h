// Builds a CsrGraph from an edge list (COO) by destination: edge (src, dst) puts src in dst's
// neighbour list, the nodes dst receives messages from (PyG's source_to_target flow;
// docs/formats.md). Optionally adds the reverse of every edge, drops duplicate edges, and
// optionally drops self-loops. Rows come out sorted, so the result is the same whatever the
// thread count.
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
// source in errors (an out-of-range id names the edge and the value). Pass int64 arrays with
// std::move to let the builder free them halfway: peak memory is then the edge list plus the
// scattered rows, never the edge list plus both CSR arrays.
CsrGraph build_csr_from_coo(at::Tensor src, at::Tensor dst, int64_t num_nodes,
                            const CooBuildOptions& options, const std::string& where);

}  // namespace directgnn
