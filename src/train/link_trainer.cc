#include "train/link_trainer.h"

#include <ATen/ATen.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>

#include "core/clock.h"
#include "core/progress.h"
#include "core/random.h"
#include "core/signals.h"
#include "core/threads.h"
#include "directgnn/error.h"
#include "graph/splits.h"
#include "loader/feature_cache.h"
#include "loader/link_loader.h"
#include "train/checkpoint.h"
#include "train/run_loop.h"
#include "train/run_options.h"
#include "train/sharding.h"
#include "train/training_run.h"

namespace directgnn {

namespace {

LoaderSettings link_loader_settings(const TrainOptions& o, const Dataset& ds) {
  LoaderOptions lo = o.loader;
  lo.fanouts = resolved_fanouts(o);
  check_fanouts(lo.fanouts, o.model.layers);
  const LoaderSettings s = resolve_loader(lo, ds, o.group);
  return shards_features(o, ds, s) ? sharded_loader_settings(s, o) : s;
}

class LinkTask final : public RunTask {
 public:
  LinkTask(const Dataset& ds, const TrainOptions& o)
      : ds_(ds),
        o_(o),
        link_(o.link),
        chosen_(choose_link_split(ds, o.seed)),
        rank_(o.group != nullptr ? o.group->rank() : 0),
        ranks_(o.group != nullptr ? o.group->size() : 1) {
    graphs_ = link_graphs(chosen_, ds.directed, link_.use_val_edges);
    loader_ = std::make_unique<LinkLoader>(ds, graphs_.graph, link_loader_settings(o, ds),
                                           link_.sampling);
    config_ = o.model;
    config_.in_dim = ds.feat_dim();
    config_.num_classes = o.model.hidden;  // the output layer gives the embeddings
    config_.validate();
    init_model();
    check_hits_k();
    if (shards_features(o, ds, loader_->settings())) {
      exchange_ = make_exchange(ds, o, loader_->settings(), loader_->store());
      loader_->use_exchange(exchange_);
    }
    if (exchange_ != nullptr && o.seed_assignment == SeedAssignment::kPart) {
      // Each rank trains on the positives whose source node its part owns.
      const at::Tensor& train = chosen_.split.train;
      const PartShare share = part_share(owners_of(ds_, train.select(1, 0).contiguous()), rank_,
                                         ranks_, "training edges (by source node)");
      part_positives_ = train.index_select(0, share.mine);
      num_train_ = share.count;
    } else {
      // Each rank trains on its own equal shard of every epoch's shuffled positives.
      num_train_ = chosen_.split.train.size(0) / ranks_;
      DGNN_CHECK(num_train_ > 0, "the link split has ", chosen_.split.train.size(0),
                 " training edges, fewer than the ", ranks_, " ranks");
    }
    steps_ = loader_->steps(num_train_);
    if (link_.steps_per_epoch > 0) steps_ = std::min(steps_, link_.steps_per_epoch);
    if (exchange_ != nullptr && o.remote_cache_gib > 0) {
      cache_ranking_ =
          fill_remote_cache(*exchange_, o, graphs_.graph, presample(epoch_positives(1)));
    }
  }

  RunKind kind() const override { return RunKind::kLink; }
  torch::nn::Module& model() override { return *model_; }
  const std::vector<at::Tensor>& parameters() const override { return params_; }
  torch::optim::Optimizer& optimizer() override { return *optimizer_; }
  const LoaderSettings& settings() const override { return loader_->settings(); }
  const FeatureStore* store() const override { return &loader_->store(); }
  int64_t steps_per_epoch() const override { return steps_; }
  int64_t num_nodes() const override { return ds_.num_nodes(); }
  bool classifies() const override { return false; }

  // Ranks the rows by a pass over the first batches of the training positives (those an
  // epoch trains on), as node training ranks them by a pass over its seeds.
  std::string fill_cache(bool verbose) override {
    const at::Tensor positives = shuffled_rows(chosen_.split.train, mix64(o_.seed, 0xcac4e));
    // An owner's cache keeps the rows of its part that every rank's batches read most.
    return fill_feature_cache(loader_->mutable_store(), graphs_.graph, presample(positives),
                              o_.loader.cache, verbose,
                              cache_scope(ds_, o_, exchange_.get(), at::Tensor()));
  }

