// Tensor glue of the GPU sampler: the graph pinned in place or copied to the GPU, the count and
// pick kernels of sample_kernels.cu on torch's current stream, and the relabelling as tensor
// operations. Built only where torch has CUDA (elsewhere sampling/no_cuda.cc stands in).
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include "directgnn/error.h"
#include "gpu/placement.h"
#include "gpu/runtime.h"
#include "sampling/cuda/sample_kernels.h"
#include "sampling/gpu_sampler.h"

namespace directgnn::gpu {

struct NeighborSampler::Impl {
  const CsrGraph& graph;
  SamplerOptions options;
  at::Tensor degree;                   // float32 [N] on the device
  at::Tensor indptr_dev, indices_dev;  // graph device
  std::shared_ptr<void> pin_indptr, pin_indices;
  const int64_t* indptr = nullptr;  // as the kernels read them
  const void* indices = nullptr;
  bool indices_int32 = false;

  Impl(const CsrGraph& g, const SamplerOptions& o) : graph(g), options(o) {}

  cudaStream_t stream() const {
    return c10::cuda::getCurrentCUDAStream(options.device.index()).stream();
  }

  // Per frontier node (int64 ids on the device), how many neighbours it keeps at `fanout`.
  at::Tensor counts(const at::Tensor& frontier, int64_t fanout) const {
    at::Tensor out = at::empty({frontier.numel()}, frontier.options());
    cuda::launch_pick_counts(indptr, frontier.data_ptr<int64_t>(), frontier.numel(), fanout,
                             out.data_ptr<int64_t>(), stream());
    return out;
  }

  // Each frontier node's picks (global ids) at out[offsets[i] .. offsets[i + 1]).
  at::Tensor picks(const at::Tensor& frontier, int64_t fanout, uint64_t seed, uint64_t hop,
                   const at::Tensor& offsets, int64_t total) const {
    at::Tensor out = at::empty({total}, frontier.options());
    cuda::launch_pick_neighbors(indptr, indices, indices_int32, frontier.data_ptr<int64_t>(),
                                frontier.numel(), fanout, seed, hop, offsets.data_ptr<int64_t>(),
                                out.data_ptr<int64_t>(), stream());
    return out;
  }

  void place_graph();
};

// The graph where the kernels read it: copied to the GPU (device), or its host arrays registered
// in place and read through their mapped device addresses (pinned).
void NeighborSampler::Impl::place_graph() {
  const int index = options.device.index();
  const int64_t bytes = graph.indptr.nbytes() + graph.indices.nbytes();
  indices_int32 = graph.indices.scalar_type() == at::kInt;
  if (options.graph == GraphPlacement::kDevice) {
    check_fits_on_device(bytes, index, "graph", "device: the graph",
                         "set graph to pinned (the GPU samples it in host memory)");
    indptr_dev = graph.indptr.to(options.device);
    indices_dev = graph.indices.to(options.device);
    indptr = indptr_dev.data_ptr<int64_t>();
    indices = indices_dev.data_ptr();
    return;
  }
  check_pinnable(bytes, "graph", "pinned: the graph",
                 "set sampler to cpu (the CPU samples the memory-mapped graph)");
  pin_indptr = pin_host_memory(graph.indptr.data_ptr(), graph.indptr.nbytes(), index);
  indptr = static_cast<const int64_t*>(mapped_device_pointer(graph.indptr.data_ptr()));
  if (graph.indices.nbytes() > 0) {
    pin_indices = pin_host_memory(graph.indices.data_ptr(), graph.indices.nbytes(), index);
    indices = mapped_device_pointer(graph.indices.data_ptr());
  }
}

NeighborSampler::NeighborSampler(const CsrGraph& graph, const SamplerOptions& options,
                                 const at::Tensor& degrees)
    : impl_(std::make_unique<Impl>(graph, options)) {
  DGNN_CHECK_ARG(available(), "sampler", "gpu needs a GPU, but ", unavailable_reason(),
                 "; set sampler to cpu");
  c10::cuda::CUDAGuard guard(options.device);
  impl_->degree = degrees.to(options.device);
  impl_->place_graph();
}

NeighborSampler::~NeighborSampler() = default;

MiniBatch NeighborSampler::sample(const at::Tensor& seeds_in, uint64_t seed) const {
  const Impl& s = *impl_;
  c10::cuda::CUDAGuard guard(s.options.device);
  MiniBatch batch;
  batch.seeds = seeds_in.to(s.options.device, at::kLong).contiguous();
  batch.hop_nodes = {batch.seeds.numel()};
  at::Tensor nodes = batch.seeds;
  std::vector<at::Tensor> offsets_of, local_of;
  std::vector<int64_t> row_end;
  int64_t row_begin = 0;
  for (size_t hop = 0; hop < s.options.fanouts.size(); ++hop) {
    const int64_t fanout = s.options.fanouts[hop], n = nodes.numel();
    const at::Tensor frontier = nodes.narrow(0, row_begin, n - row_begin);
    const at::Tensor count = s.counts(frontier, fanout);
    const at::Tensor offsets = at::cat({at::zeros({1}, count.options()), count.cumsum(0)});
    const int64_t total = offsets[-1].item<int64_t>();  // the one size the host must know
    const at::Tensor picked = s.picks(frontier, fanout, seed, hop, offsets, total);
    // The nodes so far keep their places: they are distinct and come first.
    auto [next, local] = relabel_first_seen(at::cat({nodes, picked}));
    offsets_of.push_back(offsets);
    local_of.push_back(local.narrow(0, n, total).contiguous());
    batch.hop_nodes.push_back(next.numel() - n);
    batch.hop_edges.push_back(total);
    row_end.push_back(n);
    if (s.options.mode == SampleMode::kOncePerNode) row_begin = n;
    nodes = next;
  }
  batch.input_nodes = nodes;
  batch.blocks = s.options.mode == SampleMode::kOncePerNode
                     ? prefix_blocks(offsets_of, local_of, row_end)
                     : hop_blocks(offsets_of, local_of, row_end);
  set_sources(batch, s.degree);
  return batch;
}

}  // namespace directgnn::gpu
