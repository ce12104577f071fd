#include "sampling/sampler.h"

#include <ATen/ATen.h>

#include <sstream>

#include "directgnn/error.h"
#include "sampling/cpu/neighbor_sampler.h"
#include "sampling/gpu_sampler.h"

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

Sampler::Sampler(const CsrGraph& graph, SamplerOptions options, std::shared_ptr<HopSource> hops)
    : graph_(graph), options_(std::move(options)) {
  DGNN_CHECK_ARG(!options_.fanouts.empty(), "fanouts",
                 "the list is empty; give one value per layer, e.g. 10,10");
  check_fanouts(options_.fanouts, static_cast<int64_t>(options_.fanouts.size()));
  DGNN_CHECK_TYPE(graph.indptr.is_contiguous() && graph.indices.is_contiguous() &&
                      graph.indptr.device().is_cpu() && graph.indices.device().is_cpu(),
                  "sampler: the graph must be contiguous CPU tensors");
  DGNN_CHECK_ARG(options_.device.is_cpu() || options_.device.is_cuda(), "device",
                 "the sampler runs on the CPU or a GPU, not ", options_.device.str());
  DGNN_CHECK_ARG(!options_.weighted || graph.weights.defined(), "weighted",
                 "weighted sampling draws by edge weights, but the graph has none; give one "
                 "weight per edge (a dataset directory's edge_weights.npy) or sample uniformly");
  DGNN_CHECK_TYPE(!graph.weights.defined() ||
                      (graph.weights.scalar_type() == at::kFloat && graph.weights.is_contiguous() &&
                       graph.weights.device().is_cpu()),
                  "sampler: edge weights must be a contiguous float32 CPU tensor (validate_csr "
                  "makes them one)");
  DGNN_CHECK_ARG(hops == nullptr || (options_.device.is_cpu() && !options_.edge_ids), "sampler",
                 "a partitioned structure is sampled on the CPU, without edge ids");
  // The CPU twin also gives the degrees (which the GPU twin copies) and the CPU's samples.
  cpu_ = std::make_unique<cpu::NeighborSampler>(graph, options_, std::move(hops));
  if (options_.device.is_cuda()) {
    if (!options_.device.has_index()) options_.device = c10::Device(c10::kCUDA, 0);
    gpu_ = std::make_unique<gpu::NeighborSampler>(graph, options_, cpu_->degrees());
  }
}

Sampler::~Sampler() = default;

MiniBatch Sampler::sample(const at::Tensor& seeds, uint64_t seed,
                          const ExcludedPairs* exclude) const {
  DGNN_CHECK_ARG(seeds.dim() == 1, "seeds", "must be a 1-D tensor");
  DGNN_CHECK_TYPE(seeds.scalar_type() == at::kLong || seeds.scalar_type() == at::kInt,
                  "seeds must be int64 or int32, got ", seeds.scalar_type());
  if (gpu_ == nullptr) return cpu_->sample(seeds.cpu(), seed, exclude);  // checks the seeds
  check_seeds(seeds, graph_.num_nodes());
  const bool excluding = exclude != nullptr && !exclude->empty();
  return gpu_->sample(seeds, seed, excluding ? &exclude->pairs() : nullptr);
}

const at::Tensor& Sampler::degrees() const { return cpu_->degrees(); }

void check_seeds(const at::Tensor& seeds, int64_t num_nodes) {
  if (seeds.numel() == 0) return;
  const auto [lo, hi] = at::aminmax(seeds);
  const int64_t low = lo.item<int64_t>(), high = hi.item<int64_t>();
  DGNN_CHECK_INDEX(low >= 0 && high < num_nodes, "seed node ", low < 0 ? low : high,
                   " is out of range for ", num_nodes, " nodes");
  const at::Tensor sorted = std::get<0>(seeds.to(at::kLong).sort());
  const at::Tensor twice = sorted.slice(0, 1).eq(sorted.slice(0, 0, -1)).nonzero();
  DGNN_CHECK_ARG(twice.numel() == 0, "seeds", "node ",
                 twice.numel() > 0 ? sorted[twice[0][0].item<int64_t>()].item<int64_t>() : 0,
                 " appears twice; seeds must be distinct");
}

std::vector<int64_t> parse_fanouts(const std::string& text, int64_t layers, bool zero_draws_none) {
  std::vector<int64_t> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t used = 0;
    int64_t value = 0;
    try {
      value = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    DGNN_CHECK_ARG(used == item.size() && !item.empty(), "fanouts", "'", text, "': '", item,
                   "' is not an integer; give a comma-separated list such as 10,10");
    out.push_back(value);
  }
  check_fanouts(out, layers, zero_draws_none);
  return out;
}

void check_fanouts(const std::vector<int64_t>& fanouts, int64_t layers, bool zero_draws_none) {
  const std::string text = fanout_text(fanouts);
  for (const int64_t value : fanouts) {
    DGNN_CHECK_ARG(value > 0 || value == -1 || (zero_draws_none && value == 0), "fanouts", "'",
                   text, "': ", value, " is invalid; each fan-out must be positive, or -1 for all ",
                   "neighbours", zero_draws_none ? ", or 0 for none" : "");
  }
  DGNN_CHECK_ARG(static_cast<int64_t>(fanouts.size()) == layers, "fanouts", "'", text, "' has ",
                 fanouts.size(), " value(s) but layers is ", layers,
                 "; give one fan-out per layer");
}

std::string fanout_text(const std::vector<int64_t>& fanouts) {
  std::string text;
  for (const int64_t f : fanouts) text += (text.empty() ? "" : ",") + std::to_string(f);
  return text;
}

}  // namespace directgnn
