// The GPU twin of dropout in builds without CUDA (nn/gpu_dropout.h): says so.
#include "directgnn/error.h"
#include "nn/gpu_dropout.h"

namespace directgnn::gpu {

at::Tensor dropout_mask(const at::Tensor&, uint64_t, double) {
  fail(
      "dropout on a GPU tensor, but this build of directgnn has no CUDA (DIRECTGNN_CUDA=OFF, or "
      "a CPU-only torch)");
}

}  // namespace directgnn::gpu
