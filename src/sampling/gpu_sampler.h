// The GPU twin of the neighbour sampler, as the front door (sampling/sampler.cc) sees it. Builds
// whose torch has CUDA implement it in sampling/cuda/neighbor_sampler.cc; other builds link
// sampling/no_cuda.cc, whose constructor throws saying this build has no CUDA. Callers never test
// for CUDA at compile time.
//
// Per hop, a kernel counts each frontier node's picks, a scan turns counts into offsets, a kernel
// writes the picks (one warp per node, sampling/uniform_pick.h), and relabelling runs as tensor
// operations on the GPU (relabel_first_seen, sampling/block.h): no host round trip but the number
// of picks.
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <memory>

#include "graph/csr_graph.h"
#include "sampling/block.h"
#include "sampling/sampler.h"

namespace directgnn::gpu {

class NeighborSampler {
 public:
  // `options.device` is a CUDA device with an index; `degrees` the graph's (float32 [N], CPU),
  // copied to the device. Pins or copies the graph as options.graph says.
  NeighborSampler(const CsrGraph& graph, const SamplerOptions& options, const at::Tensor& degrees);
  ~NeighborSampler();
  NeighborSampler(const NeighborSampler&) = delete;
  NeighborSampler& operator=(const NeighborSampler&) = delete;

  // Seeds distinct and in range (the front door checks them), on any device. Runs on the
  // device's current stream; the result is on the device, with edge ids when asked. Picks
  // u -> v where (u, v) or (v, u) is a row of `excluded` (int64 [B, 2], any device) are
  // dropped after each hop's draw, as the CPU twin drops them.
  MiniBatch sample(const at::Tensor& seeds, uint64_t seed,
                   const at::Tensor* excluded = nullptr) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace directgnn::gpu
