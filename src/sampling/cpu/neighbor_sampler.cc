#include "sampling/cpu/neighbor_sampler.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <utility>

#include "directgnn/error.h"
#include "sampling/uniform_pick.h"
#include "sampling/weighted_pick.h"

namespace directgnn::cpu {

// A global-to-local id map over all nodes (-1 = not yet in the batch), reset after each use
// by walking only the ids the batch touched.
struct NeighborSampler::Workspace {
  std::vector<int32_t> local;
};

namespace {

// Frontier rows per parallel task: about 8k picks, so that a small frontier (a batch of 64
// seeds) draws on the calling thread, since waking a sleeping second thread
// (OMP_WAIT_POLICY=PASSIVE) costs more than drawing a few thousand neighbours.
inline int64_t rows_per_task(int64_t fanout) {
  return fanout > 0 ? std::max<int64_t>(256, 8192 / fanout) : 256;
}

// What one hop reads: the graph's arrays and the draw's settings.
struct HopInput {
  const int64_t* indptr;
  const float* weights;  // null: uniform
  const int64_t* frontier;
  int64_t rows, fanout;
  uint64_t seed, hop;
};

// How many edges of weight > 0 among w[0, d).
inline int64_t positives(const float* w, int64_t d) {
  int64_t n = 0;
  for (int64_t j = 0; j < d; ++j) n += w[j] > 0.0f;
  return n;
}

// The k largest A-ES keys of sampling/weighted_pick.h among w[0, d), in pick order, as positions
// from the node's first edge (k <= the number of positive weights; zero weights never drawn).
void choose_weighted(const float* w, int64_t d, int64_t k, uint64_t key, int64_t* out,
                     std::vector<std::pair<double, int64_t>>& keys) {
  keys.clear();
  for (int64_t j = 0; j < d; ++j) {
    if (w[j] > 0.0f) keys.emplace_back(weighted_pick::key(key, j, w[j]), j);
  }
  const auto first = [](const std::pair<double, int64_t>& a, const std::pair<double, int64_t>& b) {
    return weighted_pick::before(a.first, a.second, b.first, b.second);
  };
  std::partial_sort(keys.begin(), keys.begin() + k, keys.end(), first);
  for (int64_t j = 0; j < k; ++j) out[j] = keys[j].second;
}

// Writes the CSR positions (from the node's first edge) of node v's k picks of its d
// neighbours to out[0..k): the permutation of sampling/uniform_pick.h keyed by (seed, hop, v)
// (the GPU kernel's own arithmetic), or the weighted pick when `w` (the node's weights) is given.
inline void choose(int64_t d, int64_t k, uint64_t key, const float* w, int64_t* out,
                   std::vector<std::pair<double, int64_t>>& keys) {
  if (uniform_pick::keeps_all(d, k)) {
    for (int64_t j = 0; j < d; ++j) out[j] = j;
  } else if (w != nullptr) {
    choose_weighted(w, d, k, key, out, keys);
  } else {
    uniform_pick::Permutation(static_cast<uint64_t>(d), key).pick(k, out);
  }
}

// One hop: row i of the frontier draws offsets[i + 1] - offsets[i] neighbours into `picked`
// (global ids) and, when `edges` is given, their CSR positions into `edges`.
template <typename Id>
void sample_hop(const HopInput& in, const Id* indices, const int64_t* offsets, int64_t* picked,
                int64_t* edges) {
  at::parallel_for(0, in.rows, rows_per_task(in.fanout), [&](int64_t begin, int64_t end) {
    std::vector<std::pair<double, int64_t>> keys;
    for (int64_t i = begin; i < end; ++i) {
      const int64_t v = in.frontier[i], first = in.indptr[v];
      const int64_t k = offsets[i + 1] - offsets[i];
      int64_t* out = picked + offsets[i];
      choose(in.indptr[v + 1] - first, k,
             uniform_pick::node_key(in.seed, in.hop, static_cast<uint64_t>(v)),
             in.weights != nullptr ? in.weights + first : nullptr, out, keys);
      for (int64_t j = 0; j < k; ++j) {
        if (edges != nullptr) edges[offsets[i] + j] = first + out[j];
        out[j] = static_cast<int64_t>(indices[first + out[j]]);
      }
    }
  });
}

// One hop's draw: a CSR over its frontier rows, in global ids until relabelled.
struct HopDraw {
  at::Tensor offsets;  // int64 [rows + 1]
  at::Tensor picked;   // int64 [edges]
  at::Tensor edges;    // int64 [edges], CSR positions (when asked for)
};

// How many neighbours node v keeps (weighted: a scan of its weights, when it keeps not all).
inline int64_t pick_count(const HopInput& in, int64_t v) {
  const int64_t first = in.indptr[v], d = in.indptr[v + 1] - first;
  if (in.weights == nullptr || uniform_pick::keeps_all(d, in.fanout)) {
    return uniform_pick::pick_count(d, in.fanout);
  }
  return weighted_pick::pick_count(d, in.fanout, positives(in.weights + first, d));
}

// Each frontier row's pick count, as offsets (int64 [rows + 1]); weighted counts, which scan
// weights, in parallel.
at::Tensor pick_offsets(const HopInput& in) {
  at::Tensor result = at::empty({in.rows + 1}, at::kLong);
  int64_t* offsets = result.data_ptr<int64_t>();
  offsets[0] = 0;
  if (in.weights == nullptr) {  // one serial pass: two reads of indptr per row
    for (int64_t i = 0; i < in.rows; ++i)
      offsets[i + 1] = offsets[i] + pick_count(in, in.frontier[i]);
    return result;
  }
  at::parallel_for(0, in.rows, rows_per_task(in.fanout), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) offsets[i + 1] = pick_count(in, in.frontier[i]);
  });
  for (int64_t i = 0; i < in.rows; ++i) offsets[i + 1] += offsets[i];
  return result;
}

