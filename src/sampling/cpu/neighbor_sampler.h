// The CPU twin of the neighbour sampler (sampling/sampler.h is the front door, and says what a
// sample is). Each frontier node's picks come from sampling/uniform_pick.h (or, weighted,
// sampling/weighted_pick.h), keyed by (seed, hop, node), in parallel; the relabelling to local
// ids, in order of first appearance, runs serially over a reused global-to-local map. Asked for
// them, it gives each sampled edge's CSR position (Block::edge_ids). The result depends only on
// (graph, seeds, options, seed), not on the number of threads, and equals the GPU twin's.
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "graph/csr_graph.h"
#include "sampling/block.h"
#include "sampling/excluded_pairs.h"
#include "sampling/sampler.h"

namespace directgnn::cpu {

// weighted_pick::key as this twin's file computes it (its compile flags decide whether the bits
// are the GPU's), for the test that checks them.
double weighted_key(uint64_t node_key, int64_t j, float w);

// One hop's draw for `frontier` (int64 global ids of rows `graph` holds) as the sampler below
// draws it: node v's picks keyed by (seed, hop, v), by the graph's weights when `weighted`.
HopPicks draw_rows(const CsrGraph& graph, const at::Tensor& frontier, int64_t fanout, uint64_t seed,
                   uint64_t hop, bool weighted);

class NeighborSampler {
 public:
  // `options.fanouts` must be non-empty; each entry positive or -1; `options.weighted` needs the
  // graph's weights. The graph must outlive the sampler. The device is not this twin's concern.
  NeighborSampler(const CsrGraph& graph, const SamplerOptions& options,
                  std::shared_ptr<HopSource> hops = nullptr);
  ~NeighborSampler();

  // Samples the blocks for `seeds` (int64 global ids, distinct), leaving out the edges that
  // `exclude` lists when given. Thread-safe.
  MiniBatch sample(const at::Tensor& seeds, uint64_t seed,
                   const ExcludedPairs* exclude = nullptr) const;

  const std::vector<int64_t>& fanouts() const { return options_.fanouts; }
  SampleMode mode() const { return options_.mode; }
  // float32 [N]: each node's degree in the whole graph, as the blocks' degrees hold it.
  const at::Tensor& degrees() const { return degree_; }

 private:
  struct Workspace;
  std::unique_ptr<Workspace> acquire() const;
  void release(std::unique_ptr<Workspace> workspace) const;

  const CsrGraph& graph_;
  SamplerOptions options_;
  std::shared_ptr<HopSource> hops_;  // a partitioned structure's draws (Sampler's constructor)
  at::Tensor degree_;                // float32 [N], for Block::src_degree
  mutable std::mutex mutex_;
  mutable std::vector<std::unique_ptr<Workspace>> free_;
};

}  // namespace directgnn::cpu
