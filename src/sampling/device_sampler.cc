#include "sampling/device_sampler.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "directgnn/error.h"
#include "feature/gpu_gather.h"
#include "gpu/device.h"
#include "gpu/placement.h"
#include "sampling/uniform_pick.h"

namespace directgnn {

GraphPlacement parse_graph_placement(const std::string& name) {
  if (name == "pinned") return GraphPlacement::kPinned;
  if (name == "device") return GraphPlacement::kDevice;
  fail_argument("graph", "'", name,
                "' is not a graph placement; use pinned (the GPU samples the graph in host "
                "memory) or device");
}

std::string graph_placement_name(GraphPlacement placement) {
  return placement == GraphPlacement::kPinned ? "pinned" : "device";
}

std::pair<at::Tensor, at::Tensor> relabel_first_seen(const at::Tensor& ids) {
  const auto unique = at::_unique2(ids, /*sorted=*/true, /*return_inverse=*/true,
                                   /*return_counts=*/true);
  const at::Tensor& values = std::get<0>(unique);
  const at::Tensor inverse = std::get<1>(unique).view({-1});
  const at::Tensor& counts = std::get<2>(unique);
  // A stable sort of the inverse groups each value's positions in input order: the first of
  // each group is the value's first appearance.
  const at::Tensor by_value = std::get<1>(at::sort(inverse, /*stable=*/true, 0, false));
  const at::Tensor group_start = counts.cumsum(0) - counts;
  const at::Tensor first = by_value.index_select(0, group_start);
  const at::Tensor order = std::get<1>(first.sort());
  const at::Tensor nodes = values.index_select(0, order);
  at::Tensor rank = at::empty_like(order);
  rank.index_put_({order}, at::arange(order.numel(), order.options()));
  return {nodes, rank.index_select(0, inverse)};
}

DeviceSampler::DeviceSampler(const CsrGraph& graph, std::vector<int64_t> fanouts,
                             c10::Device device, GraphPlacement placement, SampleMode mode)
    : graph_(graph), fanouts_(std::move(fanouts)), device_(device), mode_(mode) {
  DGNN_CHECK_ARG(!fanouts_.empty(), "fanouts", "at least one fan-out is needed");
  for (const int64_t f : fanouts_) {
    DGNN_CHECK_ARG(f > 0 || f == -1, "fanouts", "fan-out ", f, " must be positive or -1 (all)");
  }
  DGNN_CHECK(graph.indptr.is_contiguous() && graph.indices.is_contiguous() &&
                 graph.indptr.device().is_cpu(),
             "sampler: the graph must be contiguous CPU tensors");
  DGNN_CHECK_ARG(device_.is_cpu() || device_.is_cuda(), "device",
                 "the sampler runs on the CPU "
                 "or a GPU, not ",
                 device_.str());
  if (device_.is_cuda()) {
    DGNN_CHECK_ARG(gpu::available(), "sampler", "gpu needs a GPU, but ", gpu::unavailable_reason(),
                   "; set sampler to cpu");
  }
  degree_ = graph.degrees().to(at::kFloat).to(device_);
  if (device_.is_cpu()) return;
  const int index = device_.index() < 0 ? 0 : device_.index();
  const int64_t bytes = graph.indptr.nbytes() + graph.indices.nbytes();
  if (placement == GraphPlacement::kDevice) {
    gpu::check_fits_on_device(bytes, index, "graph", "device: the graph",
                              "set graph to pinned (the GPU samples it in host memory)");
    indptr_dev_ = graph.indptr.to(device_);
    indices_dev_ = graph.indices.to(device_);
    indptr_ptr_ = indptr_dev_.data_ptr<int64_t>();
    indices_ptr_ = indices_dev_.data_ptr();
    return;
  }
  // Pinned in place: the kernels read the host arrays through their mapped device addresses.
  gpu::check_pinnable(bytes, "graph", "pinned: the graph",
                      "set sampler to cpu (the CPU samples the memory-mapped graph)");
  pin_indptr_ = gpu::pin_host_memory(graph.indptr.data_ptr(), graph.indptr.nbytes(), index);
  indptr_ptr_ = static_cast<const int64_t*>(gpu::mapped_device_pointer(graph.indptr.data_ptr()));
  if (graph.indices.nbytes() > 0) {
    pin_indices_ = gpu::pin_host_memory(graph.indices.data_ptr(), graph.indices.nbytes(), index);
    indices_ptr_ = gpu::mapped_device_pointer(graph.indices.data_ptr());
  }
}

DeviceSampler::~DeviceSampler() = default;

at::Tensor DeviceSampler::counts(const at::Tensor& frontier, int64_t fanout) const {
  if (device_.is_cuda()) {
    const int index = device_.index() < 0 ? 0 : device_.index();
    return gpu::pick_counts(
        {indptr_ptr_, indices_ptr_, graph_.indices.scalar_type() == at::kInt, index}, frontier,
        fanout);
  }
  at::Tensor out = at::empty({frontier.numel()}, frontier.options());
  const int64_t* f = frontier.data_ptr<int64_t>();
  const int64_t* ptr = graph_.indptr.data_ptr<int64_t>();
  int64_t* c = out.data_ptr<int64_t>();
  for (int64_t i = 0; i < frontier.numel(); ++i) {
    c[i] = uniform_pick::pick_count(ptr[f[i] + 1] - ptr[f[i]], fanout);
  }
  return out;
}

at::Tensor DeviceSampler::picks(const at::Tensor& frontier, int64_t fanout, uint64_t seed,
                                uint64_t hop, const at::Tensor& offsets, int64_t total) const {
  at::Tensor out = at::empty({total}, frontier.options());
  if (device_.is_cuda()) {
    const int index = device_.index() < 0 ? 0 : device_.index();
    gpu::pick_neighbors(
        {indptr_ptr_, indices_ptr_, graph_.indices.scalar_type() == at::kInt, index}, frontier,
        fanout, seed, hop, offsets, out);
    return out;
  }
  // The kernel's work, one frontier node at a time.
  const int64_t* f = frontier.data_ptr<int64_t>();
  const int64_t* ptr = graph_.indptr.data_ptr<int64_t>();
  const int64_t* off = offsets.data_ptr<int64_t>();
  int64_t* o = out.data_ptr<int64_t>();
  auto run = [&](const auto* indices) {
    at::parallel_for(0, frontier.numel(), 64, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t first = ptr[f[i]], deg = ptr[f[i] + 1] - first;
        const uint64_t key = uniform_pick::node_key(seed, hop, static_cast<uint64_t>(f[i]));
        for (int64_t j = 0; j < off[i + 1] - off[i]; ++j) {
          o[off[i] + j] =
              static_cast<int64_t>(indices[first + uniform_pick::pick_offset(deg, fanout, key, j)]);
        }
      }
    });
  };
  if (graph_.indices.scalar_type() == at::kInt) {
    run(graph_.indices.data_ptr<int32_t>());
  } else {
    run(graph_.indices.data_ptr<int64_t>());
  }
  return out;
}

