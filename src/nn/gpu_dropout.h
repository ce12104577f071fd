// The GPU twin of dropout's mask (nn/dropout.h is the front door): nn/cuda/dropout.cc where torch
// has CUDA, nn/no_cuda.cc (throws) elsewhere.
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>

namespace directgnn::gpu {

// The mask (0 or 1/(1-p)) for the float32 CUDA tensor `x`, on its device and current stream: the
// same elements the CPU twin keeps for `seed` (nn/dropout_hash.h).
at::Tensor dropout_mask(const at::Tensor& x, uint64_t seed, double p);

}  // namespace directgnn::gpu