// Draws one hop for `in.rows` frontier nodes: counts, offsets, then the picks in parallel.
HopDraw draw_hop(const CsrGraph& graph, const HopInput& in, bool with_edges) {
  HopDraw draw;
  draw.offsets = pick_offsets(in);
  const int64_t* offsets = draw.offsets.data_ptr<int64_t>();
  draw.picked = at::empty({offsets[in.rows]}, at::kLong);
  int64_t* edges = nullptr;
  if (with_edges) {
    draw.edges = at::empty({offsets[in.rows]}, at::kLong);
    edges = draw.edges.data_ptr<int64_t>();
  }
  int64_t* picked = draw.picked.data_ptr<int64_t>();
  if (graph.indices.scalar_type() == at::kInt) {
    sample_hop(in, graph.indices.data_ptr<int32_t>(), offsets, picked, edges);
  } else {
    sample_hop(in, graph.indices.data_ptr<int64_t>(), offsets, picked, edges);
  }
  return draw;
}

// Drops the picks of `draw` that `exclude` lists (edge picked -> frontier node), keeping the
// rest in order; only rows of nodes that are endpoints of an excluded pair are read.
void drop_excluded(HopDraw& draw, const int64_t* frontier, int64_t rows,
                   const ExcludedPairs& exclude) {
  int64_t* offsets = draw.offsets.data_ptr<int64_t>();
  int64_t* picked = draw.picked.data_ptr<int64_t>();
  int64_t* edges = draw.edges.defined() ? draw.edges.data_ptr<int64_t>() : nullptr;
  int64_t out = 0, begin = 0;
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t end = offsets[i + 1], v = frontier[i];
    const bool check = exclude.touches(v);
    for (int64_t e = begin; e < end; ++e) {
      if (check && exclude.contains(picked[e], v)) continue;
      picked[out] = picked[e];
      if (edges != nullptr) edges[out] = edges[e];
      ++out;
    }
    begin = end;
    offsets[i + 1] = out;
  }
  draw.picked = draw.picked.narrow(0, 0, out);
  if (edges != nullptr) draw.edges = draw.edges.narrow(0, 0, out);
}

}  // namespace

HopPicks draw_rows(const CsrGraph& graph, const at::Tensor& frontier, int64_t fanout, uint64_t seed,
                   uint64_t hop, bool weighted) {
  const at::Tensor rows = frontier.to(at::kLong).contiguous();
  const HopInput in{graph.indptr.data_ptr<int64_t>(),
                    weighted ? graph.weights.data_ptr<float>() : nullptr,
                    rows.data_ptr<int64_t>(),
                    rows.numel(),
                    fanout,
                    seed,
                    hop};
  HopDraw draw = draw_hop(graph, in, /*with_edges=*/false);
  return {std::move(draw.offsets), std::move(draw.picked)};
}

double weighted_key(uint64_t node_key, int64_t j, float w) {
  return weighted_pick::key(node_key, j, w);
}

NeighborSampler::NeighborSampler(const CsrGraph& graph, const SamplerOptions& options,
                                 std::shared_ptr<HopSource> hops)
    : graph_(graph),
      options_(options),
      hops_(std::move(hops)),
      degree_(hops_ != nullptr ? hops_->degrees() : graph.degrees().to(at::kFloat)) {
  // The front door (sampling/sampler.cc) has checked the fan-outs and the weights.
}

NeighborSampler::~NeighborSampler() = default;

