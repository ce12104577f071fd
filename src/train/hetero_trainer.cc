#include "train/hetero_trainer.h"

#include <ATen/ATen.h>
#include <torch/optim/optimizer.h>
#include <torch/utils.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>
#include <utility>

#include "core/clock.h"
#include "core/random.h"
#include "core/signals.h"
#include "core/threads.h"
#include "directgnn/error.h"
#include "train/checkpoint.h"
#include "train/hetero_state.h"
#include "train/metrics.h"
#include "train/run_options.h"
#include "train/trainer.h"
#include "train/training_run.h"

namespace directgnn {
namespace {

// One epoch's loader timings (the sums that shape results live in EpochProgress).
struct EpochTimes {
  double sample_s = 0, gather_s = 0, wait_s = 0;
};

class HeteroRun {
 public:
  HeteroRun(const HeteroDataset& ds, const TrainOptions& o, std::ostream& log);
  HeteroTrainReport run();

 private:
  Split pick_split() const;
  void take_step(HeteroBatch& b);
  EpochTimes train_epoch(int64_t epoch);
  std::pair<double, double> evaluate();
  void log_epoch(int64_t epoch, const EpochTimes& times, double seconds, double val, double test,
                 bool evaluated);
  void save_best(int64_t epoch, double val, double test);
  void save_state();
  [[noreturn]] void stopped(int signal);
  std::vector<at::Tensor> digest_tensors() const;
  void finish(double train_s, double eval_s, int64_t evals, const EpochTimes& times,
              int64_t epochs_run);

