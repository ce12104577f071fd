// Node classification on a homogeneous graph as a kind of run (train/run_loop.h): each epoch
// shuffles the training nodes (each rank takes its equal shard), samples blocks, gathers the
// input features and takes a step on the seeds' cross-entropy; evaluation runs full
// neighbourhoods layer by layer (over a partitioned structure's parts), on a CPU copy of a GPU
// model.
#include <ATen/ATen.h>
#include <torch/utils.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>

#include "core/random.h"
#include "core/threads.h"
#include "directgnn/error.h"
#include "graph/splits.h"
#include "loader/feature_cache.h"
#include "loader/loader.h"
#include "train/checkpoint.h"
#include "train/evaluate.h"
#include "train/run_loop.h"
#include "train/sharding.h"
#include "train/training_run.h"

namespace directgnn {
namespace {

at::Tensor shuffled(const at::Tensor& ids, uint64_t seed) {
  at::Tensor out = ids.clone();
  seeded_shuffle(out.data_ptr<int64_t>(), out.numel(), seed);
  return out;
}

// The data path: the default fan-outs, and layer 0 of SAGE and GCN (which aggregate before
// they project) reading its sources from the feature table in place where the table allows.
// A sharded table is fetched batch by batch, by one worker, in step order.
LoaderSettings loader_settings(const TrainOptions& o, const Dataset& ds) {
  LoaderOptions l = o.loader;
  l.fanouts = resolved_fanouts(o);
  check_fanouts(l.fanouts, o.model.layers);
  LoaderSettings s = resolve_loader(l, ds, o.group);
  if (shards_structure(o, ds)) {
    s = sharded_loader_settings(s, o);
    s.gpu_sampler = false;  // the hops are exchanged on the CPU
    return s;
  }
  if (shards_features(o, ds, s)) return sharded_loader_settings(s, o);
  s.sources_in_place = o.model.aggregates_sources_first() && can_read_sources_in_place(ds, s);
  return s;
}

ModelConfig model_config(const TrainOptions& o, const Dataset& ds) {
  ModelConfig config = o.model;
  config.in_dim = ds.feat_dim();
  config.num_classes = ds.num_classes;
  config.validate();
  return config;
}

// "\nTest Acc per class: NAME 0.8123 | ..." when the dataset names its classes.
std::string class_accuracy_text(const TrainReport& r) {
  if (r.class_names.empty() || r.test_class_acc.size() != r.class_names.size()) return {};
  std::string text = "\nTest Acc per class:";
  char value[32];
  for (size_t k = 0; k < r.class_names.size(); ++k) {
    const double acc = r.test_class_acc[k];
    std::snprintf(value, sizeof(value), " %.4f", acc);
    text +=
        (k == 0 ? " " : " | ") + r.class_names[k] + (std::isnan(acc) ? " (no test nodes)" : value);
  }
  return text;
}

class NodeTask final : public RunTask {
 public:
  NodeTask(const Dataset& ds, const TrainOptions& o)
      : ds_(ds),
        o_(o),
        config_(model_config(o, ds)),
        hops_(shards_structure(o, ds) ? make_hop_exchange(ds, o) : nullptr),
        loader_(ds, loader_settings(o, ds), hops_),
        chosen_(choose_split(ds, o.split, o.seed)),
        rank_(o.group != nullptr ? o.group->rank() : 0),
        ranks_(o.group != nullptr ? o.group->size() : 1) {
    init_model();
    if (shards_features(o, ds, loader_.settings())) {
      exchange_ = make_exchange(ds, o, loader_.settings(), loader_.store());
      loader_.use_exchange(exchange_);
    }
    if ((exchange_ != nullptr || hops_ != nullptr) && o.seed_assignment == SeedAssignment::kPart) {
      take_part_seeds();
    } else {
      // Each rank trains on its own equal shard of every epoch's shuffled training nodes.
      num_train_ = chosen_.split.train.numel() / ranks_;
      DGNN_CHECK(num_train_ > 0, "the split has ", chosen_.split.train.numel(),
                 " training nodes, fewer than the ", ranks_, " ranks");
    }
    steps_ = loader_.steps(num_train_);
    // The caches rank rows by the whole graph's in-degrees, also on a rank with one part's edges.
    in_degree_ = whole_in_degrees(ds, o.group);
    if (exchange_ != nullptr && o.remote_cache_gib > 0) fill_remote_cache();
  }

