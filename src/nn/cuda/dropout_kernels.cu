// The kernel of dropout's mask. The arithmetic is nn/dropout_hash.h, which the CPU twin runs too.
#include <algorithm>

#include "core/cuda_check.h"
#include "nn/cuda/dropout_kernels.h"
#include "nn/dropout_hash.h"

namespace directgnn::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void dropout_mask_kernel(float* __restrict__ mask, int64_t n, uint64_t seed,
                                    uint32_t threshold, float keep) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const uint32_t key = dropout_hash::slice_key(seed, static_cast<uint64_t>(i >> 32));
    mask[i] = dropout_hash::draw24(key, static_cast<uint32_t>(i)) >= threshold ? keep : 0.0f;
  }
}

}  // namespace

void launch_dropout_mask(float* mask, int64_t n, uint64_t seed, uint32_t threshold, float keep,
                         cudaStream_t stream) {
  if (n == 0) return;
  const int64_t blocks = std::min<int64_t>((n + kThreads - 1) / kThreads, 65535 * 16);
  dropout_mask_kernel<<<static_cast<int>(blocks), kThreads, 0, stream>>>(mask, n, seed, threshold,
                                                                         keep);
  check_launch(stream, "dropout_mask_kernel", __FILE__, __LINE__);
}

}  // namespace directgnn::cuda
