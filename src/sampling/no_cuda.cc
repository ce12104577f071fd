// The GPU twin of the sampler in builds without CUDA: its constructor says so
// (sampling/gpu_sampler.h).
#include "directgnn/error.h"
#include "gpu/runtime.h"
#include "sampling/gpu_sampler.h"

namespace directgnn::gpu {

struct NeighborSampler::Impl {};

NeighborSampler::NeighborSampler(const CsrGraph&, const SamplerOptions&, const at::Tensor&) {
  fail_argument("sampler", "gpu needs a GPU, but ", unavailable_reason(), "; set sampler to cpu");
}

NeighborSampler::~NeighborSampler() = default;

MiniBatch NeighborSampler::sample(const at::Tensor&, uint64_t) const {
  fail_argument("sampler", "gpu needs a GPU, but ", unavailable_reason());
}

}  // namespace directgnn::gpu
