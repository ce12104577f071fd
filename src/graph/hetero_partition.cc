#include "graph/hetero_partition.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <numeric>
#include <utility>

#include "graph/node_order.h"

namespace directgnn {
namespace {

// Per node of the view: its in-edges whose source another part owns.
at::Tensor cut_per_node(const CsrGraph& g, const at::Tensor& owner) {
  const int64_t* ptr = g.indptr.data_ptr<int64_t>();
  const int64_t* idx = g.indices.data_ptr<int64_t>();
  const int32_t* own = owner.data_ptr<int32_t>();
  at::Tensor cut = at::zeros({g.num_nodes()}, at::kLong);
  int64_t* out = cut.data_ptr<int64_t>();
  at::parallel_for(0, g.num_nodes(), 1 << 14, [&](int64_t begin, int64_t end) {
    for (int64_t v = begin; v < end; ++v) {
      for (int64_t e = ptr[v]; e < ptr[v + 1]; ++e) out[v] += own[idx[e]] != own[v];
    }
  });
  return cut;
}

std::vector<int64_t> per_part(const at::Tensor& owner, const at::Tensor& weights, int64_t parts) {
  const at::Tensor bins = owner.to(at::kLong);
  const at::Tensor c = (weights.defined() ? at::bincount(bins, weights.to(at::kDouble), parts)
                                          : at::bincount(bins, {}, parts))
                           .to(at::kLong);
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + parts);
}

double largest_over_mean(const std::vector<int64_t>& counts) {
  const int64_t total = std::accumulate(counts.begin(), counts.end(), int64_t{0});
  if (total == 0) return 1.0;
  const double mean = static_cast<double>(total) / static_cast<double>(counts.size());
  return static_cast<double>(*std::max_element(counts.begin(), counts.end())) / mean;
}

at::Tensor mapped_ids(const at::Tensor& ids, const at::Tensor& inverse) {
  if (!ids.defined()) return ids;
  return inverse.index_select(0, ids.to(at::kLong)).to(ids.scalar_type());
}

// Type t's book (`offsets` from its order): per part the in-edges and seeds of the nodes it
// owns, and the in-edges from other parts.
PartitionBook type_book(const HeteroView& view, const at::Tensor& owner, const at::Tensor& cut,
                        const at::Tensor& seeds, size_t t, std::vector<int64_t> offsets,
                        const char* method) {
  const int64_t begin = view.base[t], count = view.base[t + 1] - begin;
  const int64_t parts = static_cast<int64_t>(offsets.size()) - 1;
  const at::Tensor own = owner.narrow(0, begin, count);
  PartitionBook book;
  book.method = method;
  book.offsets = std::move(offsets);
  book.edges = per_part(own, view.graph.degrees().narrow(0, begin, count), parts);
  book.seeds = seeds.defined() ? per_part(own.index_select(0, seeds), {}, parts)
                               : std::vector<int64_t>(parts, 0);
  book.edge_cut = cut.narrow(0, begin, count).sum().item<int64_t>();
  return book;
}

}  // namespace

HeteroView homogeneous_view(const HeteroDataset& ds) {
  HeteroView v;
  v.base.assign(1, 0);
  std::vector<at::Tensor> type;
  for (size_t t = 0; t < ds.node_types.size(); ++t) {
    v.base.push_back(v.base.back() + ds.node_types[t].count);
    type.push_back(at::full({ds.node_types[t].count}, static_cast<int32_t>(t), at::kInt));
  }
  v.type = at::cat(type);
  const int64_t n = v.base.back();
  std::vector<at::Tensor> dst{at::empty({0}, at::kLong)}, src{at::empty({0}, at::kLong)};
  for (const Relation& r : ds.relations) {
    dst.push_back(at::repeat_interleave(r.graph.degrees()) + v.base[r.dst_type]);
    src.push_back(r.graph.indices.to(at::kLong) + v.base[r.src_type]);
  }
  const at::Tensor all_dst = at::cat(dst);
  const at::Tensor by_dst = std::get<1>(all_dst.sort(/*stable=*/true, 0, false));
  v.graph.indices = at::cat(src).index_select(0, by_dst).contiguous();
  v.graph.indptr = at::zeros({n + 1}, at::kLong);
  v.graph.indptr.narrow(0, 1, n).copy_(at::bincount(all_dst, {}, n).to(at::kLong).cumsum(0));
  return v;
}

HeteroPartitionReport partition_hetero(HeteroDataset& ds, PartitionOptions options,
                                       bool features_by_part) {
  const HeteroView view = homogeneous_view(ds);
  const at::Tensor seeds = options.seeds;  // the target type's ids
  if (seeds.defined()) options.seeds = seeds.to(at::kLong) + view.base[ds.target_type];
  options.groups = view.type;
  options.num_groups = static_cast<int64_t>(ds.node_types.size());
  options.directed = true;  // relations hold one direction each
  const Partition p = partition_graph(view.graph, options);
  const at::Tensor cut = cut_per_node(view.graph, p.owner);
  HeteroPartitionReport report;
  report.stats = p.stats;
  std::vector<at::Tensor> inverse;
  for (size_t t = 0; t < ds.node_types.size(); ++t) {
    NodeType& type = ds.node_types[t];
    const bool target = static_cast<int>(t) == ds.target_type;
    PartitionOrder order =
        partition_order(p.owner.narrow(0, view.base[t], type.count), options.parts);
    type.partition = type_book(view, p.owner, cut, target ? seeds : at::Tensor(), t,
                               std::move(order.offsets), partition_method_name(options.method));
    type.partition.features_by_part = features_by_part && type.has_features();
    std::vector<int64_t> nodes;
    for (int64_t k = 0; k < options.parts; ++k) {
      nodes.push_back(type.partition.offsets[k + 1] - type.partition.offsets[k]);
    }
    report.type_node_imbalance.push_back(largest_over_mean(nodes));
    report.orders.push_back(order.order);
    inverse.push_back(inverse_order(order.order));
    type.node_ids =
        type.node_ids.defined() ? type.node_ids.index_select(0, order.order) : order.order;
  }
  for (Relation& r : ds.relations) {
    r.graph = renumber_graph(r.graph, report.orders[r.dst_type], inverse[r.src_type]);
  }
  if (ds.target_type >= 0) {
    const auto t = static_cast<size_t>(ds.target_type);
    ds.labels = ds.labels.index_select(0, report.orders[t]);
    for (Split& s : ds.splits) {
      s.train = mapped_ids(s.train, inverse[t]);
      s.val = mapped_ids(s.val, inverse[t]);
      s.test = mapped_ids(s.test, inverse[t]);
    }
  }
  return report;
}

}  // namespace directgnn