  RunKind kind() const override { return RunKind::kNode; }
  torch::nn::Module& model() override { return *model_; }
  const std::vector<at::Tensor>& parameters() const override { return params_; }
  torch::optim::Optimizer& optimizer() override { return *optimizer_; }
  const LoaderSettings& settings() const override { return loader_.settings(); }
  const FeatureStore* store() const override { return &loader_.store(); }
  int64_t steps_per_epoch() const override { return steps_; }
  int64_t num_nodes() const override { return ds_.num_nodes(); }
  bool classifies() const override { return true; }

  std::string fill_cache(bool verbose) override {
    const at::Tensor seeds = shuffled(chosen_.split.train, mix64(o_.seed, 0xcac4e));
    // An owner's cache keeps the rows of its part that every rank's batches read most.
    return fill_feature_cache(loader_.mutable_store(), ds_.graph,
                              node_presample(loader_, seeds, o_.seed), loader_.settings().cache,
                              verbose, cache_scope(ds_, o_, exchange_.get(), in_degree_));
  }

  void start_epoch(int64_t epoch, int64_t first_step) override {
    const at::Tensor order = epoch_seeds(epoch);
    if (exchange_ != nullptr) exchange_->clear_counts();
    if (hops_ != nullptr) hops_->clear_counts();
    batches_.emplace(
        loader_.epoch(order, node_step_streams(o_.seed, epoch, rank_, ranks_), first_step));
  }

  BatchTimes next_batch() override {
    batch_ = batches_->next();
    return {batch_.sample_s, batch_.gather_s};
  }

  void forward_backward(StepSums& sums) override {
    const Minibatch& b = batch_;
    const at::Tensor logits = model_->forward(b.batch.blocks, b.x, b.source_table);
    const at::Tensor loss = at::cross_entropy_loss(logits, b.labels);
    loss.backward();
    sums.add(loss, logits, b.labels);
  }

  void after_step() override { batch_ = Minibatch(); }

  Evaluation evaluate(ProcessGroup* group) override {
    if (cpu_model_ != nullptr) copy_parameters(*model_, *cpu_model_);
    GnnModel& model = cpu_model_ != nullptr ? *cpu_model_ : *model_;
    // A rank holding its part's edges only computes its part's nodes layer by layer, asking the
    // others for their rows of each layer.
    if (ds_.structure_part >= 0 && parts_ == nullptr) {
      parts_ = std::make_unique<PartEvaluator>(ds_, *group, exchange_.get(), in_degree_);
    }
    const EvalResult r =
        parts_ != nullptr ? parts_->evaluate(model, chosen_.split)
                          : directgnn::evaluate(model, ds_, chosen_.split, group, exchange_.get());
    Evaluation e;
    e.value = r.val_acc;
    e.metrics = {{"val", {{"acc", r.val_acc}, {"roc_auc", number_or_null(r.val_roc_auc)}}},
                 {"test",
                  {{"acc", r.test_acc},
                   {"roc_auc", number_or_null(r.test_roc_auc)},
                   {"class_acc", numbers_or_nulls(r.test_class_acc)}}}};
    e.record = {{"val_acc", r.val_acc}, {"test_acc", r.test_acc}};
    if (ds_.num_classes == 2) {
      e.record["val_roc_auc"] = number_or_null(r.val_roc_auc);
      e.record["test_roc_auc"] = number_or_null(r.test_roc_auc);
    }
    char line[128];
    std::snprintf(line, sizeof(line), " | Val Acc %.4f | Test Acc %.4f", r.val_acc, r.test_acc);
    e.text = line;
    return e;
  }