  void start_epoch(int64_t epoch, int64_t first_step) override {
    const at::Tensor mine = epoch_positives(epoch);
    if (exchange_ != nullptr) exchange_->clear_counts();
    // Rank r's step s draws from stream s·ranks + r: one stream per rank, a single process's
    // streams unchanged.
    const uint64_t seed = o_.seed;
    const int64_t rank = rank_, ranks = ranks_;
    batches_.emplace(loader_->epoch(
        mine, [=](int64_t s) { return mix64(seed, epoch, s * ranks + rank); }, first_step));
  }

  BatchTimes next_batch() override {
    batch_ = batches_->next();
    return {batch_.sample_s, batch_.gather_s};
  }

  void forward_backward(StepSums& sums) override {
    const LinkBatch& b = batch_.batch;
    const at::Tensor h = model_->encoder().forward(b.sample.blocks, batch_.x.to(at::kFloat));
    at::Tensor scores, labels;
    if (link_.sampling.mode == NegativeMode::kBinary) {
      scores = model_->decoder().forward(h.index_select(0, b.edge_label_index[0]),
                                         h.index_select(0, b.edge_label_index[1]));
      labels = b.edge_label;
    } else {
      const int64_t k = b.dst_neg_index.size(1);
      const at::Tensor src = at::cat({b.src_index, b.src_index.repeat_interleave(k)});
      const at::Tensor dst = at::cat({b.dst_pos_index, b.dst_neg_index.reshape(-1)});
      scores = model_->decoder().forward(h.index_select(0, src), h.index_select(0, dst));
      labels = at::cat({at::ones({b.src_index.numel()}, scores.options()),
                        at::zeros({b.dst_neg_index.numel()}, scores.options())});
    }
    const at::Tensor loss = at::binary_cross_entropy_with_logits(scores, labels);
    loss.backward();
    sums.add_mean(loss);
  }

  void after_step() override { batch_ = LinkMinibatch(); }

  Evaluation evaluate(ProcessGroup* group) override {
    if (cpu_model_ != nullptr) copy_parameters(*model_, *cpu_model_);
    LinkModel& model = cpu_model_ != nullptr ? *cpu_model_ : *model_;
    const LinkEvalResult r = evaluate_link_model(model, ds_.features, chosen_.split, graphs_,
                                                 link_.hits_k, group, exchange_.get());
    return link_evaluation(r, chosen_.split.negatives, link_.hits_k);
  }

  void save_checkpoint(const std::string& dir, int64_t epoch, const Evaluation* e) override {
    nlohmann::json meta = checkpoint_description(RunKind::kLink, o_, config_.to_json(), epoch, ds_,
                                                 chosen_.description);
    meta["primary_metric"] = primary_link_metric(chosen_.split.negatives);
    if (e != nullptr) meta.update(e->metrics);
    directgnn::save_checkpoint(dir, *model_, *optimizer_, meta);
  }

  // A sharded table's exchanges this epoch, as this rank saw them.
  void write_epoch(nlohmann::json& record, std::string& text) override {
    if (exchange_ != nullptr) write_exchange_counts(exchange_->counts(), record, text);
  }

  void print_header(std::ostream& out) const override {
    const LoaderSettings& s = loader_->settings();
    const LinkSamplerOptions& n = link_.sampling;
    out << "Dataset " << ds_.name << ": " << ds_.num_nodes() << " nodes, "
        << graphs_.graph.num_edges() << " message-passing edges"
        << (ds_.directed ? " (the directed graph symmetrised)" : "") << ", " << ds_.feat_dim()
        << " features\n"
        << "Link split: " << chosen_.description << "\n"
        << (exchange_ == nullptr ? std::string()
                                 : sharding_header(ds_, o_, *exchange_, cache_ranking_))
        << "Model: " << model_kind_name(config_.kind) << ", " << config_.layers
        << " layers, hidden " << config_.hidden << ", decoder " << decoder_kind_name(link_.decoder)
        << ", fan-out " << fanout_text(s.fanouts) << ", batch " << s.batch_size << " positive edges"
        << (ranks_ > 1 ? " per rank" : "") << ", negatives " << negative_mode_name(n.mode) << " x"
        << n.neg_ratio << " (" << negative_dist_name(n.dist) << (n.exact_negatives ? ", exact" : "")
        << "), seed edges " << (n.exclude_seed_edges ? "excluded" : "kept") << "\n"
        << "Features " << loader_->store().description() << ", " << num_threads() << " thread(s)"
        << (ranks_ > 1 ? " per rank, " + std::to_string(ranks_) + " ranks (" +
                             to_string(o_.group->backend()) + ")"
                       : std::string())
        << ", prefetch " << s.prefetch << "; device " << report_device(s) << ", mode "
        << loader_->mode() << "\n";
  }

