// k-hop uniform neighbour sampling without replacement (the CPU implementation).
//
// Fan-outs are in PyG order, seed hop first: {15, 10, 5} takes up to 15 neighbours of each
// seed, 10 of each node reached at hop 1, 5 at hop 2; -1 takes all neighbours. A node with
// degree <= fan-out keeps all its neighbours. Output: one Block per hop, returned in layer
// order (blocks[0] is the outermost hop). SampleMode (sampling/block.h) says whether each
// layer draws anew (DGL's blocks, the default) or every node is drawn once (PyG's hops).
// Node ids are relabelled in order of first appearance. The result depends only on (graph,
// seeds, fan-outs, seed, mode), not on the number of threads: every destination node draws
// from its own random stream.
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "graph/csr_graph.h"
#include "sampling/block.h"

namespace directgnn {

class NeighborSampler {
 public:
  // `fanouts` must be non-empty; each entry positive or -1. The graph must outlive the sampler.
  NeighborSampler(const CsrGraph& graph, std::vector<int64_t> fanouts,
                  SampleMode mode = SampleMode::kFreshPerLayer);
  ~NeighborSampler();

  // Samples the blocks for `seeds` (int64 global ids, distinct). Thread-safe.
  MiniBatch sample(const at::Tensor& seeds, uint64_t seed) const;

  const std::vector<int64_t>& fanouts() const { return fanouts_; }
  SampleMode mode() const { return mode_; }
  // float32 [N]: each node's degree in the whole graph, as the blocks' degrees hold it.
  const at::Tensor& degrees() const { return degree_; }

 private:
  struct Workspace;
  std::unique_ptr<Workspace> acquire() const;
  void release(std::unique_ptr<Workspace> workspace) const;

  const CsrGraph& graph_;
  std::vector<int64_t> fanouts_;
  SampleMode mode_;
  at::Tensor degree_;  // float32 [N], for Block::src_degree
  mutable std::mutex mutex_;
  mutable std::vector<std::unique_ptr<Workspace>> free_;
};

// Parses "15,10,5" into fan-outs, checking the count against `layers` and every value.
std::vector<int64_t> parse_fanouts(const std::string& text, int64_t layers);
// The same checks on fan-outs given as numbers, and the fan-outs as text ("15,10,5").
void check_fanouts(const std::vector<int64_t>& fanouts, int64_t layers);
std::string fanout_text(const std::vector<int64_t>& fanouts);

}  // namespace directgnn
