// The GPU twin of the heterogeneous sampler (sampling/hetero_sampler.h). Per hop and relation, in
// dataset order, the homogeneous sampler's kernels (sampling/cuda/sample_kernels.h) count and
// draw each destination's picks from the relation's CSR, keyed as the CPU sampler keys them
// (seed, relation, hop, node): the same neighbours come out, bitwise. The picks are relabelled
// as tensor operations on the GPU (relabel_first_seen), relation after relation, so each type's
// nodes come in the CPU's order of first appearance and the blocks, input nodes and degrees
// (with options.degrees) equal the CPU's, on the device. Each relation's arrays are read in
// place from pinned host memory (registered read-only), or copied to the GPU (`graph` device;
// arrays under 16 MiB always, as a small one may share a page with other memory).
// Builds whose torch has CUDA implement it in sampling/cuda/hetero_neighbor_sampler.cc;
// others link sampling/no_cuda.cc, whose constructor says this build has no CUDA.
//
// Not here: the seed-edge exclusion of heterogeneous link prediction (its loader samples on the
// CPU), and PyG's hops (sample_hops).
#pragma once

#include <ATen/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "graph/hetero_graph.h"
#include "sampling/hetero_sampler.h"
#include "sampling/sampler.h"

namespace directgnn::gpu {

class HeteroNeighborSampler {
 public:
  // The dataset must outlive the sampler; `device` is a CUDA device with an index.
  HeteroNeighborSampler(const HeteroDataset& dataset, HeteroSamplerOptions options,
                        c10::Device device, GraphPlacement graph = GraphPlacement::kPinned);
  ~HeteroNeighborSampler();
  HeteroNeighborSampler(const HeteroNeighborSampler&) = delete;
  HeteroNeighborSampler& operator=(const HeteroNeighborSampler&) = delete;

  // The blocks for `seeds` (distinct int64 ids of `seed_type`, any device; checked) on torch's
  // current stream of the device: HeteroSampler::sample's result, with every
  // tensor on the device.
  HeteroMiniBatch sample(int seed_type, const at::Tensor& seeds, uint64_t seed) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace directgnn::gpu
