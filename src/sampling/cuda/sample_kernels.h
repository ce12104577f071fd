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

// counts[i]: how many neighbours frontier node i keeps at `fanout`.
void launch_pick_counts(const int64_t* indptr, const int64_t* frontier, int64_t n, int64_t fanout,
                        int64_t* counts, cudaStream_t stream);

// Frontier node i's picks (global ids) at out[offsets[i] .. offsets[i + 1]), drawn with
// sampling/uniform_pick.h for (seed, hop, node).
void launch_pick_neighbors(const int64_t* indptr, const void* indices, bool indices_int32,
                           const int64_t* frontier, int64_t n, int64_t fanout, uint64_t seed,
                           uint64_t hop, const int64_t* offsets, int64_t* out, cudaStream_t stream);

}  // namespace directgnn::cuda
