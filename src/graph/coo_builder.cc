#include "graph/coo_builder.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>

#include "core/parallel.h"
#include "directgnn/error.h"

namespace directgnn {
namespace {

// Edge e goes in row rows_t[e] and lists cols_t[e] (with symmetrize, also the reverse).
// Releases `rows_t` and `cols_t` once the edges are scattered into rows, so a caller that
// handed over its only reference never holds the edge list and both CSR arrays at once.
template <typename Id>
CsrGraph build(at::Tensor& rows_t, at::Tensor& cols_t, int64_t n, const CooBuildOptions& opt) {
  const int64_t* src = rows_t.data_ptr<int64_t>();
  const int64_t* dst = cols_t.data_ptr<int64_t>();
  const int64_t m = rows_t.numel();
  const bool sym = opt.symmetrize;
  const bool drop_loops = opt.remove_self_loops;
  // Pass 1: row lengths before de-duplication.
  at::Tensor counts_t = at::zeros({n + 1}, at::kLong);
  int64_t* counts = counts_t.data_ptr<int64_t>();
  at::parallel_for(0, m, 1 << 15, [&](int64_t begin, int64_t end) {
    for (int64_t e = begin; e < end; ++e) {
      const int64_t u = src[e], v = dst[e];
      if (u == v) {
        if (!drop_loops) __atomic_fetch_add(&counts[u + 1], 1, __ATOMIC_RELAXED);
        continue;
      }
      __atomic_fetch_add(&counts[u + 1], 1, __ATOMIC_RELAXED);
      if (sym) __atomic_fetch_add(&counts[v + 1], 1, __ATOMIC_RELAXED);
    }
  });
  at::Tensor raw_ptr_t = counts_t.cumsum(0);
  const int64_t* raw_ptr = raw_ptr_t.data_ptr<int64_t>();
  const int64_t raw_edges = raw_ptr[n];
  // Pass 2: scatter into rows (order inside a row is arbitrary until sorted below).
  at::Tensor raw_t = at::empty({raw_edges}, c10::CppTypeToScalarType<Id>::value);
  Id* raw = raw_t.data_ptr<Id>();
  at::Tensor cursor_t = raw_ptr_t.narrow(0, 0, n).clone();
  int64_t* cursor = cursor_t.data_ptr<int64_t>();
  at::parallel_for(0, m, 1 << 15, [&](int64_t begin, int64_t end) {
    for (int64_t e = begin; e < end; ++e) {
      const int64_t u = src[e], v = dst[e];
      if (u == v && drop_loops) continue;
      raw[__atomic_fetch_add(&cursor[u], 1, __ATOMIC_RELAXED)] = static_cast<Id>(v);
      if (sym && u != v)
        raw[__atomic_fetch_add(&cursor[v], 1, __ATOMIC_RELAXED)] = static_cast<Id>(u);
    }
  });
  cursor_t = at::Tensor();
  rows_t = at::Tensor();
  cols_t = at::Tensor();
  // Pass 3: sort and de-duplicate every row in place; record the new lengths.
  at::Tensor unique_t = at::zeros({n + 1}, at::kLong);
  int64_t* unique = unique_t.data_ptr<int64_t>();
  at::parallel_for(0, n, 1 << 10, [&](int64_t begin, int64_t end) {
    for (int64_t v = begin; v < end; ++v) {
      Id* first = raw + raw_ptr[v];
      Id* last = raw + raw_ptr[v + 1];
      std::sort(first, last);
      unique[v + 1] = std::unique(first, last) - first;
    }
  });
  CsrGraph graph;
  graph.indptr = unique_t.cumsum(0);
  const int64_t* ptr = graph.indptr.data_ptr<int64_t>();
  graph.indices = at::empty({ptr[n]}, c10::CppTypeToScalarType<Id>::value);
  Id* out = graph.indices.data_ptr<Id>();
  at::parallel_for(0, n, 1 << 10, [&](int64_t begin, int64_t end) {
    for (int64_t v = begin; v < end; ++v) {
      std::copy(raw + raw_ptr[v], raw + raw_ptr[v] + (ptr[v + 1] - ptr[v]), out + ptr[v]);
    }
  });
  return graph;
}

template <typename In>
void check_range(const In* ids, int64_t m, int64_t n, const char* column,
                 const std::string& where) {
  const int64_t bad = first_index_where(
      m, 1 << 16, [&](int64_t e) { return ids[e] < 0 || static_cast<int64_t>(ids[e]) >= n; });
  DGNN_CHECK(bad < 0, where, ": edge ", bad, " has ", column, " node id ",
             bad < 0 ? 0 : static_cast<int64_t>(ids[bad]), ", out of range for ", n,
             " nodes (ids must be in [0, ", n, "))");
}

}  // namespace

CsrGraph build_csr_from_coo(at::Tensor src_in, at::Tensor dst_in, int64_t num_nodes,
                            const CooBuildOptions& options, const std::string& where) {
  DGNN_CHECK(num_nodes > 0, where, ": the graph must have at least one node");
  DGNN_CHECK(src_in.dim() == 1 && dst_in.dim() == 1 && src_in.numel() == dst_in.numel(), where,
             ": source and destination id arrays must be 1-D and of equal length (got ",
             src_in.sizes(), " and ", dst_in.sizes(), ")");
  auto as_ids = [&](at::Tensor t) {
    DGNN_CHECK(t.scalar_type() == at::kInt || t.scalar_type() == at::kLong, where,
               ": edge ids have dtype ", t.scalar_type(), "; use int32 or int64");
    return t.to(at::kLong).contiguous();
  };
  at::Tensor src = as_ids(std::move(src_in)), dst = as_ids(std::move(dst_in));
  const int64_t m = src.numel();
  check_range(src.data_ptr<int64_t>(), m, num_nodes, "source", where);
  check_range(dst.data_ptr<int64_t>(), m, num_nodes, "destination", where);
  // Rows by destination: edge (u, v) puts u in v's list, the nodes v receives messages from.
  if (index_type_for(num_nodes) == at::kInt) return build<int32_t>(dst, src, num_nodes, options);
  return build<int64_t>(dst, src, num_nodes, options);
}

}  // namespace directgnn
