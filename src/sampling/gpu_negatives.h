// The GPU twin of the link sampler's negatives (sampling/link_sampler.h): the draw of
// sampling/negative_draw.h, one CUDA thread per negative. Builds whose torch has CUDA implement
// it in sampling/cuda/link_negatives.cc; other builds link sampling/no_cuda.cc, whose
// constructor throws saying this build has no CUDA.
#pragma once

#include <ATen/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <memory>

#include "graph/edge_lookup.h"
#include "sampling/sampler.h"

namespace directgnn::gpu {

class NegativeSampler {
 public:
  // `cumulative`: degree^0.75 summed (float64 [N], CPU), or undefined for uniform draws;
  // `edges`: the lookup of exact negatives, or null. The cumulative weights are copied to
  // `device`; the lookup's rows are read in place through the pinned mapping when they are the
  // graph's own (sorted in place) and `graph` is pinned (the GPU sampler registered them),
  // else copied.
  NegativeSampler(int64_t num_nodes, const at::Tensor& cumulative, const EdgeLookup* edges,
                  c10::Device device, GraphPlacement graph);
  ~NegativeSampler();
  NegativeSampler(const NegativeSampler&) = delete;
  NegativeSampler& operator=(const NegativeSampler&) = delete;

  // `positives`: int64 [B, 2] on the device. binary: [K·B, 2] pairs; triplet: [B, K]
  // destinations, on the device's current stream. Throws (one host round trip) when an exact
  // negative found no non-edge.
  at::Tensor draw(const at::Tensor& positives, int64_t ratio, bool triplet, uint64_t seed) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace directgnn::gpu
