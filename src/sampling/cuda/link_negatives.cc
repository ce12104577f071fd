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
  at::Tensor cumulative, indptr, indices;  // on the device (indptr, indices: when copied)
  negative_draw::Source source;

  void place_rows(const EdgeLookup& edges, GraphPlacement graph);
};

NegativeSampler::NegativeSampler(int64_t num_nodes, const at::Tensor& cumulative,
                                 const EdgeLookup* edges, c10::Device device, GraphPlacement graph)
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
  if (edges != nullptr) s.place_rows(*edges, graph);
}

// The rows exact negatives search: read in place through the sampler's pinned mapping when the
// graph's own rows are sorted (nothing copied), else copied to the GPU.
void NegativeSampler::Impl::place_rows(const EdgeLookup& edges, GraphPlacement graph) {
  const at::Tensor &ptr = edges.indptr(), &ids = edges.sorted_indices();
  const void *ptr_at = nullptr, *ids_at = nullptr;
  if (edges.sorted_in_place() && graph == GraphPlacement::kPinned) {
    // The GPU neighbour sampler registered these very arrays (sampling/cuda/neighbor_sampler.cc).
    ptr_at = mapped_device_pointer(ptr.data_ptr());
    ids_at = ids.numel() > 0 ? mapped_device_pointer(ids.data_ptr()) : nullptr;
  } else {
    check_fits_on_device(ptr.nbytes() + ids.nbytes(), device.index(), "exact_negatives",
                         "exact negatives on the GPU: the graph's sorted rows",
                         "sample on the CPU, or drop exact negatives");
    indptr = ptr.to(device);
    indices = ids.to(device);
    ptr_at = indptr.data_ptr();
    ids_at = indices.data_ptr();
  }
  source.indptr = static_cast<const int64_t*>(ptr_at);
  if (ids.scalar_type() == at::kInt) {
    source.ids32 = static_cast<const int32_t*>(ids_at);
  } else {
    source.ids64 = static_cast<const int64_t*>(ids_at);
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
  const bool exact = s.source.indptr != nullptr;
  at::Tensor failed = at::zeros({exact ? 1 : 0}, at::TensorOptions(s.device).dtype(at::kInt));
  const cuda::NegativeJob job{pos.data_ptr<int64_t>(), b, ratio, triplet, seed};
  cuda::launch_draw_negatives(s.source, job, out.data_ptr<int64_t>(),
                              exact ? failed.data_ptr<int>() : nullptr,
                              c10::cuda::getCurrentCUDAStream(s.device.index()).stream());
  if (exact) {
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