  LinkTrainReport report(const RunReport& r) const {
    LinkTrainReport t;
    t.epochs = r.epochs;
    t.best_epoch = r.totals.best_epoch;
    if (t.best_epoch >= 0) {
      t.best_val = metrics_from_json(r.totals.best_metrics.at("val"));
      t.test = metrics_from_json(r.totals.best_metrics.at("test"));
    }
    t.steps_per_epoch = steps_;
    t.epoch_time_s = r.epoch_time_s;
    t.sample_s = r.sample_s;
    t.gather_s = r.gather_s;
    t.compute_s = r.compute_s;
    t.wait_s = r.wait_s;
    t.eval_s = r.eval_s;
    t.split_description = chosen_.description;
    t.primary_metric = primary_link_metric(chosen_.split.negatives);
    t.param_digest = r.param_digest;
    t.device = r.device;
    t.mode = loader_->mode();
    return t;
  }

  nlohmann::json final_record(const RunReport& r) const override {
    nlohmann::json out = report(r).to_json();
    if (r.disk_bytes_gathered > 0) {
      out["disk_bytes_gathered"] = r.disk_bytes_gathered;
      out["disk_bytes_asked"] = r.disk_bytes_asked;
    }
    return out;
  }

  std::string best_text(const RunReport& r) const override {
    const LinkTrainReport t = report(r);
    return "Best validation epoch " + std::to_string(t.best_epoch) + " (by " + t.primary_metric +
           ")" + link_metrics_text("Val", t.best_val, link_.hits_k) +
           link_metrics_text("Test", t.test, link_.hits_k);
  }

 private:
  void init_model() {
    RunModel<LinkModel> m = make_run_model<LinkModel>(
        [this] {
          return std::make_unique<LinkModel>(config_, link_.decoder, link_.decoder_layers);
        },
        loader_->settings().device, o_.seed, o_.group);
    model_ = std::move(m.model);
    cpu_model_ = std::move(m.cpu_copy);
    params_ = std::move(m.params);
    optimizer_ = make_optimizer(params_, o_);
  }

  // This rank's positives of `epoch`, in order. Part positives: the epoch's shuffle of this
  // part's, cut to the count every rank has; otherwise this rank's shard of the global shuffle.
  at::Tensor epoch_positives(int64_t epoch) const {
    const bool part = part_positives_.defined();
    return shuffled_rows(part ? part_positives_ : chosen_.split.train,
                         mix64(o_.seed, 0xe90c, epoch))
        .narrow(0, part ? 0 : rank_ * num_train_, num_train_);
  }

  // One pass of the sampler over the first steps_ batches of `positives`, for a cache's ranking.
  Presample presample(const at::Tensor& positives) const {
    const int64_t batch = loader_->settings().batch_size;
    const uint64_t seed = o_.seed;
    const LinkLoader* loader = loader_.get();
    return {steps_, [=](int64_t step) {
              const int64_t start = step * batch;
              const at::Tensor part =
                  positives.narrow(0, start, std::min(batch, positives.size(0) - start));
              return loader->sampler().sample(part, mix64(seed, 0xcac4e, step)).sample.input_nodes;
            }};
  }

