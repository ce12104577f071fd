// Tensor glue of dropout's GPU mask: the kernel of dropout_kernels.cu on torch's current stream.
// Built only where torch has CUDA (elsewhere nn/no_cuda.cc stands in).
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>

#include "directgnn/error.h"
#include "nn/cuda/dropout_kernels.h"
#include "nn/dropout_hash.h"
#include "nn/gpu_dropout.h"

namespace directgnn::gpu {

at::Tensor dropout_mask(const at::Tensor& x, uint64_t seed, double p) {
  DGNN_CHECK_TYPE(x.is_cuda() && x.scalar_type() == at::kFloat,
                  "GPU dropout: x must be float32 on a GPU");
  at::Tensor mask = at::empty(x.sizes(), x.options().requires_grad(false));
  cuda::launch_dropout_mask(mask.data_ptr<float>(), mask.numel(), seed, dropout_hash::threshold(p),
                            static_cast<float>(1.0 / (1.0 - p)),
                            c10::cuda::getCurrentCUDAStream(x.get_device()));
  return mask;
}

}  // namespace directgnn::gpu
