// The GPU neighbour sampler: the same semantics as NeighborSampler (uniform without
// replacement, PyG fan-out order, -1 = all, relabelling in order of first appearance, seeds
// first, and both SampleModes), built for a GPU that reads the CSR graph where it lies:
// - pinned: the graph's own host memory is registered in place and read by the kernels over
//   PCIe (zero-copy, as the feature table), so a graph larger than GPU memory samples on the
//   GPU;
// - device: the graph is copied to GPU memory once (when it fits).
// Per hop, a kernel counts each frontier node's picks, a scan turns counts into offsets, a
// kernel writes the picks (sampling/uniform_pick.h), and de-duplication and relabelling run
// as tensor operations on the GPU (unique, first occurrence by scatter-min, sort): no host
// round trip except the sizes of the outputs.
//
// Constructed for the CPU, the same algorithm runs on CPU tensors with the same picks (the
// kernels' arithmetic): the tests check it against the invariants of sampling here.
#pragma once

#include <ATen/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "graph/csr_graph.h"
#include "sampling/block.h"

namespace directgnn {

enum class GraphPlacement { kPinned, kDevice };
GraphPlacement parse_graph_placement(const std::string& name);
std::string graph_placement_name(GraphPlacement placement);

class DeviceSampler {
 public:
  // The graph must outlive the sampler. `device` is a CUDA device, or the CPU.
  DeviceSampler(const CsrGraph& graph, std::vector<int64_t> fanouts, c10::Device device,
                GraphPlacement placement = GraphPlacement::kPinned,
                SampleMode mode = SampleMode::kFreshPerLayer);
  ~DeviceSampler();

  // Samples the blocks for `seeds` (distinct int64 ids, on any device). The result's tensors
  // are on the sampler's device. Runs on the current stream. (No edge ids: MiniBatch::edge_ids
  // stays undefined.)
  MiniBatch sample(const at::Tensor& seeds, uint64_t seed) const;

  c10::Device device() const { return device_; }

 private:
  at::Tensor counts(const at::Tensor& frontier, int64_t fanout) const;
  at::Tensor picks(const at::Tensor& frontier, int64_t fanout, uint64_t seed, uint64_t hop,
                   const at::Tensor& offsets, int64_t total) const;

  const CsrGraph& graph_;
  std::vector<int64_t> fanouts_;
  c10::Device device_;
  SampleMode mode_;
  at::Tensor degree_;                    // float32 [N] on the device
  at::Tensor indptr_dev_, indices_dev_;  // device placement
  std::shared_ptr<void> pin_indptr_, pin_indices_;
  const int64_t* indptr_ptr_ = nullptr;  // as the kernels read them
  const void* indices_ptr_ = nullptr;
};

// The nodes of `ids` in order of first appearance, and each element's position in that list.
std::pair<at::Tensor, at::Tensor> relabel_first_seen(const at::Tensor& ids);

}  // namespace directgnn
