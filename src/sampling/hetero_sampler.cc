#include "sampling/hetero_sampler.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <sstream>
#include <utility>

#include "core/random.h"
#include "directgnn/error.h"
#include "sampling/sampler.h"
#include "sampling/uniform_pick.h"

namespace directgnn {

namespace {

// One relation's edges in PyG's hops (HeteroHops), hop after hop.
struct HopEdges {
  std::vector<int64_t> src, dst, edge;
};

}  // namespace

// Per node type, a global-to-local map (-1 = not in the batch) and the batch's nodes of that
// type in local order; the maps are reset by walking the nodes. sample_hops keeps its edges
// here too, so that their buffers grow once, not per batch.
struct HeteroSampler::Workspace {
  std::vector<std::vector<int32_t>> local;
  std::vector<std::vector<int64_t>> nodes;
  std::vector<HopEdges> edges;
};

namespace {

std::string trim(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

// One relation's draw at one hop: counts, then picks in parallel (global source ids).
struct RelationDraw {
  at::Tensor offsets;  // int64 [rows + 1]
  at::Tensor picked;   // int64 [edges]
};

// How far ahead draw_picks prefetches a row's pointer and its first sources.
constexpr int64_t kRowAhead = 16, kEdgesAhead = 8;

// Picks of rows dst[0, rows) in parallel, row i's into picked[offsets[i], offsets[i + 1]): the
// picked sources' ids, and with `positions` (else nullptr) the picked edges' CSR positions at the
// same places (read here, in parallel, rather than at random in a serial pass later).
template <typename Id>
void draw_picks(const int64_t* indptr, const Id* indices, const int64_t* dst, int64_t rows,
                const int64_t* offsets, uint64_t key, int64_t* picked, int64_t* positions) {
  const int64_t grain =
      std::max<int64_t>(64, 8192 / std::max<int64_t>(1, offsets[rows] / (rows + 1)));
  at::parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      // The rows are scattered: fetch the row pointers and rows of coming nodes early.
      if (i + kRowAhead < end) __builtin_prefetch(indptr + dst[i + kRowAhead]);
      if (i + kEdgesAhead < end) __builtin_prefetch(indices + indptr[dst[i + kEdgesAhead]]);
      const int64_t v = dst[i], first = indptr[v], deg = indptr[v + 1] - first;
      const int64_t k = offsets[i + 1] - offsets[i];
      int64_t* out = picked + offsets[i];
      if (k == deg) {
        for (int64_t j = 0; j < k; ++j) out[j] = j;
      } else {
        uniform_pick::Permutation(static_cast<uint64_t>(deg),
                                  uniform_pick::node_key(key, 0, static_cast<uint64_t>(v)))
            .pick(k, out);
      }
      if (positions != nullptr) {
        for (int64_t j = 0; j < k; ++j) positions[offsets[i] + j] = first + out[j];
      }
      for (int64_t j = 0; j < k; ++j) out[j] = static_cast<int64_t>(indices[first + out[j]]);
    }
  });
}

// offsets[0, rows]: the running count of rows dst[0, rows)'s picks at `fanout` (counted in
// parallel: the degrees are read at random).
void count_picks(const int64_t* indptr, const int64_t* dst, int64_t rows, int64_t fanout,
                 int64_t* offsets) {
  offsets[0] = 0;
  at::parallel_for(0, rows, 4096, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      offsets[i + 1] = uniform_pick::pick_count(indptr[dst[i] + 1] - indptr[dst[i]], fanout);
    }
  });
  for (int64_t i = 0; i < rows; ++i) offsets[i + 1] += offsets[i];
}

