#include "graph/node_order.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

#include "directgnn/error.h"
#include "graph/partition.h"

namespace directgnn {
namespace {

std::vector<int64_t> row_lengths(const CsrGraph& g) {
  const int64_t n = g.num_nodes();
  const int64_t* ptr = g.indptr.data_ptr<int64_t>();
  std::vector<int64_t> deg(n);
  for (int64_t v = 0; v < n; ++v) deg[v] = ptr[v + 1] - ptr[v];
  return deg;
}

at::Tensor order_tensor(const std::vector<int64_t>& order) { return at::tensor(order, at::kLong); }

std::vector<int64_t> by_degree(const std::vector<int64_t>& deg, bool largest_first) {
  std::vector<int64_t> order(deg.size());
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return largest_first ? deg[a] > deg[b] : deg[a] < deg[b];
  });
  return order;
}

// Cuthill-McKee: a breadth-first search from the unvisited node of smallest degree, each
// node's unvisited neighbours taken by degree (then id); the order is then reversed.
template <typename Index>
std::vector<int64_t> rcm(const CsrGraph& g) {
  const std::vector<int64_t> deg = row_lengths(g);
  const int64_t* ptr = g.indptr.data_ptr<int64_t>();
  const Index* idx = g.indices.data_ptr<Index>();
  std::vector<uint8_t> visited(deg.size(), 0);
  std::vector<int64_t> order, next;
  order.reserve(deg.size());
  for (const int64_t start : by_degree(deg, false)) {
    if (visited[start]) continue;
    visited[start] = 1;
    order.push_back(start);
    for (size_t head = order.size() - 1; head < order.size(); ++head) {
      const int64_t u = order[head];
      next.clear();
      for (int64_t e = ptr[u]; e < ptr[u + 1]; ++e) {
        const int64_t w = idx[e];
        if (visited[w]) continue;
        visited[w] = 1;
        next.push_back(w);
      }
      std::sort(next.begin(), next.end(),
                [&](int64_t a, int64_t b) { return deg[a] != deg[b] ? deg[a] < deg[b] : a < b; });
      order.insert(order.end(), next.begin(), next.end());
    }
  }
  std::reverse(order.begin(), order.end());
  return order;
}

// METIS's parts one after another; within a part, by in-degree (largest first), then id.
at::Tensor metis_order(const CsrGraph& g, const MetisOrder& m) {
  PartitionOptions o;
  o.parts = metis_order_parts(g.num_nodes(), m.parts);
  o.method = PartitionMethod::kMetis;
  o.seed = m.seed;
  o.directed = m.directed;
  const at::Tensor owner = partition_graph(g, o).owner.to(at::kLong);
  const at::Tensor deg = g.degrees().to(at::kLong);
  const int64_t top = g.num_nodes() > 0 ? deg.max().item<int64_t>() : 0;
  const at::Tensor key = owner * (top + 1) + (top - deg);
  return std::get<1>(key.sort(/*stable=*/true, 0, false));
}

template <typename Index>
void fill_rows(const CsrGraph& g, const int64_t* order, const int64_t* inverse, CsrGraph& out) {
  const int64_t* ptr = g.indptr.data_ptr<int64_t>();
  const int64_t* new_ptr = out.indptr.data_ptr<int64_t>();
  const Index* idx = g.indices.data_ptr<Index>();
  Index* new_idx = out.indices.data_ptr<Index>();
  const float* w = g.weights.defined() ? g.weights.data_ptr<float>() : nullptr;
  float* new_w = w != nullptr ? out.weights.data_ptr<float>() : nullptr;
  at::parallel_for(0, g.num_nodes(), 4096, [&](int64_t begin, int64_t end) {
    std::vector<std::pair<Index, float>> row;
    for (int64_t v = begin; v < end; ++v) {
      const int64_t old = order[v], first = ptr[old], len = ptr[old + 1] - first;
      row.resize(len);
      for (int64_t k = 0; k < len; ++k) {
        row[k] = {static_cast<Index>(inverse[idx[first + k]]), w ? w[first + k] : 0.0f};
      }
      std::stable_sort(row.begin(), row.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      for (int64_t k = 0; k < len; ++k) {
        new_idx[new_ptr[v] + k] = row[k].first;
        if (new_w) new_w[new_ptr[v] + k] = row[k].second;
      }
    }
  });
}

}  // namespace

