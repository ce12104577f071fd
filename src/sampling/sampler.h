// The neighbour sampler's front door: k-hop uniform sampling without replacement, routed by
// device to its CPU twin (sampling/cpu/neighbor_sampler.h) or its GPU twin
// (sampling/gpu_sampler.h; kernels in sampling/cuda/). Both draw each node's neighbours with the
// one pick of sampling/uniform_pick.h, so for the same seed they give the same blocks.
//
// Fan-outs are in PyG order, seed hop first: {15, 10, 5} takes up to 15 neighbours of each
// seed, 10 of each node reached at hop 1, 5 at hop 2; -1 takes all neighbours. A node with
// degree <= fan-out keeps all its neighbours, in CSR order. Weighted sampling
// (sampling/weighted_pick.h) draws each neighbour with probability proportional to its edge's
// weight among those left, from the graph's weights. Output: one Block per hop in layer
// order (blocks[0] is the outermost hop). SampleMode (sampling/block.h) says whether each layer
// draws anew (DGL's blocks, the default) or every node is drawn once (PyG's hops). Node ids are
// relabelled in order of first appearance, seeds first. The result depends only on (graph,
// seeds, fan-outs, seed, mode), not on the device or the number of threads.
//
// Where the GPU twin reads the graph: pinned registers the CSR arrays in place and the kernels
// read them over PCIe (a graph larger than GPU memory samples on the GPU); device copies them
// to the GPU once. Either twin gives each block's edge ids when asked (Block::edge_ids).
#pragma once

#include <ATen/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graph/csr_graph.h"
#include "sampling/block.h"
#include "sampling/excluded_pairs.h"

namespace directgnn {

enum class GraphPlacement { kPinned, kDevice };
GraphPlacement parse_graph_placement(const std::string& name);
std::string graph_placement_name(GraphPlacement placement);

// One hop's draw for a frontier: a CSR over its rows, in global ids.
struct HopPicks {
  at::Tensor offsets;  // int64 [rows + 1]
  at::Tensor picked;   // int64 [edges]
};

// The rows of a graph spread over processes (a partitioned structure: each holds the in-edges
// of the nodes it owns; dist/hop_exchange.h). Every hop's picks come from draw(), which asks
// the frontier rows' owners: a collective, called once per hop by every process in step (an
// empty frontier still takes part), one call at a time.
class HopSource {
 public:
  virtual ~HopSource() = default;
  // The picks of `frontier` (int64 global ids) as sampling/cpu/neighbor_sampler.h draws them:
  // keyed by (seed, hop, node), so the same as one process with the whole graph draws.
  virtual HopPicks draw(const at::Tensor& frontier, int64_t fanout, uint64_t seed,
                        uint64_t hop) = 0;
  // float32 [N]: every node's degree in the whole graph (Block::src_degree).
  virtual const at::Tensor& degrees() const = 0;
};

struct SamplerOptions {
  std::vector<int64_t> fanouts;  // per hop, seed hop first; each positive or -1 (all)
  SampleMode mode = SampleMode::kFreshPerLayer;
  // Where sampling runs and the blocks are delivered: the CPU or a CUDA device (on its current
  // stream).
  c10::Device device{c10::kCPU};
  GraphPlacement graph = GraphPlacement::kPinned;  // what the GPU twin reads
  bool weighted = false;  // draw by the graph's edge weights (CsrGraph::weights, required)
  bool edge_ids = false;  // give each block's edge ids (Block::edge_ids)
};

namespace cpu {
class NeighborSampler;
}
namespace gpu {
class NeighborSampler;
}

class Sampler {
 public:
  // The graph (contiguous CPU tensors) must outlive the sampler. `hops`: a partitioned
  // structure's draws (CPU only, no edge ids), every hop's picks then asked of their owners
  // (the graph holds this process's rows only); null: the graph is whole, drawn here.
  Sampler(const CsrGraph& graph, SamplerOptions options, std::shared_ptr<HopSource> hops = nullptr);
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // The blocks for `seeds` (distinct int64 or int32 node ids, on any device; checked). Safe to
  // call from several threads at once. Edges that `exclude` lists (a pair or its reverse) are
  // left out of the neighbourhoods after the draw, so a node next to an excluded pair may keep
  // fewer than its fan-out (as DGL's and GraphBolt's exclusion); both twins drop the same picks.
  MiniBatch sample(const at::Tensor& seeds, uint64_t seed,
                   const ExcludedPairs* exclude = nullptr) const;

  const SamplerOptions& options() const { return options_; }
  bool on_gpu() const { return gpu_ != nullptr; }
  // float32 [N] on the CPU: each node's degree in the whole graph, as the blocks hold it.
  const at::Tensor& degrees() const;

 private:
  const CsrGraph& graph_;
  SamplerOptions options_;
  std::unique_ptr<cpu::NeighborSampler> cpu_;
  std::unique_ptr<gpu::NeighborSampler> gpu_;
};

// Throws naming the first seed out of [0, num_nodes) (OutOfRange) or one that appears twice
// (InvalidArgument); `seeds` is 1-D int32 or int64, on any device.
void check_seeds(const at::Tensor& seeds, int64_t num_nodes);

// Parses "15,10,5" into fan-outs, checking the count against `layers` and every value: each
// positive or -1 (every neighbour); with `zero_draws_none` (one relation of a heterogeneous
// graph) also 0, no neighbour at that hop, as PyG's num_neighbors allows.
std::vector<int64_t> parse_fanouts(const std::string& text, int64_t layers,
                                   bool zero_draws_none = false);
// The same checks on fan-outs given as numbers, and the fan-outs as text ("15,10,5").
void check_fanouts(const std::vector<int64_t>& fanouts, int64_t layers,
                   bool zero_draws_none = false);
std::string fanout_text(const std::vector<int64_t>& fanouts);

}  // namespace directgnn
