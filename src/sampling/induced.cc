#include "sampling/induced.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <vector>

#include "directgnn/error.h"

namespace directgnn {
namespace {

// The local id of global node v, by binary search in `sorted` (global ids, ascending) and
// `order` (their local ids); -1 when v is not in the set.
inline int64_t local_of(const int64_t* sorted, const int64_t* order, int64_t n, int64_t v) {
  const int64_t* it = std::lower_bound(sorted, sorted + n, v);
  return it != sorted + n && *it == v ? order[it - sorted] : -1;
}

template <typename Id>
InducedEdges collect(const CsrGraph& graph, const Id* indices, const at::Tensor& nodes,
                     const at::Tensor& sorted, const at::Tensor& order) {
  const int64_t n = nodes.numel();
  const int64_t* v = nodes.data_ptr<int64_t>();
  const int64_t* s = sorted.data_ptr<int64_t>();
  const int64_t* o = order.data_ptr<int64_t>();
  const int64_t* indptr = graph.indptr.data_ptr<int64_t>();
  std::vector<int64_t> offsets(static_cast<size_t>(n) + 1, 0);
  at::parallel_for(0, n, 64, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      int64_t count = 0;
      for (int64_t e = indptr[v[i]]; e < indptr[v[i] + 1]; ++e) {
        count += local_of(s, o, n, static_cast<int64_t>(indices[e])) >= 0;
      }
      offsets[i + 1] = count;
    }
  });
  for (int64_t i = 0; i < n; ++i) offsets[i + 1] += offsets[i];
  InducedEdges out{at::empty({offsets[n]}, at::kLong), at::empty({offsets[n]}, at::kLong),
                   at::empty({offsets[n]}, at::kLong)};
  int64_t* src = out.src.data_ptr<int64_t>();
  int64_t* dst = out.dst.data_ptr<int64_t>();
  int64_t* ids = out.edges.data_ptr<int64_t>();
  at::parallel_for(0, n, 64, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      int64_t k = offsets[i];
      for (int64_t e = indptr[v[i]]; e < indptr[v[i] + 1]; ++e) {
        const int64_t local = local_of(s, o, n, static_cast<int64_t>(indices[e]));
        if (local < 0) continue;
        src[k] = local;
        dst[k] = i;
        ids[k++] = e;
      }
    }
  });
  return out;
}

}  // namespace

InducedEdges induced_subgraph(const CsrGraph& graph, const at::Tensor& nodes_in) {
  DGNN_CHECK_ARG(nodes_in.dim() == 1, "nodes", "must be a 1-D tensor of node ids");
  const at::Tensor nodes = nodes_in.to(at::kLong).cpu().contiguous();
  const auto [sorted, order] = nodes.sort();
  const int64_t n = nodes.numel(), num_nodes = graph.num_nodes();
  if (n > 0) {
    const int64_t low = sorted[0].item<int64_t>(), high = sorted[-1].item<int64_t>();
    DGNN_CHECK_INDEX(low >= 0 && high < num_nodes, "node ", low < 0 ? low : high,
                     " is out of range for ", num_nodes, " nodes");
    const at::Tensor repeated = sorted.slice(0, 1).eq(sorted.slice(0, 0, -1)).nonzero();
    DGNN_CHECK_ARG(repeated.numel() == 0, "nodes", "node ",
                   repeated.numel() > 0 ? sorted[repeated[0][0]].item<int64_t>() : 0,
                   " appears twice; the nodes must be distinct");
  }
  if (graph.indices.scalar_type() == at::kInt) {
    return collect(graph, graph.indices.data_ptr<int32_t>(), nodes, sorted.contiguous(),
                   order.contiguous());
  }
  return collect(graph, graph.indices.data_ptr<int64_t>(), nodes, sorted.contiguous(),
                 order.contiguous());
}

}  // namespace directgnn