const char* node_order_name(NodeOrder order) {
  switch (order) {
    case NodeOrder::kDegree:
      return "degree";
    case NodeOrder::kRcm:
      return "rcm";
    case NodeOrder::kMetis:
      return "metis";
    case NodeOrder::kNone:
      break;
  }
  return "none";
}

int64_t metis_order_parts(int64_t num_nodes, int64_t requested) {
  if (requested > 0) return requested;
  const int64_t parts = std::clamp<int64_t>((num_nodes + 16383) / 16384, 2, 256);
  return std::max<int64_t>(1, std::min(parts, num_nodes));
}

at::Tensor node_order(const CsrGraph& graph, NodeOrder how, const MetisOrder& metis) {
  switch (how) {
    case NodeOrder::kDegree:
      return order_tensor(by_degree(row_lengths(graph), true));
    case NodeOrder::kRcm:
      return order_tensor(graph.indices.scalar_type() == at::kInt ? rcm<int32_t>(graph)
                                                                  : rcm<int64_t>(graph));
    case NodeOrder::kMetis:
      return metis_order(graph, metis);
    case NodeOrder::kNone:
      break;
  }
  return at::arange(graph.num_nodes(), at::kLong);
}

at::Tensor inverse_order(const at::Tensor& order) {
  at::Tensor inverse = at::empty_like(order);
  inverse.index_put_({order}, at::arange(order.numel(), at::kLong));
  return inverse;
}

CsrGraph renumber_graph(const CsrGraph& graph, const at::Tensor& order, const at::Tensor& inverse) {
  const at::Tensor degrees = graph.degrees().index_select(0, order);
  CsrGraph out;
  out.indptr = at::zeros({graph.num_nodes() + 1}, at::kLong);
  out.indptr.narrow(0, 1, graph.num_nodes()).copy_(degrees.cumsum(0));
  out.indices = at::empty_like(graph.indices);
  if (graph.weights.defined()) out.weights = at::empty_like(graph.weights);
  const int64_t* o = order.data_ptr<int64_t>();
  const int64_t* inv = inverse.data_ptr<int64_t>();
  if (graph.indices.scalar_type() == at::kInt) {
    fill_rows<int32_t>(graph, o, inv, out);
  } else {
    fill_rows<int64_t>(graph, o, inv, out);
  }
  return out;
}

at::Tensor checked_node_ids(const at::Tensor& ids, int64_t n, const std::string& where) {
  DGNN_CHECK(ids.dim() == 1 && ids.numel() == n && !at::isFloatingType(ids.scalar_type()) &&
                 ids.scalar_type() != at::kBool,
             where, ": must hold one integer per node (", n, "), got shape ", ids.sizes(), " of ",
             ids.scalar_type(), "; node_ids[v] is the original id of stored node v");
  const at::Tensor out = ids.to(at::kLong).contiguous();
  const int64_t* p = out.data_ptr<int64_t>();
  std::vector<uint8_t> seen(n, 0);
  for (int64_t i = 0; i < n; ++i) {
    DGNN_CHECK(p[i] >= 0 && p[i] < n, where, ": entry ", i, " is ", p[i],
               ", not an original node id (0 to ", n - 1, ")");
    if (seen[p[i]]) {
      const int64_t earlier = std::find(p, p + i, p[i]) - p;
      fail(where, ": entries ", earlier, " and ", i, " both map to original id ", p[i],
           "; node_ids must be a permutation");
    }
    seen[p[i]] = 1;
  }
  return out;
}

}  // namespace directgnn
