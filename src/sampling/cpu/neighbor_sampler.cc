#include "sampling/cpu/neighbor_sampler.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>

#include "directgnn/error.h"
#include "sampling/uniform_pick.h"

namespace directgnn::cpu {

// A global-to-local id map over all nodes (-1 = not yet in the batch), reset after each use
// by walking only the ids the batch touched.
struct NeighborSampler::Workspace {
  std::vector<int32_t> local;
};

namespace {

// Writes the CSR positions (from the node's first edge) of node v's k picks of its d
// neighbours to out[0..k): the permutation of sampling/uniform_pick.h keyed by (seed, hop, v),
// the GPU kernel's own arithmetic.
inline void choose(int64_t d, int64_t k, uint64_t key, int64_t* out) {
  if (uniform_pick::keeps_all(d, k)) {
    for (int64_t j = 0; j < d; ++j) out[j] = j;
    return;
  }
  uniform_pick::Permutation(static_cast<uint64_t>(d), key).pick(k, out);
}

// One hop: row i of the frontier draws offsets[i + 1] - offsets[i] neighbours into `picked`
// (global ids) and, when `edges` is given, their CSR positions into `edges`.
template <typename Id>
void sample_hop(const int64_t* indptr, const Id* indices, const int64_t* frontier, int64_t rows,
                uint64_t seed, uint64_t hop, const int64_t* offsets, int64_t* picked,
                int64_t* edges) {
  at::parallel_for(0, rows, 256, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t v = frontier[i], first = indptr[v];
      const int64_t k = offsets[i + 1] - offsets[i];
      int64_t* out = picked + offsets[i];
      choose(indptr[v + 1] - first, k, uniform_pick::node_key(seed, hop, static_cast<uint64_t>(v)),
             out);
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
  at::Tensor edges;    // int64 [edges], CSR positions (kOncePerNode only)
};

// Draws one hop for `rows` frontier nodes: counts, offsets, then the picks in parallel.
HopDraw draw_hop(const CsrGraph& graph, const int64_t* frontier, int64_t rows, int64_t fanout,
                 uint64_t seed, uint64_t hop, bool with_edges) {
  const int64_t* indptr = graph.indptr.data_ptr<int64_t>();
  HopDraw draw;
  draw.offsets = at::empty({rows + 1}, at::kLong);
  int64_t* offsets = draw.offsets.data_ptr<int64_t>();
  offsets[0] = 0;
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t d = indptr[frontier[i] + 1] - indptr[frontier[i]];
    offsets[i + 1] = offsets[i] + uniform_pick::pick_count(d, fanout);
  }
  draw.picked = at::empty({offsets[rows]}, at::kLong);
  int64_t* edges = nullptr;
  if (with_edges) {
    draw.edges = at::empty({offsets[rows]}, at::kLong);
    edges = draw.edges.data_ptr<int64_t>();
  }
  int64_t* picked = draw.picked.data_ptr<int64_t>();
  if (graph.indices.scalar_type() == at::kInt) {
    sample_hop(indptr, graph.indices.data_ptr<int32_t>(), frontier, rows, seed, hop, offsets,
               picked, edges);
  } else {
    sample_hop(indptr, graph.indices.data_ptr<int64_t>(), frontier, rows, seed, hop, offsets,
               picked, edges);
  }
  return draw;
}

}  // namespace

NeighborSampler::NeighborSampler(const CsrGraph& graph, std::vector<int64_t> fanouts,
                                 SampleMode mode)
    : graph_(graph),
      fanouts_(std::move(fanouts)),
      mode_(mode),
      degree_(graph.degrees().to(at::kFloat)) {
  DGNN_CHECK_ARG(!fanouts_.empty(), "fanouts",
                 "the list is empty; give one value per layer, e.g. 10,10");
  for (int64_t f : fanouts_) {
    DGNN_CHECK_ARG(f > 0 || f == -1, "fanouts", f,
                   " is invalid; use a positive count or -1 for all");
  }
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

MiniBatch NeighborSampler::sample(const at::Tensor& seeds_in, uint64_t seed) const {
  DGNN_CHECK_ARG(seeds_in.dim() == 1, "seeds", "must be a 1-D tensor");
  const at::Tensor seeds = seeds_in.to(at::kLong).contiguous();
  const int64_t num_nodes = graph_.num_nodes();
  auto ws = acquire();
  std::vector<int32_t>& local = ws->local;

  std::vector<int64_t> nodes(seeds.data_ptr<int64_t>(), seeds.data_ptr<int64_t>() + seeds.numel());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const int64_t v = nodes[i];
    if (v < 0 || v >= num_nodes || local[v] >= 0) {
      for (size_t j = 0; j < i; ++j) local[nodes[j]] = -1;
      release(std::move(ws));
      DGNN_CHECK_INDEX(v >= 0 && v < num_nodes, "seed node ", v, " is out of range for ", num_nodes,
                       " nodes");
      fail_argument("seeds", "node ", v, " appears twice; seeds must be distinct");
    }
    local[v] = static_cast<int32_t>(i);
  }

  MiniBatch batch;
  batch.seeds = seeds;
  batch.hop_nodes = {static_cast<int64_t>(nodes.size())};
  const bool once = mode_ == SampleMode::kOncePerNode;
  std::vector<at::Tensor> offsets, picked_of, edges;  // per hop
  std::vector<int64_t> row_end;
  int64_t row_begin = 0;
  for (size_t hop = 0; hop < fanouts_.size(); ++hop) {
    // Sampling finishes before relabelling appends to `nodes`, so the pointer stays valid.
    const auto end = static_cast<int64_t>(nodes.size());
    HopDraw draw = draw_hop(graph_, nodes.data() + row_begin, end - row_begin, fanouts_[hop], seed,
                            static_cast<uint64_t>(hop), once);
    // Relabel to local ids in order of first appearance (serial: the order is the contract).
    int64_t* picked = draw.picked.data_ptr<int64_t>();
    for (int64_t e = 0; e < draw.picked.numel(); ++e) {
      const int64_t v = picked[e];
      if (local[v] < 0) {
        local[v] = static_cast<int32_t>(nodes.size());
        nodes.push_back(v);
      }
      picked[e] = local[v];
    }
    batch.hop_nodes.push_back(static_cast<int64_t>(nodes.size()) - end);
    batch.hop_edges.push_back(draw.picked.numel());
    row_end.push_back(end);
    if (once) row_begin = end;
    offsets.push_back(std::move(draw.offsets));
    picked_of.push_back(std::move(draw.picked));
    edges.push_back(std::move(draw.edges));
  }
  for (int64_t v : nodes) local[v] = -1;
  release(std::move(ws));

  batch.blocks =
      once ? prefix_blocks(offsets, picked_of, row_end) : hop_blocks(offsets, picked_of, row_end);
  if (once) batch.edge_ids = at::cat(edges);
  batch.input_nodes = at::tensor(nodes, at::kLong);
  set_sources(batch, degree_);
  return batch;
}

}  // namespace directgnn::cpu
