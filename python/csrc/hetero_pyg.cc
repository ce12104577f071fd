// torch.classes.directgnn.HeteroPygSampler: PyG's heterogeneous NeighborSampler draw, one call
// of the library's HeteroSampler::sample_hops per batch (sampling/hetero_sampler.h): each node's
// neighbours are drawn once, at the hop after the one that first reaches it, and the fields come
// back as PyG's HeteroSamplerOutput holds them. `sample` seeds one node type (NeighborLoader),
// `sample_typed` several (LinkNeighborLoader: both endpoints' types).
#include <ATen/ATen.h>

#include <utility>

#include "directgnn/error.h"
#include "errors.h"
#include "hetero.h"
#include "sampling/hetero_sampler.h"

namespace directgnn::ops {
namespace {

// Node per type, then row, col and edge per relation (PyG's local source and destination ids,
// each edge's position in its relation's CSR), then per type the nodes first reached at each
// hop (seeds first) and per relation the edges drawn at each hop.
using PygHeteroResult =
    std::tuple<std::vector<at::Tensor>, std::vector<at::Tensor>, std::vector<at::Tensor>,
               std::vector<at::Tensor>, std::vector<std::vector<int64_t>>,
               std::vector<std::vector<int64_t>>>;

PygHeteroResult as_result(HeteroHops hops) {
  return {std::move(hops.nodes), std::move(hops.src),       std::move(hops.dst),
          std::move(hops.edge),  std::move(hops.hop_nodes), std::move(hops.hop_edges)};
}

HeteroSamplerOptions pyg_options(const HeteroDataset& ds,
                                 const std::vector<std::vector<int64_t>>& fanouts) {
  HeteroSamplerOptions options;
  options.fanouts = checked_hetero_fanouts(ds, fanouts, "directgnn.pyg.NeighborSampler");
  return options;
}

}  // namespace

class HeteroPygSamplerHolder : public torch::CustomClassHolder {
 public:
  HeteroPygSamplerHolder(c10::intrusive_ptr<HeteroGraphHolder> graph,
                         const std::vector<std::vector<int64_t>>& fanouts)
      : graph_(std::move(graph)),
        sampler_(graph_->dataset(), pyg_options(graph_->dataset(), fanouts)) {}

  PygHeteroResult sample(int64_t seed_type, const at::Tensor& seeds, int64_t seed) const {
    const HeteroDataset& ds = graph_->dataset();
    DGNN_CHECK_INDEX(seed_type >= 0 && seed_type < static_cast<int64_t>(ds.node_types.size()),
                     "node type index ", seed_type, " is out of range");
    return as_result(
        sampler_.sample_hops(static_cast<int>(seed_type), seeds, static_cast<uint64_t>(seed)));
  }

  // PyG's heterogeneous link sampling: seeds[t] the distinct seeds of node type t (an empty
  // tensor where none), each type's seeds first in its node list.
  PygHeteroResult sample_typed(const std::vector<at::Tensor>& seeds, int64_t seed) const {
    const HeteroDataset& ds = graph_->dataset();
    DGNN_CHECK(seeds.size() == ds.node_types.size(), "sample_typed takes one seed tensor per",
               " node type (", ds.node_types.size(), "; an empty one where none), got ",
               seeds.size());
    return as_result(sampler_.sample_hops(seeds, static_cast<uint64_t>(seed)));
  }

 private:
  c10::intrusive_ptr<HeteroGraphHolder> graph_;
  HeteroSampler sampler_;  // reads graph_'s dataset, so declared after it
};

void define_hetero_pyg(torch::Library& m) {
  m.class_<HeteroPygSamplerHolder>("HeteroPygSampler")
      .def(guarded_init<HeteroPygSamplerHolder, c10::intrusive_ptr<HeteroGraphHolder>,
                        std::vector<std::vector<int64_t>>>())
      .def("sample", guarded<&HeteroPygSamplerHolder::sample>)
      .def("sample_typed", guarded<&HeteroPygSamplerHolder::sample_typed>);
}

}  // namespace directgnn::ops
