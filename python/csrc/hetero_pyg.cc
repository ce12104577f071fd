// torch.classes.directgnn.HeteroPygSampler: PyG's heterogeneous NeighborSampler draw on the
// library's typed sampler. Each node's neighbours are drawn once, at the hop after the one that
// first reaches it (PyG's hops, not DGL's fresh layers): hop h runs a one-hop HeteroSampler
// over the nodes of each type first reached at hop h - 1, and the picks join one node list
// per type, seeds first, as PyG's HeteroSamplerOutput holds them.
#include <ATen/ATen.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <utility>

#include "core/random.h"
#include "directgnn/error.h"
#include "errors.h"
#include "hetero.h"
#include "sampling/hetero_sampler.h"
#include "sampling/sampler.h"

namespace directgnn::ops {
namespace {

// Node per type, then row, col and edge per relation (PyG's local source and destination ids,
// each edge's position in its relation's CSR), then per type the nodes first reached at each
// hop (seeds first) and per relation the edges drawn at each hop.
using PygHeteroResult =
    std::tuple<std::vector<at::Tensor>, std::vector<at::Tensor>, std::vector<at::Tensor>,
               std::vector<at::Tensor>, std::vector<std::vector<int64_t>>,
               std::vector<std::vector<int64_t>>>;

// Whether every row of a CSR lists its sources in order, and whether any repeats one: edge
// positions are then found by binary search.
struct RowOrder {
  bool sorted = true;
  bool repeats = false;
};

template <typename Id>
RowOrder row_order(const CsrGraph& g) {
  RowOrder order;
  const int64_t* p = g.indptr.data_ptr<int64_t>();
  const Id* s = g.indices.data_ptr<Id>();
  for (int64_t v = 0; v + 1 < g.indptr.numel(); ++v) {
    for (int64_t e = p[v] + 1; e < p[v + 1]; ++e) {
      order.sorted = order.sorted && s[e - 1] <= s[e];
      order.repeats = order.repeats || s[e - 1] == s[e];
    }
  }
  return order;
}

// The position in `g` of edge u -> v; `before` earlier picks of the same pair in this row
// (a repeated edge) take the positions after the first.
template <typename Id>
int64_t edge_position(const CsrGraph& g, int64_t v, int64_t u, int64_t before) {
  const int64_t* p = g.indptr.data_ptr<int64_t>();
  const Id* s = g.indices.data_ptr<Id>();
  return std::lower_bound(s + p[v], s + p[v + 1], static_cast<Id>(u)) - s + before;
}

// One type's nodes in the sample: global ids in PyG's local order, and the way back (a map
// over the whole type, -1 = not in the sample, reset by walking `ids` when the draw ends).
struct TypeNodes {
  std::vector<int64_t> ids;
  std::vector<int64_t> local;

  int64_t add(int64_t v) {
    int64_t& slot = local[static_cast<size_t>(v)];
    if (slot < 0) {
      slot = static_cast<int64_t>(ids.size());
      ids.push_back(v);
    }
    return slot;
  }
};

// Per node type a TypeNodes, kept between draws so that the maps are allocated once.
using Workspace = std::vector<TypeNodes>;

struct RelationEdges {
  std::vector<int64_t> row, col, edge;
};

at::Tensor tensor_of(const std::vector<int64_t>& values) {
  return at::tensor(c10::ArrayRef<int64_t>(values), at::kLong);
}

}  // namespace

class HeteroPygSamplerHolder : public torch::CustomClassHolder {
 public:
  HeteroPygSamplerHolder(c10::intrusive_ptr<HeteroGraphHolder> graph,
                         std::vector<std::vector<int64_t>> fanouts)
      : graph_(std::move(graph)) {
    const HeteroDataset& ds = graph_->dataset();
    const auto checked = checked_hetero_fanouts(ds, fanouts, true, "directgnn.pyg.NeighborSampler");
    for (const Relation& r : ds.relations) {
      const bool wide = r.graph.indices.scalar_type() == at::kLong;
      const RowOrder order = wide ? row_order<int64_t>(r.graph) : row_order<int32_t>(r.graph);
      DGNN_CHECK(order.sorted, "directgnn.pyg: the rows of relation ", r.key(),
                 " are not sorted by source id; sort each row (directgnn.pyg sorts the graphs "
                 "it is given, so this is a bug to report)");
      repeats_.push_back(order.repeats);
    }
    for (size_t h = 0; h < checked[0].size(); ++h) hops_.push_back(make_hop(ds, checked, h));
  }

