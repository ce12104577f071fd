#include "nn/dropout.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <mutex>

#include "directgnn/error.h"
#include "nn/cpu/dropout.h"
#include "nn/gpu_dropout.h"

namespace directgnn {
namespace {

uint64_t next_seed() {
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  return gen.get<at::CPUGeneratorImpl>()->random64();
}

}  // namespace

at::Tensor dropout(const at::Tensor& x, double p, bool training) {
  if (!training || p <= 0) return x;
  DGNN_CHECK_ARG(p < 1, "dropout", "must be in [0, 1), got ", p);
  DGNN_CHECK_TYPE(x.scalar_type() == at::kFloat, "dropout: x must be float32, got ",
                  x.scalar_type());
  const uint64_t seed = next_seed();  // from the CPU generator, on every device
  const at::Tensor mask =
      x.is_cuda() ? gpu::dropout_mask(x, seed, p) : cpu::dropout_mask(x.contiguous(), seed, p);
  return x * mask;
}

}  // namespace directgnn