RelationDraw draw_relation(const CsrGraph& graph, const std::vector<int64_t>& dst, int64_t rows,
                           int64_t fanout, uint64_t key) {
  RelationDraw draw;
  draw.offsets = at::empty({rows + 1}, at::kLong);
  int64_t* offsets = draw.offsets.data_ptr<int64_t>();
  const int64_t* indptr = graph.indptr.data_ptr<int64_t>();
  count_picks(indptr, dst.data(), rows, fanout, offsets);
  draw.picked = at::empty({offsets[rows]}, at::kLong);
  int64_t* picked = draw.picked.data_ptr<int64_t>();
  if (graph.indices.scalar_type() == at::kInt) {
    draw_picks(indptr, graph.indices.data_ptr<int32_t>(), dst.data(), rows, offsets, key, picked,
               nullptr);
  } else {
    draw_picks(indptr, graph.indices.data_ptr<int64_t>(), dst.data(), rows, offsets, key, picked,
               nullptr);
  }
  return draw;
}

// Rewrites `picked` (global ids of one type) as local ids, adding new nodes in order.
void relabel(at::Tensor& picked, std::vector<int32_t>& local, std::vector<int64_t>& nodes) {
  int64_t* p = picked.data_ptr<int64_t>();
  const int64_t n = picked.numel();
  for (int64_t e = 0; e < n; ++e) {
    int32_t& slot = local[static_cast<size_t>(p[e])];
    if (slot < 0) {
      slot = static_cast<int32_t>(nodes.size());
      nodes.push_back(p[e]);
    }
    p[e] = slot;
  }
}

// Gives the picks of one hop, src[j] and dst[j] for j in [offsets[0], offsets[rows]) (row i's at
// j in [offsets[i], offsets[i + 1])), their local ids: the source's (src[j] a global id before),
// a new node of its type when first seen, in pick order; the destination's, dst_begin + i.
void relabel_hop(const int64_t* offsets, int64_t rows, int64_t dst_begin, int64_t* src,
                 int64_t* dst, std::vector<int32_t>& local, std::vector<int64_t>& nodes) {
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = offsets[i]; j < offsets[i + 1]; ++j) {
      const int64_t u = src[j];
      int32_t& slot = local[static_cast<size_t>(u)];
      if (slot < 0) {
        slot = static_cast<int32_t>(nodes.size());
        nodes.push_back(u);
      }
      src[j] = slot;
      dst[j] = dst_begin + i;
    }
  }
}

// Relation `rel`'s hop for its destination type's sample nodes [begin, end): draws in parallel,
// then relabels in order; returns the number of edges drawn. `offsets` is scratch.
int64_t draw_hop(const Relation& rel, int64_t fanout, uint64_t key, int64_t begin, int64_t end,
                 std::vector<std::vector<int32_t>>& local, std::vector<std::vector<int64_t>>& nodes,
                 std::vector<int64_t>& offsets, HopEdges& e) {
  const int64_t rows = end - begin;
  if (rows == 0 || fanout == 0) return 0;
  const int64_t* indptr = rel.graph.indptr.data_ptr<int64_t>();
  // The frontier is read before relabelling, which may grow (and move) the same list.
  const int64_t* frontier = nodes[rel.dst_type].data() + begin;
  offsets.resize(static_cast<size_t>(rows + 1));
  count_picks(indptr, frontier, rows, fanout, offsets.data());
  const size_t first = e.edge.size(), size = first + static_cast<size_t>(offsets[rows]);
  e.src.resize(size);
  e.dst.resize(size);
  e.edge.resize(size);
  int64_t* src = e.src.data() + first;
  int64_t* edge = e.edge.data() + first;
  if (rel.graph.indices.scalar_type() == at::kInt) {
    draw_picks(indptr, rel.graph.indices.data_ptr<int32_t>(), frontier, rows, offsets.data(), key,
               src, edge);
  } else {
    draw_picks(indptr, rel.graph.indices.data_ptr<int64_t>(), frontier, rows, offsets.data(), key,
               src, edge);
  }
  relabel_hop(offsets.data(), rows, begin, src, e.dst.data() + first, local[rel.src_type],
              nodes[rel.src_type]);
  return offsets[static_cast<size_t>(rows)];
}