  PygHeteroResult sample(int64_t seed_type, const at::Tensor& seeds_in, int64_t seed) const {
    const HeteroDataset& ds = graph_->dataset();
    DGNN_CHECK_INDEX(seed_type >= 0 && seed_type < static_cast<int64_t>(ds.node_types.size()),
                     "node type index ", seed_type, " is out of range");
    const at::Tensor seeds = seeds_in.cpu().to(at::kLong).contiguous();
    check_seeds(seeds, ds.node_types[seed_type].count);
    const size_t T = ds.node_types.size(), R = ds.relations.size(), H = hops_.size();
    std::unique_ptr<Workspace> workspace = acquire();
    Workspace& nodes = *workspace;
    std::vector<RelationEdges> edges(R);
    std::vector<std::vector<int64_t>> hop_nodes(T, std::vector<int64_t>(H + 1, 0));
    std::vector<std::vector<int64_t>> hop_edges(R, std::vector<int64_t>(H, 0));
    const int64_t* seed_ids = seeds.data_ptr<int64_t>();
    for (int64_t i = 0; i < seeds.numel(); ++i) nodes[seed_type].add(seed_ids[i]);
    hop_nodes[seed_type][0] = seeds.numel();
    std::vector<int64_t> begin(T, 0);
    for (size_t h = 0; h < H; ++h) {
      std::vector<int64_t> end(T);
      for (size_t t = 0; t < T; ++t) end[t] = static_cast<int64_t>(nodes[t].ids.size());
      std::vector<size_t> drawn(R);
      for (size_t r = 0; r < R; ++r) drawn[r] = edges[r].row.size();
      for (size_t t = 0; t < T; ++t) {
        if (end[t] > begin[t]) draw(h, static_cast<int>(t), begin[t], end[t], seed, nodes, edges);
      }
      for (size_t t = 0; t < T; ++t) {
        hop_nodes[t][h + 1] = static_cast<int64_t>(nodes[t].ids.size()) - end[t];
        begin[t] = end[t];
      }
      for (size_t r = 0; r < R; ++r) {
        hop_edges[r][h] = static_cast<int64_t>(edges[r].row.size() - drawn[r]);
      }
    }
    PygHeteroResult out;
    for (const TypeNodes& n : nodes) std::get<0>(out).push_back(tensor_of(n.ids));
    release(std::move(workspace));
    for (const RelationEdges& e : edges) {
      std::get<1>(out).push_back(tensor_of(e.row));
      std::get<2>(out).push_back(tensor_of(e.col));
      std::get<3>(out).push_back(tensor_of(e.edge));
    }
    std::get<4>(out) = std::move(hop_nodes);
    std::get<5>(out) = std::move(hop_edges);
    return out;
  }

 private:
  // One hop's sampler: the relations with a fan-out there (0 leaves one out), one hop each.
  struct Hop {
    HeteroDataset view;
    std::vector<int> relation;  // the view's relations as the dataset's indices
    std::unique_ptr<HeteroSampler> sampler;
  };

  static std::unique_ptr<Hop> make_hop(const HeteroDataset& ds,
                                       const std::vector<std::vector<int64_t>>& fanouts, size_t h) {
    auto hop = std::make_unique<Hop>();
    hop->view.name = ds.name;
    hop->view.node_types = ds.node_types;
    HeteroSamplerOptions options;
    for (size_t r = 0; r < ds.relations.size(); ++r) {
      if (fanouts[r][h] == 0) continue;
      hop->view.relations.push_back(ds.relations[r]);
      hop->relation.push_back(static_cast<int>(r));
      options.fanouts.push_back({fanouts[r][h]});
    }
    if (!hop->relation.empty()) {
      hop->sampler = std::make_unique<HeteroSampler>(hop->view, std::move(options));
    }
    return hop;
  }

