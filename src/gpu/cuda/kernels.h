// Plain-CUDA launchers behind gpu/device.h: raw pointers and a stream, no torch.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace directgnn::gpu::kernels {

void launch_pick_counts(const int64_t* indptr, const int64_t* frontier, int64_t n, int64_t fanout,
                        int64_t* counts, cudaStream_t stream);

void launch_pick_neighbors(const int64_t* indptr, const void* indices, bool indices_int32,
                           const int64_t* frontier, int64_t n, int64_t fanout, uint64_t seed,
                           uint64_t hop, const int64_t* offsets, int64_t* out, cudaStream_t stream);

void launch_dropout_mask(float* mask, int64_t n, uint64_t seed, uint32_t threshold, float keep,
                         cudaStream_t stream);

}  // namespace directgnn::gpu::kernels
