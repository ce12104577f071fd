// torch.classes.directgnn.LinkLoader: link prediction's data path (loader/link_loader.h: the
// link sampler, the feature store of any placement, the prefetching workers) for Python's
// LinkLoader.
#include <ATen/ATen.h>
#include <torch/custom_class.h>

#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "classes.h"
#include "core/random.h"
#include "directgnn/error.h"
#include "errors.h"
#include "loader/link_loader.h"
#include "ops.h"
#include "passes.h"

namespace directgnn::ops {
namespace {

// The positives, x, the sample as SampleResult has it, then binary's edge_label_index and
// edge_label, or triplet's src_index, dst_pos_index and dst_neg_index.
using LinkResult = std::tuple<at::Tensor, at::Tensor, SampleResult, std::vector<at::Tensor>>;

bool flag_arg(const std::string& key, const std::string& value) {
  DGNN_CHECK_ARG(value == "true" || value == "false", key, "'", value, "' is not true or false");
  return value == "true";
}

// The link choices taken out of `choices` (what is left are the loader's).
LinkSamplerOptions link_options_arg(c10::Dict<std::string, std::string>& choices,
                                    int64_t neg_ratio) {
  LinkSamplerOptions o;
  o.neg_ratio = neg_ratio;
  for (const char* key : {"neg_sampling", "neg_dist", "exact_negatives", "exclude_seed_edges"}) {
    if (!choices.contains(key)) continue;
    const std::string value = choices.at(key);
    static_cast<void>(choices.erase(key));
    if (std::string(key) == "neg_sampling") o.mode = parse_negative_mode(value);
    if (std::string(key) == "neg_dist") o.dist = parse_negative_dist(value);
    if (std::string(key) == "exact_negatives") o.exact_negatives = flag_arg(key, value);
    if (std::string(key) == "exclude_seed_edges") o.exclude_seed_edges = flag_arg(key, value);
  }
  return o;
}

class LinkLoaderHolder : public torch::CustomClassHolder {
 public:
  LinkLoaderHolder(at::Tensor indptr, at::Tensor indices, at::Tensor features,
                   std::string features_path, bool directed,
                   c10::Dict<std::string, std::string> choices, std::vector<int64_t> fanouts,
                   int64_t batch_size, int64_t prefetch, int64_t workers, bool disk_direct,
                   int64_t neg_ratio, std::vector<int64_t> offsets, int64_t feature_part) {
    dataset_.name = "python";
    dataset_.source = "the data given to directgnn.LinkLoader";
    dataset_.graph = CsrGraph{indptr.cpu().contiguous(), indices.cpu().contiguous(), {}};
    validate_csr(dataset_.graph, "directgnn.LinkLoader");
    set_partition_arg(dataset_, offsets, feature_part, features);
    dataset_.features = std::move(features);
    dataset_.features_path = std::move(features_path);
    dataset_.directed = directed;
    graph_ = message_passing_graph(dataset_.graph, directed);
    const LinkSamplerOptions link = link_options_arg(choices, neg_ratio);
    LoaderOptions o = loader_options_arg(
        choices, LoaderNumbers{std::move(fanouts), batch_size, prefetch, workers, disk_direct, 0});
    check_fanouts(o.fanouts, static_cast<int64_t>(o.fanouts.size()));
    LoaderSettings settings = resolve_loader(o, dataset_);
    if (!offsets.empty()) settings = sharded_settings(std::move(settings), prefetch >= 0);
    note_ = settings.note;
    loader_ = std::make_unique<LinkLoader>(dataset_, graph_, settings, link);
  }

  // Shards the feature table over `group`'s ranks, as Loader's shard().
  void shard(const c10::intrusive_ptr<c10d::ProcessGroup>& group, int64_t timeout_s, int64_t steps,
             const std::string& wire) {
    DGNN_CHECK(!dataset_.partition.offsets.empty() && exchange_ == nullptr,
               "directgnn.LinkLoader: shard() is for a sharded loader, once");
    const char* who = "directgnn.LinkLoader";
    exchange_ =
        python_exchange(dataset_, loader_->store(), group, timeout_s, steps, who,
                        parse_exchange_wire(wire, loader_->settings(), who), loader_->settings());
    loader_->use_exchange(exchange_);
  }

