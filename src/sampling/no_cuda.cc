// The GPU twins of the sampler and of the link sampler's negatives in builds without CUDA:
// their constructors say so (sampling/gpu_sampler.h, sampling/gpu_negatives.h,
// sampling/gpu_hetero_sampler.h).
#include "directgnn/error.h"
#include "gpu/runtime.h"
#include "sampling/gpu_sampler.h"

namespace directgnn::gpu {

struct NeighborSampler::Impl {};

NeighborSampler::NeighborSampler(const CsrGraph&, const SamplerOptions&, const at::Tensor&) {
  fail_argument("sampler", "gpu needs a GPU, but ", unavailable_reason(), "; set sampler to cpu");
}

NeighborSampler::~NeighborSampler() = default;

MiniBatch NeighborSampler::sample(const at::Tensor&, uint64_t, const at::Tensor*) const {
  fail_argument("sampler", "gpu needs a GPU, but ", unavailable_reason());
}

}  // namespace directgnn::gpu

#include "sampling/gpu_negatives.h"

namespace directgnn::gpu {

struct NegativeSampler::Impl {};

NegativeSampler::NegativeSampler(int64_t, const at::Tensor&, const EdgeLookup*, c10::Device,
                                 GraphPlacement) {
  fail_argument("sampler", "gpu needs a GPU, but ", unavailable_reason(), "; set sampler to cpu");
}

NegativeSampler::~NegativeSampler() = default;

at::Tensor NegativeSampler::draw(const at::Tensor&, int64_t, bool, uint64_t) const {
  fail_argument("sampler", "gpu needs a GPU, but ", unavailable_reason());
}

}  // namespace directgnn::gpu

#include "sampling/gpu_hetero_sampler.h"

namespace directgnn::gpu {

struct HeteroNeighborSampler::Impl {};

HeteroNeighborSampler::HeteroNeighborSampler(const HeteroDataset&, HeteroSamplerOptions,
                                             c10::Device, GraphPlacement) {
  fail_argument("sampler", "gpu needs a GPU, but ", unavailable_reason(), "; set sampler to cpu");
}

HeteroNeighborSampler::~HeteroNeighborSampler() = default;

HeteroMiniBatch HeteroNeighborSampler::sample(int, const at::Tensor&, uint64_t) const {
  fail_argument("sampler", "gpu needs a GPU, but ", unavailable_reason());
}

}  // namespace directgnn::gpu
