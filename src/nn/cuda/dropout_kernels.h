// The plain-CUDA kernel of dropout's mask over a raw pointer and a caller's stream (no torch
// types). The tensor glue is cuda/dropout.cc.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace directgnn::cuda {

// mask[i] = keep where the 24-bit draw of nn/dropout_hash.h for (seed, i) is >= threshold, else 0.
void launch_dropout_mask(float* mask, int64_t n, uint64_t seed, uint32_t threshold, float keep,
                         cudaStream_t stream);

}  // namespace directgnn::cuda
