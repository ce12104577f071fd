#include "train/link_trainer.h"

#include <ATen/ATen.h>

#include <cmath>
#include <cstdio>
#include <memory>
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
#include "train/run_options.h"
#include "train/training_run.h"

namespace directgnn {

namespace {

LoaderSettings link_loader_settings(const TrainOptions& o, const Dataset& ds) {
  LoaderOptions lo = o.loader;
  lo.fanouts = resolved_fanouts(o);
  check_fanouts(lo.fanouts, o.model.layers);
  return resolve_loader(lo, ds, o.group);
}

at::Tensor shuffled_rows(const at::Tensor& rows, uint64_t seed) {
  at::Tensor order = at::arange(rows.size(0), at::kLong);
  seeded_shuffle(order.data_ptr<int64_t>(), order.numel(), seed);
  return rows.index_select(0, order);
}

class LinkRun {
 public:
  LinkRun(const Dataset& ds, const TrainOptions& o, std::ostream& out);
  int64_t first_epoch() const { return start_epoch_; }
  void train_epoch(int64_t epoch);
  LinkTrainReport finish();

 private:
  void init_model();
  void resume();
  void save_state(int64_t epoch, const EpochProgress& progress);
  void check_hits_k() const;
  double step(const LinkMinibatch& b);
  void evaluate_epoch(int64_t epoch, nlohmann::json& record, std::string& line);
  void save_model(int64_t epoch, const LinkEvalResult* r);
  void print_header() const;
  [[noreturn]] void stopped(int signal, int64_t epoch, int64_t steps) const;
  double steps_loss(const at::Tensor& loss_sum) const;

