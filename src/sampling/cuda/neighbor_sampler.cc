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
  at::Tensor degree;                          // float32 [N] on the device
  std::vector<at::Tensor> on_device;          // graph device: the copies
  std::vector<std::shared_ptr<void>> pinned;  // graph pinned: the registrations
  cuda::GraphView view;                       // as the kernels read the graph

  Impl(const CsrGraph& g, const SamplerOptions& o) : graph(g), options(o) {}

  cudaStream_t stream() const {
    return c10::cuda::getCurrentCUDAStream(options.device.index()).stream();
  }

  // Per frontier node (int64 ids on the device), how many neighbours it keeps.
  at::Tensor counts(const at::Tensor& frontier, cuda::HopView hop) const {
    at::Tensor out = at::empty({frontier.numel()}, frontier.options());
    hop.frontier = frontier.data_ptr<int64_t>();
    hop.n = frontier.numel();
    cuda::launch_pick_counts(view, hop, out.data_ptr<int64_t>(), stream());
    return out;
  }

  // Each frontier node's picks (global ids) at picks[offsets[i] .. offsets[i + 1]), and their
  // CSR positions in `edges` when asked for.
  void draw(const at::Tensor& frontier, cuda::HopView hop, const at::Tensor& offsets, int64_t total,
            at::Tensor& picks, at::Tensor& edges) const {
    picks = at::empty({total}, frontier.options());
    if (options.edge_ids) edges = at::empty({total}, frontier.options());
    hop.frontier = frontier.data_ptr<int64_t>();
    hop.n = frontier.numel();
    cuda::launch_pick_neighbors(view, hop, offsets.data_ptr<int64_t>(), picks.data_ptr<int64_t>(),
                                options.edge_ids ? edges.data_ptr<int64_t>() : nullptr, stream());
  }

  const void* place(const at::Tensor& array);
  void place_graph();
};

// One of the graph's arrays where the kernels read it: copied to the GPU (device), or
// registered in place and read through its mapped device address (pinned).
const void* NeighborSampler::Impl::place(const at::Tensor& array) {
  if (options.graph == GraphPlacement::kDevice) {
    on_device.push_back(array.to(options.device));
    return on_device.back().data_ptr();
  }
  if (array.nbytes() == 0) return nullptr;
  pinned.push_back(pin_host_memory(array.data_ptr(), array.nbytes(), options.device.index()));
  return mapped_device_pointer(array.data_ptr());
}

void NeighborSampler::Impl::place_graph() {
  const bool weighted = options.weighted;
  const int64_t bytes =
      graph.indptr.nbytes() + graph.indices.nbytes() + (weighted ? graph.weights.nbytes() : 0);
  if (options.graph == GraphPlacement::kDevice) {
    check_fits_on_device(bytes, options.device.index(), "graph", "device: the graph",
                         "set graph to pinned (the GPU samples it in host memory)");
  } else {
    check_pinnable(bytes, "graph", "pinned: the graph",
                   "set sampler to cpu (the CPU samples the memory-mapped graph)");
  }
  view.indptr = static_cast<const int64_t*>(place(graph.indptr));
  view.indices = place(graph.indices);
  view.indices_int32 = graph.indices.scalar_type() == at::kInt;
  if (weighted) view.weights = static_cast<const float*>(place(graph.weights));
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
  std::vector<HopCsr> hops;
  int64_t row_begin = 0;
  for (size_t hop = 0; hop < s.options.fanouts.size(); ++hop) {
    const cuda::HopView view{nullptr, 0, s.options.fanouts[hop], seed, hop};
    const int64_t n = nodes.numel();
    const at::Tensor frontier = nodes.narrow(0, row_begin, n - row_begin);
    const at::Tensor count = s.counts(frontier, view);
    const at::Tensor offsets = at::cat({at::zeros({1}, count.options()), count.cumsum(0)});
    const int64_t total = offsets[-1].item<int64_t>();  // the one size the host must know
    at::Tensor picked, edges;
    s.draw(frontier, view, offsets, total, picked, edges);
    // The nodes so far keep their places: they are distinct and come first.
    auto [next, local] = relabel_first_seen(at::cat({nodes, picked}));
    hops.push_back({offsets, local.narrow(0, n, total).contiguous(), edges, n});
    batch.hop_nodes.push_back(next.numel() - n);
    batch.hop_edges.push_back(total);
    if (s.options.mode == SampleMode::kOncePerNode) row_begin = n;
    nodes = next;
  }
  batch.input_nodes = nodes;
  batch.blocks =
      s.options.mode == SampleMode::kOncePerNode ? prefix_blocks(hops) : hop_blocks(hops);
  set_sources(batch, s.degree);
  return batch;
}

}  // namespace directgnn::gpu
