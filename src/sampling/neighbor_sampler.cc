#include "sampling/neighbor_sampler.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <sstream>

#include "core/random.h"
#include "directgnn/error.h"

namespace directgnn {

// A global-to-local id map over all nodes (-1 = not yet in the batch), reset after each use
// by walking only the ids the batch touched.
struct NeighborSampler::Workspace {
  std::vector<int32_t> local;
};

namespace {

// Writes the positions of k distinct uniform picks out of d neighbours to out[0..k).
inline void choose(int64_t d, int64_t k, SplitRng& rng, int64_t* out) {
  if (k >= d) {
    for (int64_t j = 0; j < d; ++j) out[j] = j;
    return;
  }
  if (k <= 32) {
    // Floyd's algorithm: k draws, each either a fresh position or the newest one.
    int64_t* picked = out;
    for (int64_t j = d - k, n = 0; j < d; ++j, ++n) {
      const auto t = static_cast<int64_t>(rng.below(j + 1));
      const bool seen = std::find(picked, picked + n, t) != picked + n;
      picked[n] = seen ? j : t;
    }
    return;
  }
  // Selection sampling (Knuth's algorithm S): one pass, no extra memory.
  int64_t chosen = 0;
  for (int64_t j = 0; j < d && chosen < k; ++j) {
    if (rng.below(d - j) < static_cast<uint64_t>(k - chosen)) out[chosen++] = j;
  }
}

// One hop: row i of the frontier draws offsets[i + 1] - offsets[i] neighbours into `picked`
// (global ids) and, when `edges` is given, their CSR positions into `edges`.
template <typename Id>
void sample_hop(const int64_t* indptr, const Id* indices, const int64_t* frontier, int64_t rows,
                uint64_t stream, const int64_t* offsets, int64_t* picked, int64_t* edges) {
  at::parallel_for(0, rows, 256, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t v = frontier[i], first = indptr[v];
      const int64_t k = offsets[i + 1] - offsets[i];
      SplitRng rng(mix64(stream, static_cast<uint64_t>(i)));
      int64_t* out = picked + offsets[i];
      choose(indptr[v + 1] - first, k, rng, out);
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
                 uint64_t stream, bool with_edges) {
  const int64_t* indptr = graph.indptr.data_ptr<int64_t>();
  HopDraw draw;
  draw.offsets = at::empty({rows + 1}, at::kLong);
  int64_t* offsets = draw.offsets.data_ptr<int64_t>();
  offsets[0] = 0;
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t d = indptr[frontier[i] + 1] - indptr[frontier[i]];
    offsets[i + 1] = offsets[i] + (fanout < 0 ? d : std::min(d, fanout));
  }
  draw.picked = at::empty({offsets[rows]}, at::kLong);
  int64_t* edges = nullptr;
  if (with_edges) {
    draw.edges = at::empty({offsets[rows]}, at::kLong);
    edges = draw.edges.data_ptr<int64_t>();
  }
  int64_t* picked = draw.picked.data_ptr<int64_t>();
  if (graph.indices.scalar_type() == at::kInt) {
    sample_hop(indptr, graph.indices.data_ptr<int32_t>(), frontier, rows, stream, offsets, picked,
               edges);
  } else {
    sample_hop(indptr, graph.indices.data_ptr<int64_t>(), frontier, rows, stream, offsets, picked,
               edges);
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
    HopDraw draw = draw_hop(graph_, nodes.data() + row_begin, end - row_begin, fanouts_[hop],
                            mix64(seed, static_cast<uint64_t>(hop)), once);
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

std::vector<int64_t> parse_fanouts(const std::string& text, int64_t layers) {
  std::vector<int64_t> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t used = 0;
    int64_t value = 0;
    try {
      value = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    DGNN_CHECK_ARG(used == item.size() && !item.empty(), "fanouts", "'", text, "': '", item,
                   "' is not an integer; give a comma-separated list such as 10,10");
    out.push_back(value);
  }
  check_fanouts(out, layers);
  return out;
}

void check_fanouts(const std::vector<int64_t>& fanouts, int64_t layers) {
  const std::string text = fanout_text(fanouts);
  for (const int64_t value : fanouts) {
    DGNN_CHECK_ARG(value > 0 || value == -1, "fanouts", "'", text, "': ", value,
                   " is invalid; each fan-out must be positive, or -1 for all neighbours");
  }
  DGNN_CHECK_ARG(static_cast<int64_t>(fanouts.size()) == layers, "fanouts", "'", text, "' has ",
                 fanouts.size(), " value(s) but layers is ", layers,
                 "; give one fan-out per layer");
}

std::string fanout_text(const std::vector<int64_t>& fanouts) {
  std::string text;
  for (const int64_t f : fanouts) text += (text.empty() ? "" : ",") + std::to_string(f);
  return text;
}

}  // namespace directgnn