MiniBatch DeviceSampler::sample(const at::Tensor& seeds_in, uint64_t seed) const {
  MiniBatch batch;
  batch.seeds = seeds_in.to(device_, at::kLong).contiguous();
  batch.hop_nodes = {batch.seeds.numel()};
  at::Tensor nodes = batch.seeds;
  std::vector<at::Tensor> offsets_of, local_of;
  std::vector<int64_t> row_end;
  int64_t row_begin = 0;
  for (size_t hop = 0; hop < fanouts_.size(); ++hop) {
    const int64_t fanout = fanouts_[hop], n = nodes.numel();
    const at::Tensor frontier = nodes.narrow(0, row_begin, n - row_begin);
    const at::Tensor count = counts(frontier, fanout);
    const at::Tensor offsets = at::cat({at::zeros({1}, count.options()), count.cumsum(0)});
    const int64_t total = offsets[-1].item<int64_t>();  // the one size the host must know
    const at::Tensor picked = picks(frontier, fanout, seed, hop, offsets, total);
    // The nodes so far keep their places: they are distinct and come first.
    auto [next, local] = relabel_first_seen(at::cat({nodes, picked}));
    offsets_of.push_back(offsets);
    local_of.push_back(local.narrow(0, n, total).contiguous());
    batch.hop_nodes.push_back(next.numel() - n);
    batch.hop_edges.push_back(total);
    row_end.push_back(n);
    if (mode_ == SampleMode::kOncePerNode) row_begin = n;
    nodes = next;
  }
  batch.input_nodes = nodes;
  batch.blocks = mode_ == SampleMode::kOncePerNode ? prefix_blocks(offsets_of, local_of, row_end)
                                                   : hop_blocks(offsets_of, local_of, row_end);
  set_sources(batch, degree_);
  return batch;
}

}  // namespace directgnn
