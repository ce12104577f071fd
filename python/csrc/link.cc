// torch.classes.directgnn.LinkSampler: link prediction's minibatches (sampling/link_sampler.h)
// for Python's LinkLoader.
#include <ATen/ATen.h>
#include <torch/custom_class.h>

#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "directgnn/error.h"
#include "errors.h"
#include "graph/csr_graph.h"
#include "ops.h"
#include "sampling/link_sampler.h"

namespace directgnn::ops {
namespace {

// The sample as SampleResult has it, then binary's edge_label_index and edge_label, or
// triplet's src_index, dst_pos_index and dst_neg_index.
using LinkResult = std::tuple<SampleResult, std::vector<at::Tensor>>;

class LinkSamplerHolder : public torch::CustomClassHolder {
 public:
  LinkSamplerHolder(at::Tensor indptr, at::Tensor indices, bool directed,
                    std::vector<int64_t> fanouts, const std::string& mode,
                    const std::string& neg_sampling, int64_t neg_ratio, const std::string& neg_dist,
                    bool exact_negatives, bool exclude_seed_edges) {
    CsrGraph graph{indptr.cpu().contiguous(), indices.cpu().contiguous(), {}};
    validate_csr(graph, "directgnn.LinkLoader");
    graph_ = message_passing_graph(graph, directed);
    SamplerOptions sampling;
    sampling.fanouts = std::move(fanouts);
    sampling.mode = sample_mode_arg(mode);
    check_fanouts(sampling.fanouts, static_cast<int64_t>(sampling.fanouts.size()));
    LinkSamplerOptions link;
    link.mode = parse_negative_mode(neg_sampling);
    link.neg_ratio = neg_ratio;
    link.dist = parse_negative_dist(neg_dist);
    link.exact_negatives = exact_negatives;
    link.exclude_seed_edges = exclude_seed_edges;
    sampler_ = std::make_unique<LinkSampler>(graph_, std::move(sampling), link);
  }

  LinkResult sample(const at::Tensor& positives, int64_t seed) const {
    const LinkBatch b = sampler_->sample(positives.cpu(), static_cast<uint64_t>(seed));
    if (sampler_->options().mode == NegativeMode::kBinary) {
      return {as_result(b.sample), {b.edge_label_index, b.edge_label}};
    }
    return {as_result(b.sample), {b.src_index, b.dst_pos_index, b.dst_neg_index}};
  }

 private:
  CsrGraph graph_;
  std::unique_ptr<LinkSampler> sampler_;
};

}  // namespace

void define_link(torch::Library& m) {
  m.class_<LinkSamplerHolder>("LinkSampler")
      .def(guarded_init<LinkSamplerHolder, at::Tensor, at::Tensor, bool, std::vector<int64_t>,
                        std::string, std::string, int64_t, std::string, bool, bool>())
      .def("sample", guarded<&LinkSamplerHolder::sample>);
}

}  // namespace directgnn::ops
