// Tensor glue of the GPU negatives: the cumulative degree weights and, for exact negatives, the
// graph's sorted rows copied to the device; the kernel of negative_kernels.cu on torch's
// current stream.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include "directgnn/error.h"
#include "gpu/placement.h"
#include "gpu/runtime.h"
#include "sampling/cuda/negative_kernels.h"
#include "sampling/gpu_negatives.h"

namespace directgnn::gpu {

struct NegativeSampler::Impl {
  c10::Device device{c10::kCUDA, 0};
  at::Tensor cumulative, indptr, indices;  // on the device
  negative_draw::Source source;
};

NegativeSampler::NegativeSampler(int64_t num_nodes, const at::Tensor& cumulative,
                                 const EdgeLookup* edges, c10::Device device)
    : impl_(std::make_unique<Impl>()) {
  DGNN_CHECK_ARG(available(), "sampler", "gpu needs a GPU, but ", unavailable_reason(),
                 "; set sampler to cpu");
  c10::cuda::CUDAGuard guard(device);
  Impl& s = *impl_;
  s.device = device;
  s.source.num_nodes = num_nodes;
  if (cumulative.defined()) {
    s.cumulative = cumulative.to(device, at::kDouble).contiguous();
    s.source.cumulative = s.cumulative.data_ptr<double>();
  }
  if (edges != nullptr) {
    const int64_t bytes = edges->indptr().nbytes() + edges->sorted_indices().nbytes();
    check_fits_on_device(bytes, device.index(), "exact_negatives",
                         "exact negatives on the GPU: the graph's rows",
                         "sample on the CPU, or drop exact negatives");
    s.indptr = edges->indptr().to(device);
    s.indices = edges->sorted_indices().to(device);
    s.source.indptr = s.indptr.data_ptr<int64_t>();
    if (s.indices.scalar_type() == at::kInt) {
      s.source.ids32 = s.indices.data_ptr<int32_t>();
    } else {
      s.source.ids64 = s.indices.data_ptr<int64_t>();
    }
  }
}

NegativeSampler::~NegativeSampler() = default;

at::Tensor NegativeSampler::draw(const at::Tensor& positives, int64_t ratio, bool triplet,
                                 uint64_t seed) const {
  const Impl& s = *impl_;
  c10::cuda::CUDAGuard guard(s.device);
  const at::Tensor pos = positives.to(s.device, at::kLong).contiguous();
  const int64_t b = pos.size(0);
  const auto options = at::TensorOptions(s.device).dtype(at::kLong);
  at::Tensor out = triplet ? at::empty({b, ratio}, options) : at::empty({ratio * b, 2}, options);
  at::Tensor failed = at::zeros({1}, at::TensorOptions(s.device).dtype(at::kInt));
  const cuda::NegativeJob job{pos.data_ptr<int64_t>(), b, ratio, triplet, seed};
  cuda::launch_draw_negatives(s.source, job, out.data_ptr<int64_t>(), failed.data_ptr<int>(),
                              c10::cuda::getCurrentCUDAStream(s.device.index()).stream());
  if (s.source.indptr != nullptr) {
    DGNN_CHECK_ARG(failed.item<int>() == 0, "exact_negatives",
                   "found no pair that is not an edge "
                   "in ",
                   negative_draw::kExactTries,
                   " random tries: the graph is too dense for "
                   "exact negatives; drop exact negatives (PyG does not make them exact either)");
  }
  return out;
}

}  // namespace directgnn::gpu
