// Tensor glue of the heterogeneous GPU sampler (sampling/gpu_hetero_sampler.h): each relation's
// CSR pinned in place or copied to the GPU, the homogeneous count and pick kernels per relation
// on torch's current stream, and the relabelling as tensor operations.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include "core/random.h"
#include "directgnn/error.h"
#include "feature/feature_store.h"
#include "gpu/placement.h"
#include "gpu/runtime.h"
#include "sampling/cuda/sample_kernels.h"
#include "sampling/gpu_hetero_sampler.h"

namespace directgnn::gpu {

struct HeteroNeighborSampler::Impl {
  const HeteroDataset& dataset;
  HeteroSamplerOptions options;
  c10::Device device;
  std::vector<cuda::GraphView> views;         // per relation, as the kernels read it
  std::vector<at::Tensor> on_device;          // graph device: the copies
  std::vector<std::shared_ptr<void>> pinned;  // graph pinned: the registrations
  std::vector<RelationDegrees> degrees;       // with options.degrees, on the device

  Impl(const HeteroDataset& d, HeteroSamplerOptions o, c10::Device dev)
      : dataset(d), options(std::move(o)), device(dev) {}

  cudaStream_t stream() const { return c10::cuda::getCurrentCUDAStream(device.index()).stream(); }

  // Arrays under this size go to the GPU whatever `graph` says: a small array may share a page
  // with other memory, and a registration covers whole pages.
  static constexpr int64_t kSmallBytes = int64_t{16} << 20;

  const void* place(const at::Tensor& array, GraphPlacement graph) {
    if (graph == GraphPlacement::kDevice || array.nbytes() < kSmallBytes) {
      on_device.push_back(array.to(device));
      return on_device.back().data_ptr();
    }
    if (array.nbytes() == 0) return nullptr;
    pinned.push_back(pin_host_memory(array.data_ptr(), array.nbytes(), device.index()));
    return mapped_device_pointer(array.data_ptr());
  }