// Drops the picks (global source ids) of rows dst[0, rows) that `exclude` lists, in place.
void drop_excluded(RelationDraw& draw, const int64_t* dst, int64_t rows,
                   const ExcludedPairs& exclude) {
  int64_t* offsets = draw.offsets.data_ptr<int64_t>();
  int64_t* picked = draw.picked.data_ptr<int64_t>();
  int64_t kept = 0, begin = 0;
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t end = offsets[i + 1], v = dst[i];
    const bool touched = exclude.touches(v);
    for (int64_t j = begin; j < end; ++j) {
      if (!touched || !exclude.contains(picked[j], v)) picked[kept++] = picked[j];
    }
    begin = end;
    offsets[i + 1] = kept;
  }
  draw.picked = draw.picked.narrow(0, 0, kept);
}

at::Tensor long_tensor(const std::vector<int64_t>& values) {
  at::Tensor out = at::empty({static_cast<int64_t>(values.size())}, at::kLong);
  std::copy(values.begin(), values.end(), out.data_ptr<int64_t>());
  return out;
}

}  // namespace

std::vector<RelationFanouts> parse_relation_fanouts(const std::string& text) {
  std::vector<RelationFanouts> out;
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ';')) {
    item = trim(item);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    DGNN_CHECK(eq != std::string::npos, "per-relation fan-outs: '", item,
               "' must read src,rel,dst=F1,F2,... (one fan-out per layer)");
    RelationFanouts r{trim(item.substr(0, eq)), {}};
    const std::string list = trim(item.substr(eq + 1));
    try {
      r.fanouts = parse_fanouts(list, std::count(list.begin(), list.end(), ',') + 1,
                                /*zero_draws_none=*/true);
    } catch (const Error& e) {
      fail("per-relation fan-outs of ", r.relation, ": ", e.what());
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::string relation_fanouts_text(const std::vector<RelationFanouts>& fanouts) {
  std::string out;
  for (const RelationFanouts& r : fanouts) {
    out += (out.empty() ? "" : ";") + r.relation + "=" + fanout_text(r.fanouts);
  }
  return out;
}

HeteroSamplerOptions hetero_sampler_options(const HeteroDataset& ds,
                                            const std::vector<int64_t>& all,
                                            const std::vector<RelationFanouts>& per_relation,
                                            int64_t layers) {
  HeteroSamplerOptions options;
  options.fanouts.resize(ds.relations.size());
  std::vector<bool> named(ds.relations.size(), false);
  for (const RelationFanouts& given : per_relation) {
    const int r = ds.relation_index(given.relation, "per-relation fan-outs");
    DGNN_CHECK(!named[r], "per-relation fan-outs: relation ", ds.relations[r].key(),
               " is given twice");
    named[r] = true;
    try {
      check_fanouts(given.fanouts, layers, /*zero_draws_none=*/true);
    } catch (const Error& e) {
      fail("per-relation fan-outs of ", ds.relations[r].key(), ": ", e.what());
    }
    options.fanouts[r] = given.fanouts;
  }
  for (size_t r = 0; r < ds.relations.size(); ++r) {
    if (named[r]) continue;
    DGNN_CHECK(!all.empty(), "no fan-outs for relation ", ds.relations[r].key(),
               "; give fan-outs for every relation, or one list for all of them");
    check_fanouts(all, layers);
    options.fanouts[r] = all;
  }
  return options;
}

HeteroSamplerOptions parse_hetero_fanouts(const HeteroDataset& ds, const std::string& all,
                                          const std::string& per_relation, int64_t layers) {
  return hetero_sampler_options(ds,
                                all.empty() ? std::vector<int64_t>{} : parse_fanouts(all, layers),
                                parse_relation_fanouts(per_relation), layers);
}

std::string hetero_fanout_text(const HeteroDataset& ds, const HeteroSamplerOptions& options) {
  std::ostringstream out;
  for (size_t r = 0; r < ds.relations.size(); ++r) {
    out << (r ? "; " : "") << ds.relations[r].key() << "=" << fanout_text(options.fanouts[r]);
  }
  return out.str();
}

HeteroSampler::HeteroSampler(const HeteroDataset& dataset, HeteroSamplerOptions options)
    : dataset_(dataset), options_(std::move(options)) {
  DGNN_CHECK(options_.fanouts.size() == dataset_.relations.size(), "the sampler has fan-outs for ",
             options_.fanouts.size(), " relations but the graph has ", dataset_.relations.size());
  DGNN_CHECK(!options_.fanouts.empty() && !options_.fanouts[0].empty(),
             "the sampler needs at least one hop");
  for (const std::vector<int64_t>& f : options_.fanouts) {
    DGNN_CHECK(f.size() == options_.fanouts[0].size(),
               "every relation needs the same number of fan-outs (one per layer)");
    check_fanouts(f, static_cast<int64_t>(f.size()), /*zero_draws_none=*/true);
  }
  if (options_.degrees) degrees_ = relation_degrees(dataset_);
}

HeteroSampler::~HeteroSampler() = default;

int64_t HeteroSampler::hops() const { return static_cast<int64_t>(options_.fanouts[0].size()); }

std::unique_ptr<HeteroSampler::Workspace> HeteroSampler::acquire() const {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!free_.empty()) {
      auto ws = std::move(free_.back());
      free_.pop_back();
      return ws;
    }
  }
  auto ws = std::make_unique<Workspace>();
  ws->nodes.resize(dataset_.node_types.size());
  for (const NodeType& t : dataset_.node_types) {
    DGNN_CHECK(t.count < INT32_MAX, "node type '", t.name, "' has ", t.count,
               " nodes; the heterogeneous sampler handles fewer than 2^31 per type");
    ws->local.emplace_back(static_cast<size_t>(t.count), -1);
  }
  return ws;
}