  void save_checkpoint(const std::string& dir, int64_t epoch, const Evaluation* e) override {
    nlohmann::json meta = checkpoint_description(RunKind::kNode, o_, config_.to_json(), epoch, ds_,
                                                 chosen_.description);
    if (e != nullptr) {
      meta["val_acc"] = e->record["val_acc"];
      meta["test_acc"] = e->record["test_acc"];
      meta["test_roc_auc"] = e->metrics["test"]["roc_auc"];
    }
    directgnn::save_checkpoint(dir, *model_, *optimizer_, meta);
  }

  // A sharded table's exchanges this epoch, as this rank saw them.
  void write_epoch(nlohmann::json& record, std::string& text) override {
    if (exchange_ != nullptr) write_exchange_counts(exchange_->counts(), record, text);
    if (hops_ != nullptr) write_hop_counts(hops_->counts(), record, text);
  }

  void print_header(std::ostream& out) const override {
    const LoaderSettings& s = loader_.settings();
    out << "Dataset " << ds_.name << ": " << ds_.num_nodes() << " nodes, " << edges_text() << ", "
        << ds_.feat_dim() << " features, " << ds_.num_classes << " classes\n"
        << (ds_.feature_access.empty() ? "" : "Features: " + ds_.feature_access + "\n")
        << "Split: " << chosen_.description << "\n"
        << (exchange_ == nullptr ? std::string()
                                 : sharding_header(ds_, o_, *exchange_, cache_ranking_))
        << (hops_ == nullptr
                ? ""
                : "Sharded structure: each rank draws its part's neighbourhoods and "
                  "asks the others for theirs; evaluation runs layer by layer over the parts\n")
        << "Model: " << model_kind_name(config_.kind) << ", " << config_.layers
        << " layers, hidden " << config_.hidden
        << (config_.has_heads() ? " x " + std::to_string(config_.heads) + " heads" : "")
        << (config_.norm == Norm::kNone ? ""
                                        : std::string(", ") + norm_name(config_.norm) + " norm")
        << (config_.residual ? ", residual" : "") << ", fan-out " << fanout_text(s.fanouts)
        << ", batch " << s.batch_size << ", features " << loader_.store().description() << ", "
        << num_threads() << " thread(s)"
        << (ranks_ > 1 ? " per rank, " + std::to_string(ranks_) + " ranks (" +
                             to_string(o_.group->backend()) + ")"
                       : std::string())
        << ", prefetch " << s.prefetch << "\n"
        << "Device: " << report_device(s) << ", mode " << loader_.mode() << "\n";
  }

  // The node report the loop's report makes.
  TrainReport report(const RunReport& r) const {
    TrainReport t;
    t.epochs = r.epochs;
    t.timed_epochs = r.timed_epochs;
    t.best_epoch = r.totals.best_epoch;
    if (t.best_epoch >= 0) {
      const nlohmann::json& test = r.totals.best_metrics.at("test");
      t.best_val_acc = r.totals.best_value;
      t.test_acc = test.at("acc").get<double>();
      t.test_roc_auc = metric_or_nan(test.at("roc_auc"));
      for (const nlohmann::json& v : test.at("class_acc"))
        t.test_class_acc.push_back(metric_or_nan(v));
    }
    t.class_names = ds_.class_names;
    t.epoch_time_s = r.epoch_time_s;
    t.sample_s = r.sample_s;
    t.gather_s = r.gather_s;
    t.compute_s = r.compute_s;
    t.wait_s = r.wait_s;
    t.cpu_s = r.cpu_s;
    t.eval_s = r.eval_s;
    t.gpu_peak_bytes = r.gpu_peak_bytes;
    t.gpu_energy_j = r.gpu_energy_j;
    t.gpu_power_w = r.gpu_power_w;
    t.device = r.device;
    t.mode = loader_.mode();
    t.steps_per_epoch = steps_;
    t.seeds_per_epoch = num_train_ * ranks_;
    t.split_description = chosen_.description;
    t.disk_bytes_gathered = r.disk_bytes_gathered;
    t.disk_bytes_asked = r.disk_bytes_asked;
    t.disk_cache_hit_rate = r.disk_cache_hit_rate;
    t.feature_cache = r.feature_cache;
    t.param_digest = r.param_digest;
    return t;
  }

  nlohmann::json final_record(const RunReport& r) const override { return report(r).to_json(); }

