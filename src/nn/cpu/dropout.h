// The CPU twin of dropout's mask (nn/dropout.h is the front door).
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>

namespace directgnn::cpu {

// The mask (0 or 1/(1-p)) for the float32 CPU tensor `x`: element i is kept when its 24-bit draw
// of nn/dropout_hash.h for (seed, i) is at least p. Parallel over elements; the same mask
// whatever the number of threads.
at::Tensor dropout_mask(const at::Tensor& x, uint64_t seed, double p);

}  // namespace directgnn::cpu