  // Hop h for type t's nodes [begin, end) of the sample: their neighbours in every relation
  // into t, the new ones appended to their types' lists.
  void draw(size_t h, int t, int64_t begin, int64_t end, int64_t seed, Workspace& nodes,
            std::vector<RelationEdges>& edges) const {
    const Hop& hop = *hops_[h];
    if (!hop.sampler) return;
    const at::Tensor frontier =
        at::tensor(c10::ArrayRef<int64_t>(nodes[t].ids.data() + begin, end - begin), at::kLong);
    const uint64_t key = mix64(static_cast<uint64_t>(seed), h + 1, static_cast<uint64_t>(t));
    const HeteroMiniBatch batch = hop.sampler->sample(t, frontier, key);
    for (size_t k = 0; k < hop.relation.size(); ++k) {
      const int r = hop.relation[k];
      const Relation& rel = graph_->dataset().relations[r];
      if (rel.dst_type != t) continue;
      append(r, batch.blocks[0].relations[k], batch.input_nodes[rel.src_type], frontier, begin,
             nodes[rel.src_type], edges[r]);
    }
  }

  // Relation r's picks for the frontier's rows as PyG's edges: the source's local id in the
  // sample (row), the frontier node's (col) and the edge's position in r's CSR.
  void append(int r, const Block& block, const at::Tensor& sources, const at::Tensor& frontier,
              int64_t begin, TypeNodes& src, RelationEdges& out) const {
    const CsrGraph& g = graph_->dataset().relations[r].graph;
    const bool wide = g.indices.scalar_type() == at::kLong;
    const at::Tensor picks = block.indices.to(at::kLong).contiguous();
    const int64_t* p = block.indptr.data_ptr<int64_t>();
    const int64_t* pick = picks.data_ptr<int64_t>();
    const int64_t* global = sources.data_ptr<int64_t>();
    const int64_t* dst = frontier.data_ptr<int64_t>();
    for (int64_t i = 0; i + 1 < block.indptr.numel(); ++i) {
      for (int64_t e = p[i]; e < p[i + 1]; ++e) {
        const int64_t u = global[pick[e]];
        int64_t before = 0;
        if (repeats_[r])
          before = std::count_if(pick + p[i], pick + e, [&](int64_t q) { return global[q] == u; });
        out.row.push_back(src.add(u));
        out.col.push_back(begin + i);
        out.edge.push_back(wide ? edge_position<int64_t>(g, dst[i], u, before)
                                : edge_position<int32_t>(g, dst[i], u, before));
      }
    }
  }

  std::unique_ptr<Workspace> acquire() const {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!free_.empty()) {
        std::unique_ptr<Workspace> ws = std::move(free_.back());
        free_.pop_back();
        return ws;
      }
    }
    auto ws = std::make_unique<Workspace>();
    for (const NodeType& t : graph_->dataset().node_types) {
      ws->push_back({{}, std::vector<int64_t>(static_cast<size_t>(t.count), -1)});
    }
    return ws;
  }

  void release(std::unique_ptr<Workspace> ws) const {
    for (TypeNodes& n : *ws) {
      for (const int64_t v : n.ids) n.local[static_cast<size_t>(v)] = -1;
      n.ids.clear();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(std::move(ws));
  }

  c10::intrusive_ptr<HeteroGraphHolder> graph_;
  mutable std::mutex mutex_;
  mutable std::vector<std::unique_ptr<Workspace>> free_;
  std::vector<bool> repeats_;  // per relation: some row lists a source twice
  std::vector<std::unique_ptr<Hop>> hops_;
};

void define_hetero_pyg(torch::Library& m) {
  m.class_<HeteroPygSamplerHolder>("HeteroPygSampler")
      .def(guarded_init<HeteroPygSamplerHolder, c10::intrusive_ptr<HeteroGraphHolder>,
                        std::vector<std::vector<int64_t>>>())
      .def("sample", guarded<&HeteroPygSamplerHolder::sample>);
}

}  // namespace directgnn::ops