  std::string best_text(const RunReport& r) const override {
    const TrainReport t = report(r);
    char line[256];
    std::snprintf(line, sizeof(line), "Best validation epoch %lld: Val Acc %.4f | Test Acc %.4f",
                  static_cast<long long>(t.best_epoch), t.best_val_acc, t.test_acc);
    std::string text = line;
    if (ds_.num_classes == 2) {
      std::snprintf(line, sizeof(line), " | Test ROC-AUC %.4f", t.test_roc_auc);
      text += line;
    }
    return text + class_accuracy_text(t);
  }

 private:
  // Each rank's seeds are its part's training nodes; every rank takes the fewest any part has
  // each epoch, so all take the same number of steps.
  void take_part_seeds() {
    const at::Tensor& train = chosen_.split.train;
    const PartShare share = part_share(owners_of(ds_, train), rank_, ranks_, "training nodes");
    part_seeds_ = train.index_select(0, share.mine);
    num_train_ = share.count;
  }

  // This rank's seeds of `epoch`, in order. Part seeds: the epoch's shuffle of this part's
  // seeds, cut to the count every rank has; otherwise this rank's shard of the global shuffle.
  at::Tensor epoch_seeds(int64_t epoch) const {
    const bool part = part_seeds_.defined();
    return shuffled(part ? part_seeds_ : chosen_.split.train, mix64(o_.seed, 0xe90c, epoch))
        .narrow(0, part ? 0 : rank_ * num_train_, num_train_);
  }

  // The replicated copy of remote rows (remote_cache_gib), ranked by this rank's first epoch.
  void fill_remote_cache() {
    cache_ranking_ = directgnn::fill_remote_cache(
        *exchange_, o_, ds_.graph, node_presample(loader_, epoch_seeds(1), mix64(o_.seed, 0xcac4e)),
        in_degree_);
  }

  // "10556 edges", or for a rank holding its part's edges only "10556 edges (5196 here)".
  std::string edges_text() const {
    if (ds_.structure_part < 0) return std::to_string(ds_.graph.num_edges()) + " edges";
    int64_t edges = 0;
    for (int64_t e : ds_.partition.edges) edges += e;
    return std::to_string(edges) + " edges (" + std::to_string(ds_.graph.num_edges()) + " here)";
  }

  void init_model() {
    RunModel<GnnModel> m =
        make_run_model<GnnModel>([this] { return std::make_unique<GnnModel>(config_); },
                                 loader_.settings().device, o_.seed, o_.group);
    model_ = std::move(m.model);
    cpu_model_ = std::move(m.cpu_copy);
    params_ = std::move(m.params);
    optimizer_ = make_optimizer(params_, o_);
  }

  const Dataset& ds_;
  const TrainOptions& o_;
  ModelConfig config_;
  std::shared_ptr<HopExchange> hops_;  // a partitioned structure's draws
  MinibatchLoader loader_;
  ChosenSplit chosen_;
  int rank_, ranks_;
  std::unique_ptr<GnnModel> cpu_model_, model_;
  std::vector<at::Tensor> params_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  int64_t num_train_ = 0, steps_ = 0;
  std::shared_ptr<FeatureExchange> exchange_;  // sharded features
  at::Tensor part_seeds_;                      // seed_assignment part: this part's training nodes
  std::string cache_ranking_;                  // how the remote rows copied here were ranked
  at::Tensor in_degree_;  // the whole graph's, on a rank holding its part's edges (else undefined)
  std::unique_ptr<PartEvaluator> parts_;  // such a rank's evaluation, made at the first
  std::optional<MinibatchLoader::Epoch> batches_;
  Minibatch batch_;
};

}  // namespace

std::unique_ptr<RunTask> make_node_task(const Dataset& dataset, const TrainOptions& options) {
  check_run_options(options);
  return std::make_unique<NodeTask>(dataset, options);
}

TrainReport train(const Dataset& dataset, const TrainOptions& options, std::ostream& out) {
  check_run_options(options);
  NodeTask task(dataset, options);
  const RunReport r = run_loop(task, options, out);
  return task.report(r);
}

}  // namespace directgnn