void HeteroSampler::release(std::unique_ptr<Workspace> ws) const {
  for (size_t t = 0; t < ws->nodes.size(); ++t) {
    for (int64_t v : ws->nodes[t]) ws->local[t][static_cast<size_t>(v)] = -1;
    ws->nodes[t].clear();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(std::move(ws));
}

at::Tensor HeteroSampler::checked_seeds(int seed_type, const at::Tensor& seeds) const {
  DGNN_CHECK(seed_type >= 0 && static_cast<size_t>(seed_type) < dataset_.node_types.size(),
             "seed type index ", seed_type, " is out of range");
  check_seeds(seeds, dataset_.node_types[seed_type].count);
  return seeds.to(at::kCPU).to(at::kLong).contiguous();
}

std::vector<at::Tensor> HeteroSampler::checked_typed_seeds(
    const std::vector<at::Tensor>& seeds) const {
  DGNN_CHECK(seeds.size() == dataset_.node_types.size(), "seeds are given for ", seeds.size(),
             " node types but the graph has ", dataset_.node_types.size());
  std::vector<at::Tensor> out;
  for (size_t t = 0; t < seeds.size(); ++t) {
    const bool none = !seeds[t].defined() || seeds[t].numel() == 0;
    out.push_back(none ? at::empty({0}, at::kLong) : checked_seeds(static_cast<int>(t), seeds[t]));
  }
  return out;
}

// The seeds of one type as seeds of every type (none of the others), the type checked.
std::vector<at::Tensor> HeteroSampler::one_type(int seed_type, const at::Tensor& seeds) const {
  DGNN_CHECK(seed_type >= 0 && static_cast<size_t>(seed_type) < dataset_.node_types.size(),
             "seed type index ", seed_type, " is out of range");
  std::vector<at::Tensor> typed(dataset_.node_types.size());
  typed[static_cast<size_t>(seed_type)] = seeds;
  return typed;
}

HeteroMiniBatch HeteroSampler::sample(int seed_type, const at::Tensor& seeds, uint64_t seed) const {
  HeteroMiniBatch batch = sample(one_type(seed_type, seeds), seed);
  batch.seed_type = seed_type;
  // The seeds as checked: the first of their type's nodes.
  batch.seeds = batch.input_nodes[static_cast<size_t>(seed_type)].narrow(0, 0, seeds.numel());
  return batch;
}

HeteroMiniBatch HeteroSampler::sample(const std::vector<at::Tensor>& seeds_in, uint64_t seed,
                                      const std::vector<ExcludedPairs>* exclude) const {
  const size_t types = dataset_.node_types.size();
  DGNN_CHECK(exclude == nullptr || exclude->size() == dataset_.relations.size(),
             "the excluded edges are given for ", exclude ? exclude->size() : 0,
             " relations but the graph has ", dataset_.relations.size());
  const std::vector<at::Tensor> seeds = checked_typed_seeds(seeds_in);
  HeteroMiniBatch batch;
  std::unique_ptr<Workspace> ws = acquire();
  for (size_t t = 0; t < types; ++t) {
    at::Tensor first = seeds[t].clone();
    relabel(first, ws->local[t], ws->nodes[t]);
    batch.num_seeds.push_back(seeds[t].numel());
  }
  const int64_t H = hops();
  batch.blocks.resize(static_cast<size_t>(H));
  for (int64_t h = 0; h < H; ++h) {
    HeteroBlock& block = batch.blocks[static_cast<size_t>(H - 1 - h)];
    for (size_t t = 0; t < types; ++t) block.num_dst.push_back(ws->nodes[t].size());
    for (size_t r = 0; r < dataset_.relations.size(); ++r) {
      const Relation& rel = dataset_.relations[r];
      const int64_t rows = block.num_dst[rel.dst_type];
      const uint64_t key = mix64(seed, r + 1, static_cast<uint64_t>(h));
      RelationDraw draw = draw_relation(rel.graph, ws->nodes[rel.dst_type], rows,
                                        options_.fanouts[r][static_cast<size_t>(h)], key);
      if (exclude != nullptr && !(*exclude)[r].empty()) {
        drop_excluded(draw, ws->nodes[rel.dst_type].data(), rows, (*exclude)[r]);
      }
      relabel(draw.picked, ws->local[rel.src_type], ws->nodes[rel.src_type]);
      Block b;
      b.indptr = draw.offsets;
      b.indices = draw.picked;
      b.num_dst = rows;
      block.relations.push_back(std::move(b));
    }
    for (size_t t = 0; t < types; ++t) block.num_src.push_back(ws->nodes[t].size());
    for (size_t r = 0; r < dataset_.relations.size(); ++r) {
      block.relations[r].num_src = block.num_src[dataset_.relations[r].src_type];
    }
  }
  for (size_t t = 0; t < types; ++t) {
    batch.input_nodes.push_back(
        at::from_blob(ws->nodes[t].data(), {static_cast<int64_t>(ws->nodes[t].size())}, at::kLong)
            .clone());
  }
  release(std::move(ws));
  if (options_.degrees) add_degrees(batch);
  return batch;
}

// Each block's sources and destinations are the first of their type's input nodes.
void HeteroSampler::add_degrees(HeteroMiniBatch& batch) const {
  for (HeteroBlock& block : batch.blocks) {
    for (size_t r = 0; r < dataset_.relations.size(); ++r) {
      const Relation& rel = dataset_.relations[r];
      Block& b = block.relations[r];
      b.dst_degree =
          degrees_[r].in.index_select(0, batch.input_nodes[rel.dst_type].narrow(0, 0, b.num_dst));
      b.src_degree =
          degrees_[r].out.index_select(0, batch.input_nodes[rel.src_type].narrow(0, 0, b.num_src));
    }
  }
}

HeteroHops HeteroSampler::sample_hops(int seed_type, const at::Tensor& seeds, uint64_t seed) const {
  return sample_hops(one_type(seed_type, seeds), seed);
}

HeteroHops HeteroSampler::sample_hops(const std::vector<at::Tensor>& seeds_in,
                                      uint64_t seed) const {
  const std::vector<at::Tensor> seeds = checked_typed_seeds(seeds_in);
  const size_t T = dataset_.node_types.size(), R = dataset_.relations.size();
  const auto H = static_cast<size_t>(hops());
  HeteroHops out;
  out.hop_nodes.assign(T, std::vector<int64_t>(H + 1, 0));
  out.hop_edges.assign(R, std::vector<int64_t>(H, 0));
  std::unique_ptr<Workspace> ws = acquire();
  for (size_t t = 0; t < T; ++t) {
    at::Tensor first = seeds[t].clone();
    relabel(first, ws->local[t], ws->nodes[t]);
    out.hop_nodes[t][0] = seeds[t].numel();
  }
  std::vector<HopEdges>& edges = ws->edges;
  edges.resize(R);
  for (HopEdges& e : edges) {
    e.src.clear();
    e.dst.clear();
    e.edge.clear();
  }
  std::vector<int64_t> begin(T, 0), end(T), offsets;
  for (size_t h = 0; h < H; ++h) {
    // Hop h reads the nodes new at hop h - 1: [begin, end) of each type as the hop starts.
    for (size_t t = 0; t < T; ++t) end[t] = static_cast<int64_t>(ws->nodes[t].size());
    for (size_t r = 0; r < R; ++r) {
      const Relation& rel = dataset_.relations[r];
      out.hop_edges[r][h] =
          draw_hop(rel, options_.fanouts[r][h], mix64(seed, r + 1, h), begin[rel.dst_type],
                   end[rel.dst_type], ws->local, ws->nodes, offsets, edges[r]);
    }
    for (size_t t = 0; t < T; ++t) {
      out.hop_nodes[t][h + 1] = static_cast<int64_t>(ws->nodes[t].size()) - end[t];
      begin[t] = end[t];
    }
  }
  for (const std::vector<int64_t>& nodes : ws->nodes) out.nodes.push_back(long_tensor(nodes));
  for (const HopEdges& e : edges) {
    out.src.push_back(long_tensor(e.src));
    out.dst.push_back(long_tensor(e.dst));
    out.edge.push_back(long_tensor(e.edge));
  }
  release(std::move(ws));
  return out;
}

Block full_relation_block(const Relation& relation, int64_t num_src, int64_t begin, int64_t end,
                          const RelationDegrees* degrees) {
  const at::Tensor& indptr = relation.graph.indptr;
  const int64_t* p = indptr.data_ptr<int64_t>();
  Block b;
  b.indptr = indptr.narrow(0, begin, end - begin + 1) - p[begin];
  b.indices = relation.graph.indices.narrow(0, p[begin], p[end] - p[begin]);
  b.num_dst = end - begin;
  b.num_src = num_src;
  if (degrees != nullptr) {
    b.dst_degree = degrees->in.narrow(0, begin, end - begin);
    b.src_degree = degrees->out;
  }
  return b;
}

std::vector<RelationDegrees> relation_degrees(const HeteroDataset& dataset) {
  std::vector<RelationDegrees> out;
  for (const Relation& r : dataset.relations) {
    const at::Tensor& indptr = r.graph.indptr;
    RelationDegrees d;
    d.in = (indptr.narrow(0, 1, indptr.numel() - 1) - indptr.narrow(0, 0, indptr.numel() - 1))
               .to(at::kFloat);
    std::vector<int64_t> counts(static_cast<size_t>(dataset.node_types[r.src_type].count), 0);
    const at::Tensor indices = r.graph.indices.contiguous();
    auto count = [&](const auto* ids) {
      for (int64_t e = 0; e < indices.numel(); ++e) ++counts[static_cast<size_t>(ids[e])];
    };
    if (indices.scalar_type() == at::kInt) {
      count(indices.data_ptr<int32_t>());
    } else {
      count(indices.data_ptr<int64_t>());
    }
    d.out = at::from_blob(counts.data(), {static_cast<int64_t>(counts.size())}, at::kLong)
                .to(at::kFloat);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace directgnn
