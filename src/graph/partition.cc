#include "graph/partition.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <numeric>

#include "core/random.h"
#include "directgnn/error.h"

namespace directgnn {
namespace {

at::Tensor random_owner(int64_t n, int64_t parts, uint64_t seed) {
  at::Tensor owner = at::empty({n}, at::kInt);
  int32_t* out = owner.data_ptr<int32_t>();
  at::parallel_for(0, n, 1 << 16, [&](int64_t begin, int64_t end) {
    for (int64_t v = begin; v < end; ++v) {
      out[v] = static_cast<int32_t>(mix64(seed ^ 0x9a87u, static_cast<uint64_t>(v)) %
                                    static_cast<uint64_t>(parts));
    }
  });
  return owner;
}

double imbalance(const std::vector<int64_t>& counts) {
  const int64_t total = std::accumulate(counts.begin(), counts.end(), int64_t{0});
  if (total == 0) return 1.0;
  const double mean = static_cast<double>(total) / static_cast<double>(counts.size());
  return static_cast<double>(*std::max_element(counts.begin(), counts.end())) / mean;
}

template <typename Index>
int64_t edge_cut(const CsrGraph& g, const int32_t* owner) {
  const int64_t* ptr = g.indptr.data_ptr<int64_t>();
  const Index* idx = g.indices.data_ptr<Index>();
  std::atomic<int64_t> cut{0};
  at::parallel_for(0, g.num_nodes(), 1 << 14, [&](int64_t begin, int64_t end) {
    int64_t local = 0;
    for (int64_t v = begin; v < end; ++v) {
      for (int64_t e = ptr[v]; e < ptr[v + 1]; ++e) local += owner[idx[e]] != owner[v];
    }
    cut += local;
  });
  return cut.load();
}

}  // namespace

const char* partition_method_name(PartitionMethod method) {
  return method == PartitionMethod::kMetis ? "metis" : "random";
}

PartitionStats partition_stats(const CsrGraph& graph, const at::Tensor& owner, int64_t parts,
                               const at::Tensor& seeds) {
  PartitionStats s;
  const at::Tensor own = owner.to(at::kLong);
  const auto counts = [parts](const at::Tensor& bins, const at::Tensor& weights) {
    const at::Tensor c =
        weights.defined() ? at::bincount(bins, weights, parts) : at::bincount(bins, {}, parts);
    const at::Tensor l = c.to(at::kLong);
    return std::vector<int64_t>(l.data_ptr<int64_t>(), l.data_ptr<int64_t>() + parts);
  };
  s.nodes = counts(own, {});
  s.edges = counts(own, graph.degrees().to(at::kDouble));
  s.seeds = seeds.defined() && seeds.numel() > 0 ? counts(own.index_select(0, seeds), {})
                                                 : std::vector<int64_t>(parts, 0);
  const int32_t* o = owner.data_ptr<int32_t>();
  s.edge_cut = graph.indices.scalar_type() == at::kInt ? edge_cut<int32_t>(graph, o)
                                                       : edge_cut<int64_t>(graph, o);
  s.node_imbalance = imbalance(s.nodes);
  s.edge_imbalance = imbalance(s.edges);
  s.seed_imbalance = imbalance(s.seeds);
  return s;
}

Partition partition_graph(const CsrGraph& graph, const PartitionOptions& o) {
  const int64_t n = graph.num_nodes();
  DGNN_CHECK_ARG(o.parts >= 1 && o.parts <= n, "parts", o.parts, " parts for ", n,
                 " nodes: give 1 to ", n);
  Partition p;
  if (o.parts == 1) {
    p.owner = at::zeros({n}, at::kInt);
  } else if (o.method == PartitionMethod::kRandom) {
    p.owner = random_owner(n, o.parts, o.seed);
  } else {
    p.owner = detail::metis_owner(graph, o);
  }
  p.stats = partition_stats(graph, p.owner, o.parts, o.seeds);
  return p;
}

PartitionOrder partition_order(const at::Tensor& owner, int64_t parts) {
  PartitionOrder out;
  // A stable sort by owner keeps each part's nodes in id order.
  out.order = std::get<1>(owner.to(at::kLong).sort(/*stable=*/true, 0, false));
  const at::Tensor counts = at::bincount(owner.to(at::kLong), {}, parts).to(at::kLong);
  out.offsets.assign(1, 0);
  for (int64_t k = 0; k < parts; ++k)
    out.offsets.push_back(out.offsets.back() + counts[k].item<int64_t>());
  return out;
}

}  // namespace directgnn
