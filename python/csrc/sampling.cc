// torch.ops.directgnn.sample_neighbors and torch.classes.directgnn.NeighborSampler.
#include <ATen/ATen.h>
#include <torch/custom_class.h>

#include <memory>
#include <string>
#include <vector>

#include "classes.h"
#include "directgnn/error.h"
#include "errors.h"
#include "feature/feature_store.h"
#include "graph/csr_graph.h"
#include "loader/options.h"
#include "ops.h"
#include "sampling/device_sampler.h"
#include "sampling/neighbor_sampler.h"

namespace directgnn::ops {
namespace {

SampleResult sample_neighbors(const at::Tensor& indptr, const at::Tensor& indices,
                              const at::Tensor& seeds, std::vector<int64_t> fanouts, int64_t seed,
                              const std::string& mode) {
  CsrGraph graph{indptr.cpu(), indices.cpu()};
  validate_csr(graph, "directgnn.sample_neighbors");
  check_fanouts(fanouts, static_cast<int64_t>(fanouts.size()));
  const NeighborSampler sampler(graph, std::move(fanouts), sample_mode_arg(mode));
  return as_result(sampler.sample(seeds.cpu().to(at::kLong), static_cast<uint64_t>(seed)));
}

}  // namespace

SampleResult as_result(const MiniBatch& batch) {
  std::vector<at::Tensor> indptrs, indices;
  for (const Block& b : batch.blocks) {
    indptrs.push_back(b.indptr);
    indices.push_back(b.indices);
  }
  std::optional<at::Tensor> edges;
  if (batch.edge_ids.defined()) edges = batch.edge_ids;
  return {batch.input_nodes, indptrs, indices, edges, batch.hop_nodes, batch.hop_edges};
}

SampleMode sample_mode_arg(const std::string& mode) {
  if (mode == "dgl") return SampleMode::kFreshPerLayer;
  if (mode == "pyg") return SampleMode::kOncePerNode;
  fail_argument("mode", "'", mode,
                "' is not 'dgl' (each layer draws its neighbours anew) or 'pyg' (each node's "
                "neighbours are drawn once and every layer reuses them)");
}

SamplerHolder::SamplerHolder(at::Tensor indptr, at::Tensor indices, std::vector<int64_t> fanouts,
                             const std::string& device, const std::string& graph,
                             const std::string& mode)
    : device_(resolve_device(parse_device(device), nullptr)) {
  const SampleMode sample_mode = sample_mode_arg(mode);
  graph_.indptr = std::move(indptr);
  graph_.indices = std::move(indices);
  DGNN_CHECK_TYPE(
      graph_.indptr.is_cpu() && graph_.indices.is_cpu(),
      "directgnn.NeighborSampler: indptr and indices must be CPU tensors (a GPU sampler "
      "reads them pinned in place, or copies them with graph='device')");
  validate_csr(graph_, "directgnn.NeighborSampler");
  check_fanouts(fanouts, static_cast<int64_t>(fanouts.size()));
  if (device_.is_cuda()) {
    if (!device_.has_index()) device_ = c10::Device(c10::kCUDA, 0);
    device_sampler_ = std::make_unique<DeviceSampler>(graph_, std::move(fanouts), device_,
                                                      parse_graph_placement(graph), sample_mode);
  } else {
    sampler_ = std::make_unique<NeighborSampler>(graph_, std::move(fanouts), sample_mode);
  }
}

SampleResult SamplerHolder::sample(const at::Tensor& seeds_in, int64_t seed) const {
  DGNN_CHECK_TYPE(seeds_in.dim() == 1 &&
                      (seeds_in.scalar_type() == at::kLong || seeds_in.scalar_type() == at::kInt),
                  "directgnn.NeighborSampler.sample: seeds must be a 1-D int64 or int32 tensor");
  if (sampler_ != nullptr) {
    return as_result(sampler_->sample(seeds_in.cpu().to(at::kLong), static_cast<uint64_t>(seed)));
  }
  const at::Tensor seeds = seeds_in.to(device_).to(at::kLong).contiguous();
  // The GPU sampler trusts its seeds: checked here, on the device.
  if (seeds.numel() > 0) {
    const auto [lo, hi] = at::aminmax(seeds);
    const int64_t low = lo.item<int64_t>(), high = hi.item<int64_t>();
    DGNN_CHECK_INDEX(low >= 0 && high < graph_.num_nodes(),
                     "directgnn.NeighborSampler.sample: seed node ", low < 0 ? low : high,
                     " is out of range for ", graph_.num_nodes(), " nodes");
  }
  if (seeds.numel() > 1) {
    const at::Tensor sorted = std::get<0>(seeds.sort());
    DGNN_CHECK_ARG(!sorted.slice(0, 1).eq(sorted.slice(0, 0, -1)).any().item<bool>(), "seeds",
                   "a seed node appears twice; seeds must be distinct");
  }
  return as_result(device_sampler_->sample(seeds, static_cast<uint64_t>(seed)));
}

void define_sampling(torch::Library& m) {
  m.def(
      "sample_neighbors(Tensor indptr, Tensor indices, Tensor seeds, int[] fanouts, int seed=0, "
      "str mode='dgl') -> (Tensor, Tensor[], Tensor[], Tensor?, int[], int[])");
}

void impl_sampling(torch::Library& m) { m.impl("sample_neighbors", guarded<&sample_neighbors>); }

}  // namespace directgnn::ops