  const HeteroDataset& ds_;
  const TrainOptions& o_;
  std::ostream& log_;
  Split split_;
  LoaderSettings settings_;
  std::shared_ptr<HeteroModel> model_;
  std::shared_ptr<HeteroModel> cpu_model_;  // GPU runs evaluate and checkpoint a CPU copy
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  std::unique_ptr<HeteroLoader> loader_;
  std::vector<std::unique_ptr<EmbeddingTable>> tables_;  // per type; null without a table
  std::vector<std::string> type_names_;
  std::unique_ptr<MetricsLog> metrics_;
  int64_t epoch_ = 1;       // the epoch being trained
  EpochProgress progress_;  // within it
  RunTotals totals_;        // the best evaluation so far
  HeteroTrainReport report_;
};

HeteroRun::HeteroRun(const HeteroDataset& ds, const TrainOptions& o, std::ostream& log)
    : ds_(ds), o_(o), log_(log), split_(pick_split()), settings_(resolve_hetero_loader(o.loader)) {
  HeteroModelConfig config = hetero_model_config(ds, o);
  for (const NodeType& t : ds.node_types) type_names_.push_back(t.name);
  tables_ = make_embedding_tables(ds_, o_.hetero.embeddings, o_.seed, config.in_dims);
  torch::manual_seed(o_.seed);
  model_ = std::make_shared<HeteroModel>(config);
  if (settings_.gpu()) {
    cpu_model_ = std::make_shared<HeteroModel>(config);
    model_->to(settings_.device);
  }
  optimizer_ = make_optimizer(model_->parameters(), o_);
  loader_ = std::make_unique<HeteroLoader>(ds, hetero_fanouts(ds, o), settings_);
  report_.steps_per_epoch = loader_->steps(split_.train.numel());
  if (!o_.resume_dir.empty()) {
    const TrainingState state =
        load_hetero_state(o_, RunKind::kHetero, ds.num_nodes(), report_.steps_per_epoch, *model_,
                          *optimizer_, tables_, type_names_);
    epoch_ = state.epoch;
    progress_ = state.progress;
    totals_ = state.totals;
  }
  if (!o_.metrics_path.empty()) {
    metrics_ = std::make_unique<MetricsLog>(o_.metrics_path, !o_.resume_dir.empty());
  }
}

Split HeteroRun::pick_split() const {
  DGNN_CHECK(ds_.target_type >= 0, ds_.source,
             ": has no labelled node type; node classification needs labels and a split");
  DGNN_CHECK(!ds_.splits.empty(), ds_.source, ": stores no split of node type '", ds_.target().name,
             "'; give train, validation and test ids");
  DGNN_CHECK(o_.split >= 0 && o_.split < static_cast<int64_t>(ds_.splits.size()), ds_.source,
             ": has ", ds_.splits.size(), " split(s); split ", o_.split, " does not exist");
  return ds_.splits[static_cast<size_t>(o_.split)];
}

void HeteroRun::take_step(HeteroBatch& b) {
  const c10::Device device = settings_.device;
  hetero_batch_to_device(b.sample.blocks, b.x, device);
  b.labels = b.labels.to(device);
  read_embedding_rows(tables_, b.sample.input_nodes, device, b.x);
  optimizer_->zero_grad();
  const at::Tensor logits = model_->forward(b.sample.blocks, b.x);
  const at::Tensor loss = at::cross_entropy_loss(logits, b.labels);
  loss.backward();
  optimizer_->step();
  update_embedding_rows(tables_, b.sample.input_nodes, b.x);
  const int64_t n = b.labels.numel();
  progress_.loss_sum += loss.item<double>() * static_cast<double>(n);
  progress_.correct += logits.argmax(1).eq(b.labels).sum().item<int64_t>();
  progress_.seen += n;
  ++progress_.next_step;
}

EpochTimes HeteroRun::train_epoch(int64_t epoch) {
  model_->train();
  at::Tensor order = split_.train.clone();
  seeded_shuffle(order.data_ptr<int64_t>(), order.numel(), mix64(o_.seed, 0x5eed, epoch));
  const uint64_t seed = o_.seed;
  HeteroLoader::Epoch batches = loader_->epoch(
      order, [seed, epoch](int64_t step) { return mix64(seed, epoch, step); }, progress_.next_step);
  EpochTimes times;
  while (!batches.done()) {
    const auto t0 = Clock::now();
    HeteroBatch b = batches.next();
    times.wait_s += seconds_since(t0);
    times.sample_s += b.sample_s;
    times.gather_s += b.gather_s;
    take_step(b);
    const int64_t global = (epoch - 1) * report_.steps_per_epoch + progress_.next_step;
    if (o_.checkpoint_every > 0 && global % o_.checkpoint_every == 0) save_state();
    if (const int signal = stop_signal()) stopped(signal);
  }
  return times;
}

std::pair<double, double> HeteroRun::evaluate() {
  const std::vector<at::Tensor> inputs = hetero_inputs(ds_, tables_);
  if (cpu_model_) copy_parameters(*model_, *cpu_model_);
  const at::Tensor logits = (cpu_model_ ? cpu_model_ : model_)->infer(ds_, inputs);
  return {accuracy(logits, ds_.labels, split_.val), accuracy(logits, ds_.labels, split_.test)};
}

void HeteroRun::log_epoch(int64_t epoch, const EpochTimes& s, double seconds, double val,
                          double test, bool evaluated) {
  const double seen = std::max(1.0, static_cast<double>(progress_.seen));
  const double loss = progress_.loss_sum / seen,
               train = static_cast<double>(progress_.correct) / seen;
  if (!o_.quiet) {
    char scores[64] = "(not evaluated)", line[256];
    if (evaluated) std::snprintf(scores, sizeof scores, "val %.4f  test %.4f", val, test);
    std::snprintf(line, sizeof line,
                  "epoch %3lld  loss %.4f  train %.4f  %s  %.2f s (sample %.2f, gather %.2f, "
                  "waited %.2f)",
                  static_cast<long long>(epoch), loss, train, scores, seconds, s.sample_s,
                  s.gather_s, s.wait_s);
    log_ << line << std::endl;
  }
  if (!metrics_) return;
  nlohmann::json record = {
      {"event", "epoch"},       {"epoch", epoch},          {"loss", loss},
      {"train_acc", train},     {"epoch_time_s", seconds}, {"sample_s", s.sample_s},
      {"gather_s", s.gather_s}, {"wait_s", s.wait_s}};
  if (evaluated) {
    record["val_acc"] = val;
    record["test_acc"] = test;
  }
  metrics_->write(record);
}

void HeteroRun::save_best(int64_t epoch, double val, double test) {
  nlohmann::json meta = {{"task", run_kind_name(RunKind::kHetero)},
                         {"options", options_json(o_, RunKind::kHetero)},
                         {"model", model_->config().to_json()},
                         {"epoch", epoch},
                         {"seed", o_.seed},
                         {"split", o_.split},
                         {"val_acc", val},
                         {"test_acc", test},
                         {"run", o_.run_info}};
  nlohmann::json tables = nlohmann::json::object();
  for (size_t t = 0; t < tables_.size(); ++t) {
    if (!tables_[t]) continue;
    const std::string& name = type_names_[t];
    std::filesystem::create_directories(o_.checkpoint_dir + "/embeddings");
    tables_[t]->save(o_.checkpoint_dir + "/embeddings", name);
    tables[name] = {{"dim", tables_[t]->dim()}, {"file", "embeddings/" + name + ".npy"}};
  }
  if (!tables.empty()) meta["embeddings"] = tables;
  // The tables first: checkpoint.pt, written last, names the tables its model was trained with.
  // evaluate() has just copied a GPU model's parameters to the CPU copy.
  save_checkpoint(o_.checkpoint_dir, cpu_model_ ? *cpu_model_ : *model_, *optimizer_, meta);
  totals_.best_dir = o_.checkpoint_dir;
}

void HeteroRun::save_state() {
  save_hetero_state(
      hetero_state_dir(o_), *model_, *optimizer_, tables_, type_names_,
      training_state(RunKind::kHetero, o_, {1, ds_.num_nodes(), report_.steps_per_epoch}, epoch_,
                     progress_, totals_));
}

void HeteroRun::stopped(int signal) {
  save_state();
  std::ostringstream message;
  message << "Interrupted by " << signal_name(signal) << " at epoch " << epoch_ << ", step "
          << progress_.next_step << ". Training state saved in " << hetero_state_dir(o_);
  throw Interrupted(signal, message.str(), hetero_state_dir(o_));
}

std::vector<at::Tensor> HeteroRun::digest_tensors() const {
  std::vector<at::Tensor> all = model_->parameters();
  for (const auto& table : tables_) {
    if (table) all.push_back(table->weight());
  }
  return all;
}

HeteroTrainReport HeteroRun::run() {
  double train_s = 0, eval_s = 0;
  int64_t evals = 0, epochs_run = 0;
  EpochTimes totals;
  for (; epoch_ <= o_.epochs; ++epoch_) {
    const int64_t epoch = epoch_;
    const auto t0 = Clock::now();
    const EpochTimes s = train_epoch(epoch);
    const double seconds = seconds_since(t0);
    train_s += seconds;
    totals.sample_s += s.sample_s;
    totals.gather_s += s.gather_s;
    totals.wait_s += s.wait_s;
    ++epochs_run;
    const bool evaluated = o_.evaluate && (epoch % o_.eval_every == 0 || epoch == o_.epochs);
    double val = 0, test = 0;
    if (evaluated) {
      const auto e0 = Clock::now();
      std::tie(val, test) = evaluate();
      eval_s += seconds_since(e0);
      ++evals;
      if (totals_.best_epoch < 0 || val > totals_.best_value) {
        totals_.best_epoch = epoch;
        totals_.best_value = val;
        totals_.best_metrics = {{"val", {{"acc", val}}}, {"test", {{"acc", test}}}};
        if (!o_.checkpoint_dir.empty()) save_best(epoch, val, test);
      }
    }
    log_epoch(epoch, s, seconds, val, test, evaluated);
    progress_ = EpochProgress{};
  }
  // A run that keeps a state dir leaves the finished state there, so --epochs can extend it.
  if (!o_.checkpoint_dir.empty() || !o_.resume_dir.empty()) save_state();
  finish(train_s, eval_s, evals, totals, epochs_run);
  return report_;
}

void HeteroRun::finish(double train_s, double eval_s, int64_t evals, const EpochTimes& t,
                       int64_t epochs_run) {
  const double epochs = static_cast<double>(std::max<int64_t>(1, epochs_run));
  report_.epochs = o_.epochs;
  report_.best_epoch = totals_.best_epoch;
  if (totals_.best_epoch >= 0) {
    report_.best_val_acc = totals_.best_value;
    report_.test_acc = totals_.best_metrics.at("test").at("acc").get<double>();
  }
  report_.epoch_time_s = train_s / epochs;
  report_.sample_s = t.sample_s / epochs;
  report_.gather_s = t.gather_s / epochs;
  report_.wait_s = t.wait_s / epochs;
  report_.eval_s = evals > 0 ? eval_s / static_cast<double>(evals) : 0;
  report_.param_digest = parameter_digest(digest_tensors());
  if (!metrics_) return;
  metrics_->write({{"event", "final"},
                   {"task", "hetero"},
                   {"model", hetero_model_kind_name(model_->config().kind)},
                   {"best_epoch", report_.best_epoch},
                   {"best_val_acc", report_.best_val_acc},
                   {"test_acc", report_.test_acc},
                   {"epoch_time_s", report_.epoch_time_s},
                   {"sample_s", report_.sample_s},
                   {"gather_s", report_.gather_s},
                   {"wait_s", report_.wait_s},
                   {"eval_s", report_.eval_s},
                   {"steps_per_epoch", report_.steps_per_epoch},
                   {"threads", num_threads()},
                   {"param_digest", report_.param_digest}});
}

}  // namespace

std::vector<std::unique_ptr<EmbeddingTable>> make_embedding_tables(const HeteroDataset& ds,
                                                                   const EmbeddingOptions& options,
                                                                   uint64_t seed,
                                                                   std::vector<int64_t>& in_dims) {
  std::vector<std::unique_ptr<EmbeddingTable>> tables(ds.node_types.size());
  if (options.dim <= 0) return tables;
  for (size_t t = 0; t < ds.node_types.size(); ++t) {
    if (ds.node_types[t].has_features()) continue;
    tables[t] =
        std::make_unique<EmbeddingTable>(ds.node_types[t].count, options, mix64(seed, 0xe3b0, t));
    in_dims[t] = options.dim;
  }
  return tables;
}

void read_embedding_rows(const std::vector<std::unique_ptr<EmbeddingTable>>& tables,
                         const std::vector<at::Tensor>& input_nodes, const c10::Device& device,
                         std::vector<at::Tensor>& x) {
  for (size_t t = 0; t < tables.size(); ++t) {
    if (tables[t]) x[t] = tables[t]->gather(input_nodes[t]).to(device).requires_grad_(true);
  }
}

void update_embedding_rows(std::vector<std::unique_ptr<EmbeddingTable>>& tables,
                           const std::vector<at::Tensor>& input_nodes,
                           const std::vector<at::Tensor>& x) {
  for (size_t t = 0; t < tables.size(); ++t) {
    if (tables[t] && x[t].grad().defined()) tables[t]->update(input_nodes[t], x[t].grad().cpu());
  }
}

void hetero_batch_to_device(std::vector<HeteroBlock>& blocks, std::vector<at::Tensor>& x,
                            const c10::Device& device) {
  if (device.is_cpu()) return;
  for (HeteroBlock& block : blocks) {
    for (Block& r : block.relations) {
      r.indptr = r.indptr.to(device);
      r.indices = r.indices.to(device);
    }
  }
  for (at::Tensor& rows : x) {
    if (rows.defined()) rows = rows.to(device);
  }
}

std::vector<at::Tensor> hetero_inputs(const HeteroDataset& ds,
                                      const std::vector<std::unique_ptr<EmbeddingTable>>& tables) {
  std::vector<at::Tensor> inputs;
  for (size_t t = 0; t < ds.node_types.size(); ++t) {
    inputs.push_back(tables[t] ? tables[t]->weight() : ds.node_types[t].features);
  }
  return inputs;
}

HeteroModelConfig hetero_model_config(const HeteroDataset& ds, const TrainOptions& o) {
  HeteroModelConfig config = HeteroModelConfig::for_dataset(ds);
  config.kind = o.hetero.model;
  config.hidden = o.model.hidden;
  config.layers = o.model.layers;
  config.dropout = o.model.dropout;
  config.num_bases = o.hetero.bases;
  return config;
}

HeteroSamplerOptions hetero_fanouts(const HeteroDataset& ds, const TrainOptions& o) {
  return hetero_sampler_options(ds, resolved_fanouts(o), o.loader.relation_fanouts, o.model.layers);
}

HeteroTrainReport train_hetero(const HeteroDataset& dataset, const TrainOptions& options,
                               std::ostream& log) {
  DGNN_CHECK_ARG(options.epochs >= 1, "epochs", "must be at least 1, got ", options.epochs);
  DGNN_CHECK_ARG(options.eval_every >= 1, "eval_every", "must be at least 1, got ",
                 options.eval_every);
  DGNN_CHECK_ARG(options.checkpoint_every >= 0, "checkpoint_every", "must not be negative, got ",
                 options.checkpoint_every);
  HeteroRun run(dataset, options, log);
  return run.run();
}

}  // namespace directgnn
