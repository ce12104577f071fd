// The negatives kernel of the link sampler's GPU twin, over raw device pointers and a caller's
// stream (no torch types): one thread per negative, each the draw of sampling/negative_draw.h
// that the CPU link sampler runs, so both give the same negatives for a seed.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "sampling/negative_draw.h"

namespace directgnn::cuda {

struct NegativeJob {
  const int64_t* positives = nullptr;  // int64 [B, 2] (src, dst) on the device
  int64_t batch = 0;                   // B
  int64_t ratio = 1;                   // K
  bool triplet = false;                // K destinations per positive's source, else K·B pairs
  uint64_t seed = 0;
};

// binary: out is [K·B, 2] pairs; triplet: [B, K] destinations. `failed` (one int on the
// device, zeroed by the caller; null without exact negatives, which cannot fail) becomes 1
// when an exact negative found no non-edge.
void launch_draw_negatives(const negative_draw::Source& source, const NegativeJob& job,
                           int64_t* out, int* failed, cudaStream_t stream);

}  // namespace directgnn::cuda