  const Dataset& ds_;
  const TrainOptions& o_;
  const LinkOptions& link_;
  std::ostream& out_;
  ChosenLinkSplit chosen_;
  LinkGraphs graphs_;
  std::unique_ptr<LinkLoader> loader_;
  ProcessGroup* group_;
  int rank_, ranks_;
  bool leader_;
  ModelConfig config_;
  std::unique_ptr<LinkModel> model_;
  std::unique_ptr<LinkModel> cpu_model_;  // GPU runs evaluate with a CPU copy
  std::vector<at::Tensor> params_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  MetricsLog metrics_;
  LinkTrainReport report_;
  int64_t num_train_ = 0;  // this rank's positives per epoch
  DiskTally disk_start_;
  RunTotals totals_;
  std::string state_dir_;
  int64_t start_epoch_ = 1;
  EpochProgress resumed_;  // the progress of epoch start_epoch_
};

LinkRun::LinkRun(const Dataset& ds, const TrainOptions& o, std::ostream& out)
    : ds_(ds),
      o_(o),
      link_(o.link),
      out_(out),
      chosen_(choose_link_split(ds, o.seed)),
      group_(o.group),
      rank_(group_ != nullptr ? group_->rank() : 0),
      ranks_(group_ != nullptr ? group_->size() : 1),
      leader_(rank_ == 0),
      metrics_(leader_ ? o.metrics_path : std::string(), /*append=*/!o.resume_dir.empty()),
      state_dir_(!o.checkpoint_dir.empty() ? o.checkpoint_dir : std::string(kDefaultStateDir)) {
  const LoaderSettings settings = link_loader_settings(o, ds);
  graphs_ = link_graphs(chosen_, ds.directed, link_.use_val_edges);
  loader_ = std::make_unique<LinkLoader>(ds, graphs_.graph, settings, link_.sampling);
  config_ = o.model;
  config_.in_dim = ds.feat_dim();
  config_.num_classes = o.model.hidden;  // the output layer gives the embeddings
  config_.validate();
  init_model();
  check_hits_k();
  report_.split_description = chosen_.description;
  report_.primary_metric = primary_link_metric(chosen_.split.negatives);
  // Each rank trains on its own equal shard of every epoch's shuffled positives.
  num_train_ = chosen_.split.train.size(0) / ranks_;
  DGNN_CHECK(num_train_ > 0, "the link split has ", chosen_.split.train.size(0),
             " training edges, fewer than the ", ranks_, " ranks");
  report_.steps_per_epoch = loader_->steps(num_train_);
  if (link_.steps_per_epoch > 0) {
    report_.steps_per_epoch = std::min(report_.steps_per_epoch, link_.steps_per_epoch);
  }
  report_.mode = loader_->mode();
  report_.device = report_device(loader_->settings());
  disk_start_ = DiskTally::of(loader_->store());
  if (!o.resume_dir.empty()) resume();
  print_header();
}

// As node training: every device starts from one initialisation made on the CPU, every rank
// from rank 0's; a GPU run keeps a CPU copy for evaluation, made before seeding.
void LinkRun::init_model() {
  const LoaderSettings& s = loader_->settings();
  auto make = [&] {
    return std::make_unique<LinkModel>(config_, link_.decoder, link_.decoder_layers);
  };
  if (s.gpu()) cpu_model_ = make();
  torch::manual_seed(o_.seed);
  model_ = make();
  if (s.gpu()) model_->to(s.device);
  params_ = model_->parameters();
  if (group_ != nullptr) {
    torch::NoGradGuard no_grad;
    group_->broadcast(params_, 0);
  }
  optimizer_ = make_optimizer(params_, o_);
}

// OGB's Hits@K is 1 for every model when K reaches the shared negatives: refuse, not report.
void LinkRun::check_hits_k() const {
  const LinkSplit& split = chosen_.split;
  if (split.negatives == LinkNegatives::kShared) {
    const int64_t fewest = std::min(split.val_neg.size(0), split.test_neg.size(0));
    DGNN_CHECK_ARG(link_.hits_k < fewest, "hits_k", link_.hits_k, " is not below the ", fewest,
                   " shared validation or test negatives of the split; Hits@K would be 1 for any "
                   "model. Give a smaller K");
  } else if (split.negatives == LinkNegatives::kPerSource) {
    DGNN_CHECK_ARG(link_.hits_k <= split.val_neg.size(1), "hits_k", link_.hits_k,
                   " is more than the ", split.val_neg.size(1),
                   " negatives per positive; every positive would count. Give a smaller K");
  }
}

// Where the run stands: the state of an earlier run with the same options, ranks and split.
void LinkRun::resume() {
  const std::string where = training_state_path(o_.resume_dir);
  const TrainingState state = TrainingState::from_json(read_training_state(o_.resume_dir), where);
  check_resumed_run(state, o_, RunKind::kLink, ranks_, ds_.num_nodes(), report_.steps_per_epoch,
                    where);
  start_epoch_ = state.epoch;
  resumed_ = state.progress;
  totals_ = state.totals;
  load_training_state(o_.resume_dir, *model_, *optimizer_);
}

// The leader writes the state (every rank holds the same model and optimiser).
void LinkRun::save_state(int64_t epoch, const EpochProgress& progress) {
  if (!leader_) return;
  const TrainingState state =
      training_state(RunKind::kLink, o_, {ranks_, ds_.num_nodes(), report_.steps_per_epoch}, epoch,
                     progress, totals_);
  save_training_state(state_dir_, *model_, *optimizer_, state.to_json());
}

void LinkRun::print_header() const {
  if (o_.quiet || !leader_) return;
  const LoaderSettings& s = loader_->settings();
  out_ << (s.note.empty() ? "" : s.note + "\n") << "Dataset " << ds_.name << ": " << ds_.num_nodes()
       << " nodes, " << graphs_.graph.num_edges() << " message-passing edges"
       << (ds_.directed ? " (the directed graph symmetrised)" : "") << ", " << ds_.feat_dim()
       << " features\n"
       << "Link split: " << chosen_.description << "\n"
       << "Model: " << model_kind_name(config_.kind) << ", " << config_.layers << " layers, hidden "
       << config_.hidden << ", decoder " << decoder_kind_name(link_.decoder) << ", fan-out "
       << fanout_text(s.fanouts) << ", batch " << s.batch_size << " positive edges"
       << (ranks_ > 1 ? " per rank" : "") << ", negatives "
       << negative_mode_name(link_.sampling.mode) << " x" << link_.sampling.neg_ratio << " ("
       << negative_dist_name(link_.sampling.dist)
       << (link_.sampling.exact_negatives ? ", exact" : "") << "), seed edges "
       << (link_.sampling.exclude_seed_edges ? "excluded" : "kept") << "\n"
       << "Features " << loader_->store().description() << ", " << num_threads() << " thread(s)"
       << (ranks_ > 1 ? " per rank, " + std::to_string(ranks_) + " ranks (" +
                            to_string(group_->backend()) + ")"
                      : std::string())
       << ", prefetch " << s.prefetch << "; device " << report_.device << ", mode " << report_.mode
       << "\n";
  if (!o_.resume_dir.empty()) {
    out_ << "Resuming from " << o_.resume_dir << " at epoch " << start_epoch_ << ", step "
         << resumed_.next_step << " of " << report_.steps_per_epoch << "\n";
  }
  out_.flush();
}

double LinkRun::step(const LinkMinibatch& m) {
  const auto c = Clock::now();
  const LinkBatch& b = m.batch;
  optimizer_->zero_grad();
  const at::Tensor h = model_->encoder().forward(b.sample.blocks, m.x.to(at::kFloat));
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
  if (group_ != nullptr) {
    std::vector<at::Tensor> grads;
    for (const at::Tensor& param : params_) grads.push_back(param.grad());
    group_->all_reduce_mean(grads);
  }
  optimizer_->step();
  const double value = loss.item<double>();
  totals_.compute_s += seconds_since(c);
  return value;
}

void LinkRun::train_epoch(int64_t epoch) {
  model_->train();
  const auto start = Clock::now();
  const DiskTally disk_before = DiskTally::of(loader_->store());
  const at::Tensor mine = shuffled_rows(chosen_.split.train, mix64(o_.seed, 0xe90c, epoch))
                              .narrow(0, rank_ * num_train_, num_train_);
  const int64_t steps = report_.steps_per_epoch;
  // Rank r's step s draws from stream s·ranks + r: one stream per rank, a single process's
  // streams unchanged.
  const uint64_t seed = o_.seed;
  const int64_t rank = rank_, ranks = ranks_;
  const EpochProgress from = epoch == start_epoch_ ? resumed_ : EpochProgress{};
  LinkLoader::Epoch batches = loader_->epoch(
      mine, [=](int64_t s) { return mix64(seed, epoch, s * ranks + rank); }, from.next_step);
  Progress progress("Epoch " + std::to_string(epoch) + " steps", leader_ ? steps : -1);
  const c10::Device device = loader_->settings().device;
  // Every rank starts from the resumed steps' mean, so the mean over ranks counts them once.
  std::vector<at::Tensor> loss_sum{
      at::full({1}, from.loss_sum, at::TensorOptions(device).dtype(at::kDouble))};
  for (int64_t s = from.next_step; s < steps; ++s) {
    progress.update(s);
    const auto t = Clock::now();
    const LinkMinibatch batch = batches.next();
    totals_.wait_s += seconds_since(t);
    totals_.sample_s += batch.sample_s;
    totals_.gather_s += batch.gather_s;
    loss_sum[0] += step(batch);
    const int signal = agreed_stop(group_);
    const int64_t global_step = (epoch - 1) * steps + s + 1;
    if ((signal != 0 && o_.save_state_on_stop) ||
        (o_.checkpoint_every > 0 && global_step % o_.checkpoint_every == 0)) {
      EpochProgress now;
      now.next_step = s + 1;
      now.loss_sum = steps_loss(loss_sum[0]);
      save_state(epoch, now);
    }
    if (signal != 0) stopped(signal, epoch, s + 1);
  }
  progress.finish();
  if (group_ != nullptr) group_->all_reduce_mean(loss_sum);
  const double loss = loss_sum[0].item<double>() / static_cast<double>(steps);
  const double epoch_s = seconds_since(start);
  totals_.train_s += epoch_s;
  nlohmann::json record = {
      {"event", "epoch"}, {"epoch", epoch}, {"loss", loss}, {"epoch_time_s", epoch_s}};
  char text[128];
  std::snprintf(text, sizeof(text), "Epoch %05lld | Loss %.4f", static_cast<long long>(epoch),
                loss);
  std::string line = text, disk_text;
  if (loader_->store().row_file() != nullptr) {
    const DiskTally disk = DiskTally::of(loader_->store()).since(disk_before);
    disk.write_to(record);
    disk_text = disk.text();
  }
  if (o_.evaluate && (epoch % o_.eval_every == 0 || epoch == o_.epochs)) {
    evaluate_epoch(epoch, record, line);
  }
  std::snprintf(text, sizeof(text), " | Time(s) %.4f", epoch_s);
  if (!o_.quiet && leader_) out_ << line << text << disk_text << std::endl;
  metrics_.write(record);
  // A run that keeps a state leaves the finished one, so --epochs can extend it.
  const bool keep_state = o_.checkpoint_every > 0 || !o_.resume_dir.empty();
  if (keep_state && epoch == o_.epochs) save_state(epoch + 1, EpochProgress{});
}

// The ranks' mean of an epoch's loss sum so far (every rank calls it at the same step).
double LinkRun::steps_loss(const at::Tensor& loss_sum) const {
  std::vector<at::Tensor> sum{loss_sum.clone()};
  if (group_ != nullptr) group_->all_reduce_mean(sum);
  return sum[0].item<double>();
}

// A stop asked for by a signal, after `steps` steps of `epoch` (whose state is saved when the
// options say so): the run ends here, saying where its state and best model are.
void LinkRun::stopped(int signal, int64_t epoch, int64_t steps) const {
  if (group_ != nullptr) group_->barrier();
  std::ostringstream message;
  message << "Interrupted by " << signal_name(signal) << " at epoch " << epoch << ", step " << steps
          << " of " << report_.steps_per_epoch;
  if (!totals_.best_dir.empty() && totals_.best_epoch >= 0) {
    message << "; the best-validation model so far (epoch " << totals_.best_epoch << ") is in "
            << totals_.best_dir;
  }
  if (!o_.save_state_on_stop) throw Interrupted(signal, message.str());
  message << ". Training state saved in " << state_dir_;
  throw Interrupted(signal, message.str(), state_dir_);
}

// " | Val AUC 0.9012 | Val AP 0.8977 | Val Hits@50 0.4120" (the metrics the layout gives).
std::string metrics_text(const char* split, const LinkMetrics& m, int64_t k) {
  std::string out;
  char part[64];
  for (const auto& [name, value] : {std::pair<std::string, double>{"AUC", m.roc_auc},
                                    {"AP", m.ap},
                                    {"MRR", m.mrr},
                                    {"Hits@" + std::to_string(k), m.hits}}) {
    if (std::isnan(value)) continue;
    std::snprintf(part, sizeof(part), " | %s %s %.4f", split, name.c_str(), value);
    out += part;
  }
  return out;
}

void LinkRun::evaluate_epoch(int64_t epoch, nlohmann::json& record, std::string& line) {
  const auto start = Clock::now();
  // Batch norm's running statistics come from each rank's own batches: agree on their mean.
  const std::vector<at::Tensor> buffers = model_->buffers();
  if (group_ != nullptr && !buffers.empty()) group_->all_reduce_mean(buffers);
  if (cpu_model_ != nullptr) copy_parameters(*model_, *cpu_model_);
  LinkModel& model = cpu_model_ != nullptr ? *cpu_model_ : *model_;
  const LinkEvalResult r =
      evaluate_link_model(model, ds_.features, chosen_.split, graphs_, link_.hits_k, group_);
  const double eval_s = seconds_since(start);
  totals_.eval_s += eval_s;
  ++totals_.evaluations;
  record["val"] = metrics_json(r.val);
  record["test"] = metrics_json(r.test);
  record["eval_time_s"] = eval_s;
  line += metrics_text("Val", r.val, link_.hits_k) + metrics_text("Test", r.test, link_.hits_k);
  const double value = primary_value(r.val, chosen_.split.negatives);
  if (totals_.best_epoch >= 0 && !(value > totals_.best_value)) return;
  totals_.best_epoch = epoch;
  totals_.best_value = value;
  totals_.best_metrics = {{"val", metrics_json(r.val)}, {"test", metrics_json(r.test)}};
  save_model(epoch, &r);
  totals_.best_dir = o_.checkpoint_dir;
}

// The checkpoint of `epoch`'s model, with its metrics when it was evaluated.
void LinkRun::save_model(int64_t epoch, const LinkEvalResult* r) {
  if (o_.checkpoint_dir.empty() || !leader_) return;
  nlohmann::json meta = {
      {"task", run_kind_name(RunKind::kLink)},
      {"options", options_json(o_, RunKind::kLink)},
      {"model", config_.to_json()},
      {"seed", o_.seed},
      {"epoch", epoch},
      {"primary_metric", report_.primary_metric},
      {"split_description", chosen_.description},
      {"dataset", {{"name", ds_.name}, {"source", ds_.source}, {"num_nodes", ds_.num_nodes()}}}};
  if (r != nullptr) meta.update({{"val", metrics_json(r->val)}, {"test", metrics_json(r->test)}});
  save_checkpoint(o_.checkpoint_dir, *model_, *optimizer_, meta);
}

LinkTrainReport LinkRun::finish() {
  if (!o_.evaluate) save_model(o_.epochs, nullptr);  // the last model, unscored
  const auto epochs = static_cast<double>(o_.epochs);
  report_.epochs = o_.epochs;
  report_.epoch_time_s = totals_.train_s / epochs;
  report_.sample_s = totals_.sample_s / epochs;
  report_.gather_s = totals_.gather_s / epochs;
  report_.compute_s = totals_.compute_s / epochs;
  report_.wait_s = totals_.wait_s / epochs;
  report_.eval_s =
      totals_.evaluations > 0 ? totals_.eval_s / static_cast<double>(totals_.evaluations) : 0.0;
  report_.best_epoch = totals_.best_epoch;
  if (totals_.best_epoch >= 0) {
    report_.best_val = metrics_from_json(totals_.best_metrics.at("val"));
    report_.test = metrics_from_json(totals_.best_metrics.at("test"));
  }
  report_.param_digest = parameter_digest(params_);
  nlohmann::json final_record = report_.to_json();
  final_record["event"] = "final";
  final_record["threads"] = num_threads();
  final_record["ranks"] = ranks_;
  if (loader_->store().row_file() != nullptr) {
    DiskTally::of(loader_->store()).since(disk_start_).write_to(final_record);
  }
  metrics_.write(final_record);
  if (o_.quiet || !leader_) return report_;
  if (o_.evaluate) {
    out_ << "Best validation epoch " << report_.best_epoch << " (by " << report_.primary_metric
         << ")" << metrics_text("Val", report_.best_val, link_.hits_k)
         << metrics_text("Test", report_.test, link_.hits_k) << "\n";
  } else {
    out_ << "Not evaluated\n";
  }
  char line[224];
  std::snprintf(line, sizeof(line),
                "Average epoch time %.4f s, %.2f ms a step (sampling %.4f, gathering %.4f, "
                "compute %.4f, waiting %.4f); evaluation %.4f s\n",
                report_.epoch_time_s,
                1e3 * report_.epoch_time_s / static_cast<double>(report_.steps_per_epoch),
                report_.sample_s, report_.gather_s, report_.compute_s, report_.wait_s,
                report_.eval_s);
  out_ << line;
  if (!o_.evaluate && !o_.checkpoint_dir.empty()) {
    out_ << "Checkpoint (epoch " << o_.epochs << ") in " << o_.checkpoint_dir << "\n";
  } else if (o_.evaluate && !totals_.best_dir.empty()) {
    out_ << "Checkpoint (epoch " << report_.best_epoch << ") in " << totals_.best_dir << "\n";
  } else if (o_.evaluate && !o_.checkpoint_dir.empty()) {
    out_ << "No checkpoint holds the best epoch " << report_.best_epoch
         << ": it came before the run saved checkpoints in " << o_.checkpoint_dir << "\n";
  }
  return report_;
}

}  // namespace

LinkGraphs link_graphs(const ChosenLinkSplit& split, bool directed, bool use_val_edges) {
  LinkGraphs out;
  out.graph = message_passing_graph(split.graph, directed);
  if (use_val_edges) out.test_graph = with_pairs(out.graph, split.split.val);
  return out;
}

LinkEvalResult evaluate_link_model(LinkModel& model, const at::Tensor& features,
                                   const LinkSplit& split, const LinkGraphs& graphs, int64_t hits_k,
                                   ProcessGroup* group) {
  LinkEvalOptions eo;
  eo.hits_k = hits_k;
  eo.group = group;
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
  DGNN_CHECK_ARG(options.epochs >= 1, "epochs", "must be at least 1, got ", options.epochs);
  DGNN_CHECK_ARG(options.eval_every >= 1, "eval_every", "must be at least 1");
  DGNN_CHECK_ARG(link.hits_k >= 1, "hits_k", "must be at least 1, got ", link.hits_k);
  DGNN_CHECK_ARG(link.steps_per_epoch >= 0, "steps_per_epoch",
                 "must be 0 (every training edge) or positive, got ", link.steps_per_epoch);
  DGNN_CHECK_ARG(options.checkpoint_every >= 0, "checkpoint_every", "must not be negative, got ",
                 options.checkpoint_every);
  LinkRun run(dataset, options, out);
  for (int64_t epoch = run.first_epoch(); epoch <= options.epochs; ++epoch) run.train_epoch(epoch);
  return run.finish();
}

}  // namespace directgnn