  // OGB's Hits@K is 1 for every model when K reaches the shared negatives: refuse, not report.
  void check_hits_k() const {
    const LinkSplit& split = chosen_.split;
    if (split.negatives == LinkNegatives::kShared) {
      const int64_t fewest = std::min(split.val_neg.size(0), split.test_neg.size(0));
      DGNN_CHECK_ARG(link_.hits_k < fewest, "hits_k", link_.hits_k, " is not below the ", fewest,
                     " shared validation or test negatives of the split; Hits@K would be 1 for "
                     "any model. Give a smaller K");
    } else if (split.negatives == LinkNegatives::kPerSource) {
      DGNN_CHECK_ARG(link_.hits_k <= split.val_neg.size(1), "hits_k", link_.hits_k,
                     " is more than the ", split.val_neg.size(1),
                     " negatives per positive; every positive would count. Give a smaller K");
    }
  }

  const Dataset& ds_;
  const TrainOptions& o_;
  const LinkOptions& link_;
  ChosenLinkSplit chosen_;
  LinkGraphs graphs_;
  std::unique_ptr<LinkLoader> loader_;
  int rank_, ranks_;
  ModelConfig config_;
  std::unique_ptr<LinkModel> model_, cpu_model_;  // GPU runs evaluate with a CPU copy
  std::vector<at::Tensor> params_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  int64_t num_train_ = 0, steps_ = 0;          // this rank's positives and steps per epoch
  std::shared_ptr<FeatureExchange> exchange_;  // sharded features
  at::Tensor part_positives_;  // seed_assignment part: the positives this part's sources start
  std::string cache_ranking_;  // how the remote rows copied here were ranked
  std::optional<LinkLoader::Epoch> batches_;
  LinkMinibatch batch_;
};

}  // namespace

LinkGraphs link_graphs(const ChosenLinkSplit& split, bool directed, bool use_val_edges) {
  LinkGraphs out;
  out.graph = message_passing_graph(split.graph, directed);
  if (use_val_edges) out.test_graph = with_pairs(out.graph, split.split.val);
  return out;
}

LinkEvalResult evaluate_link_model(LinkModel& model, const at::Tensor& features,
                                   const LinkSplit& split, const LinkGraphs& graphs, int64_t hits_k,
                                   ProcessGroup* group, FeatureExchange* exchange) {
  LinkEvalOptions eo;
  eo.hits_k = hits_k;
  eo.group = group;
  eo.exchange = exchange;
  eo.test = !graphs.test_graph.has_value();  // else the test split on its own graph below
  LinkEvalResult r =
      evaluate_links(model.encoder(), model.decoder(), graphs.graph, features, split, eo);
  if (graphs.test_graph) {
    eo.val = false;
    eo.test = true;
    r.test =
        evaluate_links(model.encoder(), model.decoder(), *graphs.test_graph, features, split, eo)
            .test;
  }
  return r;
}

LinkCheckpoint load_link_checkpoint(const std::string& dir, const nlohmann::json& meta,
                                    const Dataset& ds) {
  const std::string where = dir + "/checkpoint.pt";
  const ModelConfig config = ModelConfig::from_json(meta.at("model"), where);
  DGNN_CHECK(ds.feat_dim() == config.in_dim, where, ": the checkpoint was trained on ",
             config.in_dim, " features, but ", ds.source, " has ", ds.feat_dim(),
             "; pass the dataset it was trained on");
  LinkCheckpoint c;
  c.link = checkpoint_options(meta, RunKind::kLink, where).link;
  c.model = std::make_unique<LinkModel>(config, c.link.decoder, c.link.decoder_layers);
  load_checkpoint(dir, *c.model, nullptr);
  c.split = choose_link_split(ds, meta.value("seed", uint64_t{0}));
  c.graphs = link_graphs(c.split, ds.directed, c.link.use_val_edges);
  return c;
}

LinkTrainReport train_links(const Dataset& dataset, const TrainOptions& options,
                            std::ostream& out) {
  const LinkOptions& link = options.link;
  check_run_options(options);
  DGNN_CHECK_ARG(link.hits_k >= 1, "hits_k", "must be at least 1, got ", link.hits_k);
  DGNN_CHECK_ARG(link.steps_per_epoch >= 0, "steps_per_epoch",
                 "must be 0 (every training edge) or positive, got ", link.steps_per_epoch);
  LinkTask task(dataset, options);
  return task.report(run_loop(task, options, out));
}

}  // namespace directgnn