  // Relation r's draw for destinations `dst` (int64 on the device) at hop h: offsets [rows + 1]
  // and the picked sources' global ids.
  std::pair<at::Tensor, at::Tensor> draw(size_t r, const at::Tensor& dst, int64_t h,
                                         uint64_t seed) const {
    // The CPU sampler's keys: node_key(mix64(seed, r + 1, h), 0, node).
    const cuda::HopView hop{dst.data_ptr<int64_t>(), dst.numel(),
                            options.fanouts[r][static_cast<size_t>(h)],
                            mix64(seed, r + 1, static_cast<uint64_t>(h)), 0};
    at::Tensor counts = at::empty({dst.numel()}, dst.options());
    cuda::launch_pick_counts(views[r], hop, counts.data_ptr<int64_t>(), stream());
    const at::Tensor offsets = at::cat({at::zeros({1}, counts.options()), counts.cumsum(0)});
    const int64_t total = offsets[-1].item<int64_t>();  // the one size the host must know
    at::Tensor picked = at::empty({total}, dst.options());
    cuda::launch_pick_neighbors(views[r], hop, offsets.data_ptr<int64_t>(),
                                picked.data_ptr<int64_t>(), nullptr, stream());
    return {offsets, picked};
  }
};

HeteroNeighborSampler::HeteroNeighborSampler(const HeteroDataset& dataset,
                                             HeteroSamplerOptions options, c10::Device device,
                                             GraphPlacement graph)
    : impl_(std::make_unique<Impl>(dataset, std::move(options), device)) {
  DGNN_CHECK_ARG(available(), "sampler", "gpu needs a GPU, but ", unavailable_reason(),
                 "; set sampler to cpu");
  // The CPU sampler's checks of the fan-outs, which this one indexes by relation and hop (its
  // degrees, counted below for the device, are not needed for them).
  HeteroSamplerOptions fanouts = impl_->options;
  fanouts.degrees = false;
  const HeteroSampler checked(dataset, std::move(fanouts));
  c10::cuda::CUDAGuard guard(device);
  int64_t bytes = 0;
  for (const Relation& r : dataset.relations) {
    bytes += r.graph.indptr.nbytes() + r.graph.indices.nbytes();
  }
  if (graph == GraphPlacement::kDevice) {
    check_fits_on_device(bytes, device.index(), "graph", "device: the relations",
                         "set graph to pinned (the GPU samples them in host memory)");
  } else {
    check_pinnable(bytes, "graph", "pinned: the relations",
                   "set sampler to cpu (the CPU samples the memory-mapped relations)");
  }
  for (const Relation& r : dataset.relations) {
    cuda::GraphView view;
    view.indptr = static_cast<const int64_t*>(impl_->place(r.graph.indptr, graph));
    view.indices = impl_->place(r.graph.indices, graph);
    view.indices_int32 = r.graph.indices.scalar_type() == at::kInt;
    impl_->views.push_back(view);
  }
  if (impl_->options.degrees) {
    for (RelationDegrees d : relation_degrees(dataset)) {
      impl_->degrees.push_back({d.in.to(device), d.out.to(device)});
    }
  }
}

HeteroNeighborSampler::~HeteroNeighborSampler() = default;

HeteroMiniBatch HeteroNeighborSampler::sample(int seed_type, const at::Tensor& seeds_in,
                                              uint64_t seed) const {
  const Impl& s = *impl_;
  const HeteroDataset& ds = s.dataset;
  c10::cuda::CUDAGuard guard(s.device);
  const size_t types = ds.node_types.size();
  DGNN_CHECK(seed_type >= 0 && static_cast<size_t>(seed_type) < types, "seed type ", seed_type,
             " is out of range");
  const at::Tensor seeds = seeds_in.to(s.device, at::kLong).contiguous();
  DGNN_CHECK(seeds.dim() == 1, "seeds must be a 1-D tensor of node ids");
  check_ids_in_range(seeds, ds.node_types[static_cast<size_t>(seed_type)].count);
  // Distinct, as the CPU sampler requires: a repeated seed would shrink the relabelled list
  // under the blocks' counts.
  DGNN_CHECK(std::get<0>(at::_unique(seeds)).numel() == seeds.numel(),
             "the seeds repeat a node; give each seed once");
  std::vector<at::Tensor> nodes(types);
  for (size_t t = 0; t < types; ++t) {
    nodes[t] = static_cast<int>(t) == seed_type ? seeds : at::empty({0}, seeds.options());
  }
  HeteroMiniBatch batch;
  batch.seed_type = seed_type;
  batch.seeds = seeds;
  for (size_t t = 0; t < types; ++t) batch.num_seeds.push_back(nodes[t].numel());
  const int64_t H = static_cast<int64_t>(s.options.fanouts[0].size());
  batch.blocks.resize(static_cast<size_t>(H));
  for (int64_t h = 0; h < H; ++h) {
    HeteroBlock& block = batch.blocks[static_cast<size_t>(H - 1 - h)];
    for (size_t t = 0; t < types; ++t) block.num_dst.push_back(nodes[t].numel());
    for (size_t r = 0; r < ds.relations.size(); ++r) {
      const Relation& rel = ds.relations[r];
      const int64_t rows = block.num_dst[rel.dst_type];
      const at::Tensor dst = nodes[rel.dst_type].narrow(0, 0, rows);
      auto [offsets, picked] = s.draw(r, dst, h, seed);
      // The source type's nodes so far keep their places: distinct, and first.
      const int64_t before = nodes[rel.src_type].numel();
      auto [next, local] = relabel_first_seen(at::cat({nodes[rel.src_type], picked}));
      nodes[rel.src_type] = next;
      Block b;
      b.indptr = offsets;
      b.indices = local.narrow(0, before, picked.numel()).contiguous();
      b.num_dst = rows;
      block.relations.push_back(std::move(b));
    }
    for (size_t t = 0; t < types; ++t) block.num_src.push_back(nodes[t].numel());
    for (size_t r = 0; r < ds.relations.size(); ++r) {
      block.relations[r].num_src = block.num_src[ds.relations[r].src_type];
    }
  }
  batch.input_nodes = nodes;
  if (!s.degrees.empty()) {
    for (HeteroBlock& block : batch.blocks) {
      for (size_t r = 0; r < ds.relations.size(); ++r) {
        const Relation& rel = ds.relations[r];
        Block& b = block.relations[r];
        b.dst_degree = s.degrees[r].in.index_select(0, nodes[rel.dst_type].narrow(0, 0, b.num_dst));
        b.src_degree =
            s.degrees[r].out.index_select(0, nodes[rel.src_type].narrow(0, 0, b.num_src));
      }
    }
  }
  return batch;
}

}  // namespace directgnn::gpu