  c10::Dict<std::string, double> exchange_counts() {
    if (exchange_ == nullptr) return c10::Dict<std::string, double>();
    const ExchangeCounts c = exchange_->counts();
    exchange_->clear_counts();
    return counts_dict(c);
  }

  // Starts a pass over `positives` ([E, 2], in this order); batch i draws with a seed mixed
  // from `seed` and i.
  int64_t start(const at::Tensor& positives, int64_t seed) {
    DGNN_CHECK_TYPE(
        positives.dim() == 2 && positives.size(1) == 2 &&
            (positives.scalar_type() == at::kLong || positives.scalar_type() == at::kInt),
        "directgnn.LinkLoader: edges must be an int64 or int32 [E, 2] tensor, got ",
        positives.scalar_type(), " ", positives.sizes());
    const auto base = static_cast<uint64_t>(seed);
    return passes_.add(loader_->epoch(
        positives.cpu().to(at::kLong).contiguous(),
        [base](int64_t step) { return mix64(base, 0x11c, static_cast<uint64_t>(step)); }));
  }

  bool has_next(int64_t pass) const { return passes_.has_next(pass); }

  LinkResult next(int64_t pass) {
    const auto epoch = passes_.get(pass);
    DGNN_CHECK(epoch != nullptr && !epoch->done(),
               "directgnn.LinkLoader: no minibatch left in this pass; start another");
    const LinkMinibatch m = epoch->next();
    const LinkBatch& b = m.batch;
    std::vector<at::Tensor> labels{b.edge_label_index, b.edge_label};
    if (loader_->sampler().options().mode == NegativeMode::kTriplet) {
      labels = {b.src_index, b.dst_pos_index, b.dst_neg_index};
    }
    return {b.positives, m.x, as_result(b.sample), labels};
  }

  void finish(int64_t pass) { passes_.finish(pass); }
  int64_t steps(int64_t num_positives) const { return loader_->steps(num_positives); }
  std::string mode() const { return loader_->mode(); }
  std::string device() const { return loader_->settings().device.str(); }
  int64_t prefetch() const { return loader_->settings().prefetch; }
  std::string note() const { return note_; }

 private:
  Dataset dataset_;
  CsrGraph graph_;  // the message-passing graph
  std::unique_ptr<LinkLoader> loader_;
  std::shared_ptr<FeatureExchange> exchange_;  // a sharded table's
  Passes<LinkLoader::Epoch> passes_;
  std::string note_;
};

}  // namespace

void define_link(torch::Library& m) {
  m.class_<LinkLoaderHolder>("LinkLoader")
      .def(guarded_init<LinkLoaderHolder, at::Tensor, at::Tensor, at::Tensor, std::string, bool,
                        c10::Dict<std::string, std::string>, std::vector<int64_t>, int64_t, int64_t,
                        int64_t, bool, int64_t, std::vector<int64_t>, int64_t>())
      .def("shard", guarded<&LinkLoaderHolder::shard>)
      .def("exchange_counts", guarded<&LinkLoaderHolder::exchange_counts>)
      .def("start", guarded<&LinkLoaderHolder::start>)
      .def("has_next", guarded<&LinkLoaderHolder::has_next>)
      .def("next", guarded<&LinkLoaderHolder::next>)
      .def("finish", guarded<&LinkLoaderHolder::finish>)
      .def("steps", guarded<&LinkLoaderHolder::steps>)
      .def("mode", guarded<&LinkLoaderHolder::mode>)
      .def("device", guarded<&LinkLoaderHolder::device>)
      .def("prefetch", guarded<&LinkLoaderHolder::prefetch>)
      .def("note", guarded<&LinkLoaderHolder::note>);
}

}  // namespace directgnn::ops
