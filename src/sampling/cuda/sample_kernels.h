// Plain-CUDA kernels of the GPU sampler over raw pointers and a caller's stream; no torch types,
// so they compile with nvcc on any machine. The tensor glue is cuda/neighbor_sampler.cc.
//
// `indptr` and `indices` are device-accessible addresses (GPU memory, or the device mapping of
// pinned host memory); `frontier`, `offsets` and the outputs live in GPU memory, and the
// frontier's ids are in range (the kernels trust them). Nothing is launched for an empty
// frontier. Errors throw directgnn::Error.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace directgnn::cuda {

// The graph as the kernels read it; `weights` (float32 per edge) null for uniform sampling.
struct GraphView {
  const int64_t* indptr = nullptr;
  const void* indices = nullptr;
  bool indices_int32 = false;
  const float* weights = nullptr;
};

// One hop's frontier and draw settings.
struct HopView {
  const int64_t* frontier = nullptr;
  int64_t n = 0;
  int64_t fanout = 0;
  uint64_t seed = 0, hop = 0;
};

// counts[i]: how many neighbours frontier node i keeps at `fanout` (weighted: zero weights are
// never drawn, sampling/weighted_pick.h).
void launch_pick_counts(const GraphView& graph, const HopView& hop, int64_t* counts,
                        cudaStream_t stream);

// Frontier node i's picks (global ids) at out[offsets[i] .. offsets[i + 1]), drawn with
// sampling/uniform_pick.h (or weighted_pick.h) for (seed, hop, node), and, when `edges` is not
// null, their CSR positions at the same places.
void launch_pick_neighbors(const GraphView& graph, const HopView& hop, const int64_t* offsets,
                           int64_t* out, int64_t* edges, cudaStream_t stream);

}  // namespace directgnn::cuda
