// torch.ops.directgnn.sample_neighbors and torch.classes.directgnn.NeighborSampler.
#include <ATen/ATen.h>
#include <torch/custom_class.h>

#include <algorithm>
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
#include "sampling/induced.h"
#include "sampling/sampler.h"

namespace directgnn::ops {
namespace {

SampleResult sample_neighbors(const at::Tensor& indptr, const at::Tensor& indices,
                              const at::Tensor& seeds, std::vector<int64_t> fanouts, int64_t seed,
                              const std::string& mode, const std::optional<at::Tensor>& weights,
                              bool edge_ids) {
  CsrGraph graph{indptr.cpu().contiguous(), indices.cpu().contiguous(), {}};
  if (weights) graph.weights = weights->cpu();
  validate_csr(graph, "directgnn.sample_neighbors");
  SamplerOptions options;
  options.fanouts = std::move(fanouts);
  options.mode = sample_mode_arg(mode);
  options.weighted = weights.has_value();
  options.edge_ids = edge_ids;
  const Sampler sampler(graph, std::move(options));
  return as_result(sampler.sample(seeds.cpu(), static_cast<uint64_t>(seed)));
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> induced(const at::Tensor& indptr,
                                                       const at::Tensor& indices,
                                                       const at::Tensor& nodes) {
  CsrGraph graph{indptr.cpu().contiguous(), indices.cpu().contiguous(), {}};
  validate_csr(graph, "directgnn.induced_subgraph");
  InducedEdges edges = induced_subgraph(graph, nodes);
  return {edges.src, edges.dst, edges.edges};
}

}  // namespace

SampleResult as_result(const MiniBatch& batch) {
  std::vector<at::Tensor> indptrs, indices, edges;
  for (const Block& b : batch.blocks) {
    indptrs.push_back(b.indptr);
    indices.push_back(b.indices);
    if (b.edge_ids.defined()) edges.push_back(b.edge_ids);
  }
  return {batch.input_nodes, indptrs, indices, edges, batch.hop_nodes, batch.hop_edges};
}

namespace {

// Each edge's destination row of a CSR (int64 [num_edges]): a fill on the CPU, torch's
// repeat_interleave with the size given on a GPU (the host does not wait for the device).
at::Tensor edge_rows(const at::Tensor& indptr, int64_t num_edges) {
  if (!indptr.is_cpu()) return at::repeat_interleave(indptr.diff(), num_edges);
  at::Tensor rows = at::empty({num_edges}, at::kLong);
  const at::Tensor ptr = indptr.contiguous();
  const int64_t* p = ptr.data_ptr<int64_t>();
  int64_t* out = rows.data_ptr<int64_t>();
  for (int64_t r = 0; r + 1 < ptr.numel(); ++r)
    std::fill(out + p[r] - p[0], out + p[r + 1] - p[0], r);
  return rows;
}

}  // namespace

PygResult as_pyg_result(const MiniBatch& batch) {
  const Block& outer = batch.blocks.front();
  std::optional<at::Tensor> edge;
  if (outer.edge_ids.defined()) edge = outer.edge_ids;
  return {batch.input_nodes,
          outer.indices.to(at::kLong),
          edge_rows(outer.indptr, outer.num_edges()),
          edge,
          batch.hop_nodes,
          batch.hop_edges};
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
                             const std::string& mode, const std::optional<at::Tensor>& weights,
                             bool edge_ids) {
  SamplerOptions options;
  options.fanouts = std::move(fanouts);
  options.mode = sample_mode_arg(mode);
  pyg_mode_ = options.mode == SampleMode::kOncePerNode;
  options.weighted = weights.has_value();
  options.edge_ids = edge_ids;
  options.device = resolve_device(parse_device(device), nullptr);
  options.graph = parse_graph_placement(graph);
  graph_.indptr = std::move(indptr);
  graph_.indices = std::move(indices);
  if (weights) graph_.weights = *weights;
  DGNN_CHECK_TYPE(
      graph_.indptr.is_cpu() && graph_.indices.is_cpu() && (!weights || graph_.weights.is_cpu()),
      "directgnn.NeighborSampler: indptr, indices and weights must be CPU tensors (a GPU sampler "
      "reads them pinned in place, or copies them with graph='device')");
  validate_csr(graph_, "directgnn.NeighborSampler");
  sampler_ = std::make_unique<Sampler>(graph_, std::move(options));
}

SampleResult SamplerHolder::sample(const at::Tensor& seeds, int64_t seed) const {
  return as_result(sampler_->sample(seeds, static_cast<uint64_t>(seed)));
}

PygResult SamplerHolder::sample_pyg(const at::Tensor& seeds, int64_t seed) const {
  DGNN_CHECK_ARG(pyg_mode_, "mode",
                 "must be 'pyg' for PyG's fields (row, col, edge): mode 'dgl' draws each layer "
                 "anew, which they cannot express");
  return as_pyg_result(sampler_->sample(seeds, static_cast<uint64_t>(seed)));
}

void define_sampling(torch::Library& m) {
  m.def(
      "sample_neighbors(Tensor indptr, Tensor indices, Tensor seeds, int[] fanouts, int seed=0, "
      "str mode='dgl', Tensor? weights=None, bool edge_ids=False) -> (Tensor, Tensor[], Tensor[], "
      "Tensor[], int[], int[])");
  m.def(
      "induced_subgraph(Tensor indptr, Tensor indices, Tensor nodes) -> (Tensor, Tensor, Tensor)");
}

void impl_sampling(torch::Library& m) {
  m.impl("sample_neighbors", guarded<&sample_neighbors>);
  m.impl("induced_subgraph", guarded<&induced>);
}

}  // namespace directgnn::ops