std::unique_ptr<NeighborSampler::Workspace> NeighborSampler::acquire() const {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!free_.empty()) {
      auto ws = std::move(free_.back());
      free_.pop_back();
      return ws;
    }
  }
  auto ws = std::make_unique<Workspace>();
  ws->local.assign(graph_.num_nodes(), -1);
  return ws;
}

void NeighborSampler::release(std::unique_ptr<Workspace> workspace) const {
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(std::move(workspace));
}

namespace {

// Maps each seed to its local id (its position) in `local`; on a bad seed, resets what it set
// and throws naming it.
void place_seeds(const std::vector<int64_t>& nodes, std::vector<int32_t>& local) {
  const auto num_nodes = static_cast<int64_t>(local.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const int64_t v = nodes[i];
    if (v < 0 || v >= num_nodes || local[v] >= 0) {
      for (size_t j = 0; j < i; ++j) local[nodes[j]] = -1;
      DGNN_CHECK_INDEX(v >= 0 && v < num_nodes, "seed node ", v, " is out of range for ", num_nodes,
                       " nodes");
      fail_argument("seeds", "node ", v, " appears twice; seeds must be distinct");
    }
    local[v] = static_cast<int32_t>(i);
  }
}

// Relabels a hop's picks to local ids in order of first appearance, appending new nodes (serial:
// the order is the contract).
void relabel(at::Tensor& picks, std::vector<int64_t>& nodes, std::vector<int32_t>& local) {
  int64_t* picked = picks.data_ptr<int64_t>();
  for (int64_t e = 0; e < picks.numel(); ++e) {
    const int64_t v = picked[e];
    if (local[v] < 0) {
      local[v] = static_cast<int32_t>(nodes.size());
      nodes.push_back(v);
    }
    picked[e] = local[v];
  }
}

}  // namespace

MiniBatch NeighborSampler::sample(const at::Tensor& seeds_in, uint64_t seed,
                                  const ExcludedPairs* exclude) const {
  DGNN_CHECK_ARG(seeds_in.dim() == 1, "seeds", "must be a 1-D tensor");
  const at::Tensor seeds = seeds_in.to(at::kLong).contiguous();
  auto ws = acquire();
  std::vector<int32_t>& local = ws->local;
  std::vector<int64_t> nodes(seeds.data_ptr<int64_t>(), seeds.data_ptr<int64_t>() + seeds.numel());
  try {
    place_seeds(nodes, local);
  } catch (...) {
    release(std::move(ws));
    throw;
  }

  MiniBatch batch;
  batch.seeds = seeds;
  batch.hop_nodes = {static_cast<int64_t>(nodes.size())};
  const bool once = options_.mode == SampleMode::kOncePerNode;
  const float* weights = options_.weighted ? graph_.weights.data_ptr<float>() : nullptr;
  std::vector<HopCsr> hops;
  int64_t row_begin = 0;
  for (size_t hop = 0; hop < options_.fanouts.size(); ++hop) {
    // Sampling finishes before relabelling appends to `nodes`, so the pointer stays valid.
    const auto end = static_cast<int64_t>(nodes.size());
    const HopInput in{graph_.indptr.data_ptr<int64_t>(),
                      weights,
                      nodes.data() + row_begin,
                      end - row_begin,
                      options_.fanouts[hop],
                      seed,
                      static_cast<uint64_t>(hop)};
    HopDraw draw;
    if (hops_ != nullptr) {
      // A partitioned structure: the frontier rows' owners draw them (a collective).
      const at::Tensor frontier =
          in.rows > 0 ? at::from_blob(const_cast<int64_t*>(in.frontier), {in.rows}, at::kLong)
                      : at::empty({0}, at::kLong);
      HopPicks picks = hops_->draw(frontier, in.fanout, seed, hop);
      draw.offsets = std::move(picks.offsets);
      draw.picked = std::move(picks.picked);
    } else {
      draw = draw_hop(graph_, in, options_.edge_ids);
    }
    if (exclude != nullptr && !exclude->empty())
      drop_excluded(draw, in.frontier, in.rows, *exclude);
    relabel(draw.picked, nodes, local);
    batch.hop_nodes.push_back(static_cast<int64_t>(nodes.size()) - end);
    batch.hop_edges.push_back(draw.picked.numel());
    if (once) row_begin = end;
    hops.push_back({std::move(draw.offsets), std::move(draw.picked), std::move(draw.edges), end});
  }
  for (int64_t v : nodes) local[v] = -1;
  release(std::move(ws));

  batch.blocks = once ? prefix_blocks(hops) : hop_blocks(hops);
  batch.input_nodes = at::tensor(nodes, at::kLong);
  set_sources(batch, degree_);
  return batch;
}

}  // namespace directgnn::cpu
