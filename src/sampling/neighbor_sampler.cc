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

// Writes k distinct uniform picks out of the neighbours nbr[0..d) to out[0..k).
template <typename Id>
void choose(const Id* nbr, int64_t d, int64_t k, SplitRng& rng, int64_t* out) {
  if (k >= d) {
    for (int64_t j = 0; j < d; ++j) out[j] = nbr[j];
    return;
  }
  if (k <= 32) {
    // Floyd's algorithm: k draws, each either a fresh position or the newest one.
    int64_t picked[32];
    for (int64_t j = d - k, n = 0; j < d; ++j, ++n) {
      const auto t = static_cast<int64_t>(rng.below(j + 1));
      const bool seen = std::find(picked, picked + n, t) != picked + n;
      picked[n] = seen ? j : t;
    }
    for (int64_t j = 0; j < k; ++j) out[j] = nbr[picked[j]];
    return;
  }
  // Selection sampling (Knuth's algorithm S): one pass, no extra memory.
  int64_t chosen = 0;
  for (int64_t j = 0; j < d && chosen < k; ++j) {
    if (rng.below(d - j) < static_cast<uint64_t>(k - chosen)) out[chosen++] = nbr[j];
  }
}

template <typename Id>
void sample_hop(const int64_t* indptr, const Id* indices, const int64_t* frontier, int64_t n_dst,
                uint64_t stream, const int64_t* offsets, int64_t* picked) {
  at::parallel_for(0, n_dst, 256, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t v = frontier[i];
      const int64_t d = indptr[v + 1] - indptr[v];
      const int64_t k = offsets[i + 1] - offsets[i];
      SplitRng rng(mix64(stream, static_cast<uint64_t>(i)));
      choose(indices + indptr[v], d, k, rng, picked + offsets[i]);
    }
  });
}

}  // namespace

NeighborSampler::NeighborSampler(const CsrGraph& graph, std::vector<int64_t> fanouts)
    : graph_(graph), fanouts_(std::move(fanouts)), degree_(graph.degrees().to(at::kFloat)) {
  DGNN_CHECK(!fanouts_.empty(), "fan-out list is empty; give one value per layer, e.g. 10,10");
  for (int64_t f : fanouts_) {
    DGNN_CHECK(f > 0 || f == -1, "fan-out ", f, " is invalid; use a positive count or -1 for all");
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
  DGNN_CHECK(seeds_in.dim() == 1, "seed nodes must be a 1-D tensor");
  const at::Tensor seeds = seeds_in.to(at::kLong).contiguous();
  const int64_t num_nodes = graph_.num_nodes();
  const int64_t* indptr = graph_.indptr.data_ptr<int64_t>();
  auto ws = acquire();
  std::vector<int32_t>& local = ws->local;

  std::vector<int64_t> nodes(seeds.data_ptr<int64_t>(), seeds.data_ptr<int64_t>() + seeds.numel());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const int64_t v = nodes[i];
    if (v < 0 || v >= num_nodes || local[v] >= 0) {
      for (size_t j = 0; j < i; ++j) local[nodes[j]] = -1;
      release(std::move(ws));
      DGNN_CHECK(v >= 0 && v < num_nodes, "seed node ", v, " is out of range for ", num_nodes,
                 " nodes");
      fail("seed node ", v, " appears twice; seeds must be distinct");
    }
    local[v] = static_cast<int32_t>(i);
  }

  MiniBatch batch;
  batch.seeds = seeds;
  const auto hops = static_cast<int64_t>(fanouts_.size());
  std::vector<Block> blocks(hops);
  for (int64_t hop = 0; hop < hops; ++hop) {
    const int64_t fanout = fanouts_[hop];
    // This hop's destinations are every node reached so far: the first n_dst of `nodes`.
    // Sampling finishes before relabelling appends to `nodes`, so the pointer stays valid.
    const auto n_dst = static_cast<int64_t>(nodes.size());
    const int64_t* frontier = nodes.data();
    Block& block = blocks[hops - 1 - hop];
    block.num_dst = n_dst;
    block.indptr = at::empty({n_dst + 1}, at::kLong);
    int64_t* offsets = block.indptr.data_ptr<int64_t>();
    offsets[0] = 0;
    for (int64_t i = 0; i < n_dst; ++i) {
      const int64_t d = indptr[frontier[i] + 1] - indptr[frontier[i]];
      offsets[i + 1] = offsets[i] + (fanout < 0 ? d : std::min(d, fanout));
    }
    const int64_t num_edges = offsets[n_dst];
    block.indices = at::empty({num_edges}, at::kLong);
    int64_t* picked = block.indices.data_ptr<int64_t>();
    const uint64_t stream = mix64(seed, static_cast<uint64_t>(hop));
    if (graph_.indices.scalar_type() == at::kInt) {
      sample_hop(indptr, graph_.indices.data_ptr<int32_t>(), frontier, n_dst, stream, offsets,
                 picked);
    } else {
      sample_hop(indptr, graph_.indices.data_ptr<int64_t>(), frontier, n_dst, stream, offsets,
                 picked);
    }
    // Relabel to local ids in order of first appearance (serial: the order is the contract).
    for (int64_t e = 0; e < num_edges; ++e) {
      const int64_t v = picked[e];
      if (local[v] < 0) {
        local[v] = static_cast<int32_t>(nodes.size());
        nodes.push_back(v);
      }
      picked[e] = local[v];
    }
    block.num_src = static_cast<int64_t>(nodes.size());
  }
  for (int64_t v : nodes) local[v] = -1;
  release(std::move(ws));

  batch.input_nodes = at::tensor(nodes, at::kLong);
  for (Block& block : blocks) {
    block.src_degree = degree_.index_select(0, batch.input_nodes.narrow(0, 0, block.num_src));
    block.dst_degree = block.src_degree.narrow(0, 0, block.num_dst);
  }
  batch.blocks = std::move(blocks);
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
    DGNN_CHECK(used == item.size() && !item.empty(), "--fan-out '", text, "': '", item,
               "' is not an integer; give a comma-separated list such as 10,10");
    out.push_back(value);
  }
  check_fanouts(out, layers);
  return out;
}

void check_fanouts(const std::vector<int64_t>& fanouts, int64_t layers) {
  const std::string text = fanout_text(fanouts);
  for (const int64_t value : fanouts) {
    DGNN_CHECK(value > 0 || value == -1, "--fan-out '", text, "': ", value,
               " is invalid; each fan-out must be positive, or -1 for all neighbours");
  }
  DGNN_CHECK(static_cast<int64_t>(fanouts.size()) == layers, "--fan-out '", text, "' has ",
             fanouts.size(), " value(s) but --layers is ", layers, "; give one fan-out per layer");
}

std::string fanout_text(const std::vector<int64_t>& fanouts) {
  std::string text;
  for (const int64_t f : fanouts) text += (text.empty() ? "" : ",") + std::to_string(f);
  return text;
}

}  // namespace directgnn
