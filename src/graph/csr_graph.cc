#include "graph/csr_graph.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <limits>

#include "core/parallel.h"
#include "directgnn/error.h"

namespace directgnn {

at::ScalarType index_type_for(int64_t num_nodes) {
  return num_nodes < std::numeric_limits<int32_t>::max() ? at::kInt : at::kLong;
}

at::Tensor CsrGraph::degrees() const {
  return indptr.narrow(0, 1, num_nodes()) - indptr.narrow(0, 0, num_nodes());
}

void validate_csr(CsrGraph& graph, const std::string& where, int64_t num_src) {
  DGNN_CHECK(graph.indptr.defined() && graph.indptr.dim() == 1 && graph.indptr.numel() >= 1, where,
             ": indptr must be a 1-D array of num_nodes + 1 entries");
  DGNN_CHECK(graph.indptr.scalar_type() == at::kLong || graph.indptr.scalar_type() == at::kInt,
             where, ": indptr has dtype ", graph.indptr.scalar_type(),
             "; it must be int64 (or int32, widened on load)");
  if (graph.indptr.scalar_type() != at::kLong) graph.indptr = graph.indptr.to(at::kLong);
  graph.indptr = graph.indptr.contiguous();
  DGNN_CHECK(graph.indices.defined() && graph.indices.dim() == 1, where,
             ": indices must be a 1-D array");
  DGNN_CHECK(graph.indices.scalar_type() == at::kLong || graph.indices.scalar_type() == at::kInt,
             where, ": indices has dtype ", graph.indices.scalar_type(), "; use int32 or int64");
  const int64_t n = graph.num_nodes();
  const int64_t* ptr = graph.indptr.data_ptr<int64_t>();
  DGNN_CHECK(ptr[0] == 0, where, ": indptr[0] is ", ptr[0], " but must be 0");
  const int64_t bad_ptr =
      first_index_where(n, 1 << 16, [&](int64_t i) { return ptr[i + 1] < ptr[i]; });
  DGNN_CHECK(bad_ptr < 0, where, ": indptr is not monotone: indptr[", bad_ptr + 1,
             "] = ", bad_ptr < 0 ? 0 : ptr[bad_ptr + 1], " < indptr[", bad_ptr,
             "] = ", bad_ptr < 0 ? 0 : ptr[bad_ptr]);
  DGNN_CHECK(ptr[n] == graph.num_edges(), where, ": indptr[-1] = ", ptr[n], " but indices holds ",
             graph.num_edges(), " entries; the two arrays must match");
  graph.indices = graph.indices.contiguous();
  const int64_t bound = num_src >= 0 ? num_src : n;
  auto check_ids = [&](auto* ids) {
    const int64_t bad = first_index_where(graph.num_edges(), 1 << 16, [&](int64_t e) {
      return ids[e] < 0 || static_cast<int64_t>(ids[e]) >= bound;
    });
    DGNN_CHECK(bad < 0, where, ": indices[", bad,
               "] = ", bad < 0 ? 0 : static_cast<int64_t>(ids[bad]), " is out of range for ", bound,
               num_src >= 0 ? " source nodes; a relation's source ids must be below its source "
                              "type's node count (are source and destination swapped?)"
                            : " nodes");
  };
  if (graph.indices.scalar_type() == at::kInt) {
    check_ids(graph.indices.data_ptr<int32_t>());
  } else {
    check_ids(graph.indices.data_ptr<int64_t>());
    if (index_type_for(std::max(n, bound)) == at::kInt) graph.indices = graph.indices.to(at::kInt);
  }
  if (graph.weights.defined()) validate_edge_weights(graph, where);
}

void validate_edge_weights(CsrGraph& graph, const std::string& where) {
  at::Tensor& w = graph.weights;
  DGNN_CHECK(w.dim() == 1 && w.numel() == graph.num_edges(), where, ": edge weights have shape ",
             w.sizes(), "; give one weight per edge, [", graph.num_edges(), "]");
  DGNN_CHECK(at::isFloatingType(w.scalar_type()), where, ": edge weights have dtype ",
             w.scalar_type(), "; use float32");
  if (w.scalar_type() != at::kFloat) w = w.to(at::kFloat);
  w = w.cpu().contiguous();
  const float* p = w.data_ptr<float>();
  const int64_t bad = first_index_where(w.numel(), 1 << 16, [&](int64_t e) {
    return !(p[e] >= 0.0f && p[e] <= std::numeric_limits<float>::max());
  });
  DGNN_CHECK(bad < 0, where, ": edge weight ", bad, " is ", bad < 0 ? 0.0f : p[bad],
             "; weights must be finite and >= 0 (an edge of weight 0 is drawn only when a node "
             "keeps all its neighbours)");
}

}  // namespace directgnn
