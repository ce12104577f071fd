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

namespace {

// Excluded edges u -> v as keys u·N + v, both directions, sorted and unique, on `device`.
at::Tensor excluded_keys(const at::Tensor& pairs, int64_t n, c10::Device device) {
  // 3,037,000,499² < 2^63: the keys of any graph of up to that many nodes fit in int64.
  DGNN_CHECK_ARG(n <= 3037000499LL, "exclude_seed_edges",
                 "the GPU sampler keys excluded pairs as u·N + v, which overflows for ", n,
                 " nodes; sample on the CPU");
  const at::Tensor p = pairs.to(device, at::kLong);
  const at::Tensor u = p.select(1, 0), v = p.select(1, 1);
  return std::get<0>(at::_unique(at::cat({u * n + v, v * n + u}), /*sorted=*/true));
}

// Drops the picks edge picked[e] -> frontier[row of e] whose key is in `keys`, keeping the rest
// in order: the CPU twin's drop_excluded as tensor operations (one host round trip: the count).
void drop_excluded(const at::Tensor& frontier, at::Tensor& offsets, at::Tensor& picked,
                   at::Tensor& edges, int64_t& total, const at::Tensor& keys, int64_t n) {
  if (total == 0) return;
  const at::Tensor counts = offsets.diff();
  const at::Tensor rows = at::arange(frontier.numel(), counts.options());
  const at::Tensor row = at::repeat_interleave(rows, counts, /*dim=*/0, total);
  const at::Tensor key = picked * n + frontier.index_select(0, row);
  const at::Tensor at_key = at::searchsorted(keys, key).clamp_max(keys.numel() - 1);
  const at::Tensor keep = keys.index_select(0, at_key).ne(key);
  const at::Tensor kept = at::zeros_like(counts).index_add_(0, row, keep.to(at::kLong));
  offsets = at::cat({at::zeros({1}, kept.options()), kept.cumsum(0)});
  const at::Tensor where = keep.nonzero().view(-1);
  total = where.numel();
  picked = picked.index_select(0, where);
  if (edges.defined()) edges = edges.index_select(0, where);
}

}  // namespace

MiniBatch NeighborSampler::sample(const at::Tensor& seeds_in, uint64_t seed,
                                  const at::Tensor* excluded) const {
  const Impl& s = *impl_;
  c10::cuda::CUDAGuard guard(s.options.device);
  MiniBatch batch;
  batch.seeds = seeds_in.to(s.options.device, at::kLong).contiguous();
  batch.hop_nodes = {batch.seeds.numel()};
  at::Tensor nodes = batch.seeds;
  const int64_t num_nodes = s.graph.num_nodes();
  const at::Tensor keys = excluded != nullptr && excluded->numel() > 0
                              ? excluded_keys(*excluded, num_nodes, s.options.device)
                              : at::Tensor();
  std::vector<HopCsr> hops;
  int64_t row_begin = 0;
  for (size_t hop = 0; hop < s.options.fanouts.size(); ++hop) {
    const cuda::HopView view{nullptr, 0, s.options.fanouts[hop], seed, hop};
    const int64_t n = nodes.numel();
    const at::Tensor frontier = nodes.narrow(0, row_begin, n - row_begin);
    const at::Tensor count = s.counts(frontier, view);
    at::Tensor offsets = at::cat({at::zeros({1}, count.options()), count.cumsum(0)});
    int64_t total = offsets[-1].item<int64_t>();  // the one size the host must know
    at::Tensor picked, edges;
    s.draw(frontier, view, offsets, total, picked, edges);
    if (keys.defined()) drop_excluded(frontier, offsets, picked, edges, total, keys, num_nodes);
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
