#include "train/training_run.h"

#include <ATen/ATen.h>
#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>
#include <torch/utils.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/clock.h"
#include "core/free_cores.h"
#include "core/progress.h"
#include "core/random.h"
#include "core/resources.h"
#include "core/signals.h"
#include "core/threads.h"
#include "directgnn/error.h"
#include "gpu/runtime.h"
#include "train/checkpoint.h"
#include "train/evaluate.h"
#include "train/fused_adam.h"
#include "train/run_options.h"

namespace directgnn {

MetricsLog::MetricsLog(const std::string& path, bool append) {
  if (path.empty()) return;
  file_.open(path, std::ios::out | (append ? std::ios::app : std::ios::trunc));
  DGNN_CHECK_IO(file_.good(), path, ": cannot open the metrics file for writing");
  path_ = path;
}

void MetricsLog::write(const nlohmann::json& record) {
  if (!file_.is_open()) return;
  file_ << record.dump() << '\n';
  file_.flush();
  DGNN_CHECK_IO(file_.good(), path_, ": writing the metrics failed (disk full?)");
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const std::vector<at::Tensor>& params,
                                                        const TrainOptions& o) {
  if (o.optimizer == Optimizer::kAdam) {
    return std::make_unique<FusedAdam>(
        params, torch::optim::AdamOptions(o.lr).weight_decay(o.weight_decay));
  }
  return std::make_unique<torch::optim::SGD>(
      params, torch::optim::SGDOptions(o.lr).weight_decay(o.weight_decay));
}

namespace {

at::Tensor shuffled(const at::Tensor& ids, uint64_t seed) {
  at::Tensor out = ids.clone();
  seeded_shuffle(out.data_ptr<int64_t>(), out.numel(), seed);
  return out;
}

}  // namespace

void copy_parameters(torch::nn::Module& from, torch::nn::Module& to) {
  torch::NoGradGuard no_grad;
  const std::vector<at::Tensor> a = from.parameters(), b = to.parameters();
  for (size_t i = 0; i < a.size(); ++i) b[i].copy_(a[i]);
  // Batch norm's running statistics, which evaluation uses.
  const std::vector<at::Tensor> c = from.buffers(), d = to.buffers();
  for (size_t i = 0; i < c.size(); ++i) d[i].copy_(c[i]);
}

int agreed_stop(ProcessGroup* group) {
  const int local = stop_signal();
  if (group == nullptr) return local;
  std::vector<at::Tensor> flag{at::tensor({static_cast<double>(local != 0)}, at::kDouble)};
  group->all_reduce_sum(flag);
  if (flag[0].item<double>() == 0) return 0;
  return local != 0 ? local : SIGTERM;
}

const char* signal_name(int signal) {
  return signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "a signal";
}

namespace {

// "Test Acc per class: NAME 0.8123 | ..." on a line of its own, when the dataset names its
// classes (meta.json class_names); empty otherwise.
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

// The trainer's data path: its default fan-outs, and layer 0 of SAGE and GCN (which
// aggregate before they project) reading its sources in place where the table allows.
LoaderSettings loader_settings(const TrainOptions& o, const Dataset& ds,
                               std::vector<int64_t> fanouts) {
  LoaderOptions l = o.loader;
  l.fanouts = std::move(fanouts);
  LoaderSettings s = resolve_loader(l, ds, o.group);
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

std::vector<int64_t> checked_fanouts(const TrainOptions& o) {
  std::vector<int64_t> fanouts = resolved_fanouts(o);
  check_fanouts(fanouts, o.model.layers);
  return fanouts;
}

}  // namespace

double TrainingRun::EpochClock::elapsed_s() const { return elapsed_before + seconds_since(start); }
double TrainingRun::EpochClock::cpu_s() const {
  return cpu_before + process_cpu_seconds() - cpu_start;
}

TrainingRun::TrainingRun(const Dataset& ds, const TrainOptions& o, std::ostream& out)
    : ds_(ds),
      o_(o),
      out_(out),
      config_(model_config(o, ds)),
      loader_(std::make_unique<MinibatchLoader>(ds, loader_settings(o, ds, checked_fanouts(o)))),
      run_(loader_->settings()),
      energy_(run_.gpu() ? std::make_unique<GpuEnergyMeter>(gpu::pci_bus_id(run_.index()))
                         : nullptr),
      chosen_(choose_split(ds, o.split, o.seed)),
      group_(o.group),
      rank_(group_ != nullptr ? group_->rank() : 0),
      ranks_(group_ != nullptr ? group_->size() : 1),
      leader_(rank_ == 0),
      max_threads_(num_threads()),
      free_cores_(o.adapt_threads ? std::make_unique<FreeCores>(max_threads_) : nullptr) {
  init_model();
  report_.split_description = chosen_.description;
  // Each rank trains on its own equal shard of every epoch's shuffled training nodes.
  num_train_ = chosen_.split.train.numel() / ranks_;
  DGNN_CHECK(num_train_ > 0, "the split has ", chosen_.split.train.numel(),
             " training nodes, fewer than the ", ranks_, " ranks");
  steps_ = report_.steps_per_epoch = loader_->steps(num_train_);
  report_.seeds_per_epoch = num_train_ * ranks_;
  if (o.loader.cache.gib > 0) {
    const at::Tensor seeds = shuffled(chosen_.split.train, mix64(o.seed, 0xcac4e));
    cache_line_ =
        fill_feature_cache(*loader_, ds_, seeds, o.seed, o.loader.cache, leader_ && !o.quiet);
  }
  disk_start_ = DiskTally::of(loader_->store());
  if (!o.resume_dir.empty()) resume();
  state_dir_ = !o.checkpoint_dir.empty() ? o.checkpoint_dir : std::string(kDefaultStateDir);
  report_.device = report_device(run_);
  report_.mode = loader_->mode();
  // Appending when resuming keeps the records of the epochs already done.
  metrics_ =
      std::make_unique<MetricsLog>(leader_ ? o.metrics_path : std::string(), !o.resume_dir.empty());
  print_header();
}

TrainingRun::~TrainingRun() = default;

// GPU runs evaluate (full neighbourhoods, layer by layer) with a CPU copy of the model, made
// before seeding so the random stream matches a CPU run's. Every device starts from the same
// initialisation, made on the CPU; every rank from rank 0's.
void TrainingRun::init_model() {
  if (run_.gpu()) cpu_model_ = std::make_unique<GnnModel>(config_);
  torch::manual_seed(o_.seed);
  model_ = std::make_unique<GnnModel>(config_);
  if (run_.gpu()) model_->to(run_.device);
  params_ = model_->parameters();
  if (group_ != nullptr) {
    torch::NoGradGuard no_grad;
    group_->broadcast(params_, 0);
  }
  optimizer_ = make_optimizer(params_, o_);
}

void check_resumed_run(const TrainingState& state, const TrainOptions& o, RunKind kind, int ranks,
                       int64_t num_nodes, int64_t steps_per_epoch, const std::string& where) {
  DGNN_CHECK(state.task == run_kind_name(kind), where, ": holds the state of a ", state.task,
             " run, not of a ", run_kind_name(kind), " run");
  std::string changed;
  for (const ChangedOption& c :
       changed_options(state.options, options_json(o, kind), kind, option_names(kind))) {
    changed += "\n  " + c.name + ": saved " + c.saved.dump() + ", given " + c.given.dump();
  }
  DGNN_CHECK(changed.empty(), where,
             ": the run was saved with other options; these differ:", changed,
             "\nresume with the saved ones");
  DGNN_CHECK(state.ranks == ranks, where, ": the run was saved with ", state.ranks,
             " ranks; resume it with the same number, not ", ranks);
  DGNN_CHECK(state.num_nodes == num_nodes && state.steps_per_epoch == steps_per_epoch, where,
             ": the run was saved on another dataset (", state.num_nodes, " nodes, ",
             state.steps_per_epoch, " steps an epoch), not this one (", num_nodes, " nodes, ",
             steps_per_epoch, " steps)");
  DGNN_CHECK(state.epoch <= o.epochs, where, ": the run finished all ", state.epoch - 1,
             " epochs; set epochs above ", state.epoch - 1, " to train further");
}

TrainingState training_state(RunKind kind, const TrainOptions& o, const StateShape& shape,
                             int64_t epoch, const EpochProgress& progress,
                             const RunTotals& totals) {
  TrainingState state;
  state.task = run_kind_name(kind);
  state.options = options_json(o, kind);
  state.run = o.run_info;
  state.ranks = shape.ranks;
  state.num_nodes = shape.num_nodes;
  state.steps_per_epoch = shape.steps_per_epoch;
  state.epoch = epoch;
  state.progress = progress;
  state.totals = totals;
  return state;
}

// Where the run stands: the saved state of an earlier run with the same options.
void TrainingRun::resume() {
  const std::string where = training_state_path(o_.resume_dir);
  const TrainingState state = TrainingState::from_json(read_training_state(o_.resume_dir), where);
  check_resumed_run(state, o_, RunKind::kNode, ranks_, ds_.num_nodes(), steps_, where);
  start_epoch_ = state.epoch;
  resumed_ = state.progress;
  totals_ = state.totals;
  load_training_state(o_.resume_dir, *model_, *optimizer_);
}

void TrainingRun::save_state(int64_t epoch, const EpochProgress& progress) {
  if (!leader_) return;
  const TrainingState state = training_state(RunKind::kNode, o_, {ranks_, ds_.num_nodes(), steps_},
                                             epoch, progress, totals_);
  save_training_state(state_dir_, *model_, *optimizer_, state.to_json());
}

void TrainingRun::print_header() const {
  if (!run_.note.empty() && leader_ && !o_.quiet) out_ << run_.note << "\n";
  if (o_.quiet || !leader_) return;
  out_ << "Dataset " << ds_.name << ": " << ds_.num_nodes() << " nodes, " << ds_.graph.num_edges()
       << " edges, " << ds_.feat_dim() << " features, " << ds_.num_classes << " classes\n"
       << (ds_.feature_access.empty() ? "" : "Features: " + ds_.feature_access + "\n")
       << "Split: " << chosen_.description << "\n"
       << "Model: " << model_kind_name(config_.kind) << ", " << config_.layers << " layers, hidden "
       << config_.hidden
       << (config_.has_heads() ? " x " + std::to_string(config_.heads) + " heads" : "")
       << (config_.norm == Norm::kNone ? "" : std::string(", ") + norm_name(config_.norm) + " norm")
       << (config_.residual ? ", residual" : "") << ", fan-out " << fanout_text(run_.fanouts)
       << ", batch " << run_.batch_size << ", features " << loader_->store().description() << ", "
       << num_threads() << " thread(s)"
       << (ranks_ > 1 ? " per rank, " + std::to_string(ranks_) + " ranks (" +
                            to_string(group_->backend()) + ")"
                      : std::string())
       << ", prefetch " << run_.prefetch << "\n"
       << "Device: " << report_device(run_) << ", mode " << loader_->mode() << "\n"
       << (cache_line_.empty() ? "" : cache_line_ + "\n");
  if (!o_.resume_dir.empty()) {
    out_ << "Resuming from " << o_.resume_dir << " at epoch " << start_epoch_ << ", step "
         << resumed_.next_step << " of " << steps_ << "\n";
  }
  out_.flush();  // seen at once, also when the output is a file
}

void TrainingRun::one_step(const Minibatch& b, EpochProgress& ep, StepSums& sums) {
  const auto t = Clock::now();
  optimizer_->zero_grad();
  const at::Tensor logits = model_->forward(b.batch.blocks, b.x, b.source_table);
  const at::Tensor loss = at::cross_entropy_loss(logits, b.labels);
  loss.backward();
  if (group_ != nullptr) {
    std::vector<at::Tensor> grads;
    for (const at::Tensor& param : params_) grads.push_back(param.grad());
    group_->all_reduce_mean(grads);
  }
  optimizer_->step();
  sums.add(loss, logits, b.labels);
  ep.compute_s += seconds_since(t);
}

// The next minibatch. Preparing it may fail on the data (a feature file that shrank, a read
// error): the steps done so far are saved first, so the run resumes once the input is mended.
Minibatch TrainingRun::next_or_save(MinibatchLoader::Epoch& batches, int64_t epoch,
                                    EpochProgress& ep, const StepSums& sums,
                                    const EpochClock& clock) {
  try {
    return batches.next();
  } catch (const Error& e) {
    // Only the leader saves; with several ranks the others learn of the failure when they
    // time out waiting for this one.
    if (!leader_) throw;
    std::ostringstream message;
    message << e.what() << "\n";
    try {
      sums.read_into(ep);
      ep.elapsed_s = clock.elapsed_s();
      ep.cpu_s = clock.cpu_s();
      save_state(epoch, ep);
      message << "Training state saved in " << state_dir_ << " (epoch " << epoch << ", step "
              << ep.next_step << " of " << steps_ << "); once the input is mended, resume from it";
    } catch (const std::exception& save_error) {
      message << "The training state could not be saved either: " << save_error.what();
      throw Error(message.str());
    }
    throw StoppedWithState(message.str(), state_dir_);
  }
}

int TrainingRun::train_steps(int64_t epoch, MinibatchLoader::Epoch& batches, EpochProgress& ep,
                             const EpochClock& clock) {
  Progress progress("Epoch " + std::to_string(epoch) + " steps", leader_ ? steps_ : -1);
  StepSums sums(ep, run_.device);
  int stopped = 0;
  for (int64_t step = ep.next_step; step < steps_ && stopped == 0; ++step) {
    progress.update(step);
    const auto t = Clock::now();
    const Minibatch b = next_or_save(batches, epoch, ep, sums, clock);
    ep.wait_s += seconds_since(t);
    ep.sample_s += b.sample_s;
    ep.gather_s += b.gather_s;
    one_step(b, ep, sums);
    ep.next_step = step + 1;
    const int64_t global_step = (epoch - 1) * steps_ + step + 1;
    stopped = agreed_stop(group_);
    if ((stopped != 0 && o_.save_state_on_stop) ||
        (o_.checkpoint_every > 0 && global_step % o_.checkpoint_every == 0)) {
      sums.read_into(ep);
      ep.elapsed_s = clock.elapsed_s();
      ep.cpu_s = clock.cpu_s();
      save_state(epoch, ep);
    }
  }
  progress.finish();
  const auto drain = Clock::now();
  sums.read_into(ep);  // waits for the epoch's last steps on a GPU: part of compute time
  ep.compute_s += seconds_since(drain);
  return stopped;
}

// Sizes the thread team to the cores other processes left free during the last epoch.
void TrainingRun::adapt_threads() {
  const int threads = free_cores_->sample();
  if (threads == num_threads()) return;
  configure_threads(threads);
  if (o_.quiet || !leader_) return;
  out_ << "note: other processes keep " << max_threads_ - threads << " of " << max_threads_
       << " cores busy; training with " << threads << " thread(s) (a fixed thread count stops this)"
       << std::endl;
}

void TrainingRun::train_epoch(int64_t epoch) {
  if (free_cores_ != nullptr) adapt_threads();
  model_->train();
  EpochProgress ep = epoch == start_epoch_ ? resumed_ : EpochProgress{};
  if (run_.gpu()) gpu::reset_peak_allocated(run_.index());
  const double energy_start = energy_ != nullptr ? energy_->energy_joules() : 0.0;
  const EpochClock clock{Clock::now(), process_cpu_seconds(), ep.elapsed_s, ep.cpu_s};
  const DiskTally disk_before = DiskTally::of(loader_->store());
  const at::Tensor order = shuffled(chosen_.split.train, mix64(o_.seed, 0xe90c, epoch))
                               .narrow(0, rank_ * num_train_, num_train_);
  const uint64_t seed = o_.seed;
  const int rank = rank_, ranks = ranks_;
  MinibatchLoader::Epoch batches = loader_->epoch(
      order,
      [seed, epoch, rank, ranks](int64_t step) {
        const uint64_t stream = mix64(seed, epoch, step);
        return ranks > 1 ? mix64(stream, rank) : stream;
      },
      ep.next_step);
  const int stopped = train_steps(epoch, batches, ep, clock);
  if (stopped != 0) {
    std::ostringstream where;
    where << "at epoch " << epoch << ", step " << ep.next_step << " of " << steps_;
    interrupted(stopped, where.str());
  }
  const double epoch_s = clock.elapsed_s(), cpu_s = clock.cpu_s();
  const bool timed = epoch > o_.warmup_epochs;
  if (timed) {
    totals_.train_s += epoch_s;
    totals_.sample_s += ep.sample_s;
    totals_.gather_s += ep.gather_s;
    totals_.compute_s += ep.compute_s;
    totals_.wait_s += ep.wait_s;
    totals_.cpu_s += cpu_s;
  }
  nlohmann::json record = epoch_record(epoch, ep, epoch_s, cpu_s, energy_start, timed);
  char line[256];
  std::snprintf(line, sizeof(line), "Epoch %05lld | Loss %.4f | Train Acc %.4f",
                static_cast<long long>(epoch), record["loss"].get<double>(),
                record["train_acc"].get<double>());
  std::string text = line;
  std::string disk_text;  // the epoch's reads, before evaluation reads the table otherwise
  if (loader_->store().row_file() != nullptr) {
    const DiskTally disk = DiskTally::of(loader_->store()).since(disk_before);
    disk.write_to(record);
    disk_text = disk.text();
  }
  if (o_.evaluate && (epoch % o_.eval_every == 0 || epoch == o_.epochs)) {
    evaluate_epoch(epoch, record, text);
  }
  std::snprintf(line, sizeof(line), " | Time(s) %.4f", epoch_s);
  text += line + disk_text;
  if (!o_.quiet && leader_) out_ << text << std::endl;
  metrics_->write(record);
  // The epoch is complete; a stop now resumes at the next one.
  const int stop_now = agreed_stop(group_);
  const bool keep_state = o_.checkpoint_every > 0 || !o_.resume_dir.empty();
  if ((stop_now != 0 && o_.save_state_on_stop) || (keep_state && epoch == o_.epochs))
    save_state(epoch + 1, EpochProgress{});
  if (stop_now != 0 && epoch < o_.epochs)
    interrupted(stop_now, "after epoch " + std::to_string(epoch));
}

void TrainingRun::interrupted(int signal, const std::string& where) {
  if (group_ != nullptr) group_->barrier();  // the leader has written the state
  std::ostringstream message;
  message << "Interrupted by " << signal_name(signal) << " " << where;
  if (!o_.save_state_on_stop) throw Interrupted(signal, message.str());
  message << ". Training state saved in " << state_dir_;
  throw Interrupted(signal, message.str(), state_dir_);
}

nlohmann::json TrainingRun::epoch_record(int64_t epoch, const EpochProgress& ep, double epoch_s,
                                         double cpu_s, double energy_start, bool timed) {
  at::Tensor sums = at::tensor({ep.loss_sum, static_cast<double>(ep.correct)}, at::kDouble);
  if (group_ != nullptr) {
    std::vector<at::Tensor> t{sums};
    group_->all_reduce_sum(t);
  }
  const auto seen = static_cast<double>(report_.seeds_per_epoch);
  nlohmann::json record = {{"event", "epoch"},
                           {"epoch", epoch},
                           {"loss", sums[0].item<double>() / seen},
                           {"train_acc", sums[1].item<double>() / seen},
                           {"epoch_time_s", epoch_s},
                           {"sample_s", ep.sample_s},
                           {"gather_s", ep.gather_s},
                           {"compute_s", ep.compute_s},
                           {"wait_s", ep.wait_s},
                           {"cpu_s", cpu_s},
                           {"cpu_util", cpu_s / std::max(epoch_s, 1e-9)},
                           {"threads", num_threads()}};
  if (!run_.gpu()) return record;
  const int64_t peak = gpu::peak_allocated_bytes(run_.index());
  report_.gpu_peak_bytes = std::max(report_.gpu_peak_bytes, peak);
  record["gpu_peak_bytes"] = peak;
  // Energy of the training steps of this epoch (the part run in this process).
  const double joules = energy_->energy_joules() - energy_start;
  record["gpu_energy_j"] = number_or_null(joules);
  record["gpu_power_w"] = number_or_null(joules / std::max(epoch_s, 1e-9));
  if (timed && !std::isnan(joules)) {
    energy_j_ += joules;
    ++energy_epochs_;
  }
  return record;
}

// Evaluates, and writes the checkpoint when validation accuracy is the best so far.
void TrainingRun::evaluate_epoch(int64_t epoch, nlohmann::json& record, std::string& text) {
  const auto eval_start = Clock::now();
  // Each rank updates batch norm's running statistics from its own batches; evaluation shares
  // the nodes out between ranks, so they first agree on the mean statistics.
  const std::vector<at::Tensor> buffers = model_->buffers();
  if (group_ != nullptr && !buffers.empty()) group_->all_reduce_mean(buffers);
  if (cpu_model_ != nullptr) copy_parameters(*model_, *cpu_model_);
  const EvalResult r =
      evaluate(cpu_model_ != nullptr ? *cpu_model_ : *model_, ds_, chosen_.split, group_);
  const double eval_s = seconds_since(eval_start);
  totals_.eval_s += eval_s;
  ++totals_.evaluations;
  record["val_acc"] = r.val_acc;
  record["test_acc"] = r.test_acc;
  record["eval_time_s"] = eval_s;
  if (ds_.num_classes == 2) {
    record["val_roc_auc"] = number_or_null(r.val_roc_auc);
    record["test_roc_auc"] = number_or_null(r.test_roc_auc);
  }
  char line[128];
  std::snprintf(line, sizeof(line), " | Val Acc %.4f | Test Acc %.4f", r.val_acc, r.test_acc);
  text += line;
  if (totals_.best_epoch >= 0 && r.val_acc <= totals_.best_value) return;
  totals_.best_epoch = epoch;
  totals_.best_value = r.val_acc;
  totals_.best_metrics = {{"val", {{"acc", r.val_acc}, {"roc_auc", number_or_null(r.val_roc_auc)}}},
                          {"test",
                           {{"acc", r.test_acc},
                            {"roc_auc", number_or_null(r.test_roc_auc)},
                            {"class_acc", numbers_or_nulls(r.test_class_acc)}}}};
  if (o_.checkpoint_dir.empty() || !leader_) return;
  totals_.best_dir = o_.checkpoint_dir;
  const nlohmann::json meta = {
      {"task", run_kind_name(RunKind::kNode)},
      {"options", options_json(o_, RunKind::kNode)},
      {"model", config_.to_json()},
      {"seed", o_.seed},
      {"split", o_.split},
      {"epoch", epoch},
      {"val_acc", r.val_acc},
      {"test_acc", r.test_acc},
      {"test_roc_auc", number_or_null(r.test_roc_auc)},
      {"split_description", chosen_.description},
      {"dataset", {{"name", ds_.name}, {"source", ds_.source}, {"num_nodes", ds_.num_nodes()}}}};
  save_checkpoint(o_.checkpoint_dir, *model_, *optimizer_, meta);
}

TrainReport TrainingRun::finish() {
  TrainReport& report = report_;
  report.epochs = o_.epochs;
  report.timed_epochs = o_.epochs - o_.warmup_epochs;
  const auto epochs = static_cast<double>(report.timed_epochs);
  report.best_epoch = totals_.best_epoch;
  if (totals_.best_epoch >= 0) {
    const nlohmann::json& test = totals_.best_metrics.at("test");
    report.best_val_acc = totals_.best_value;
    report.test_acc = test.at("acc").get<double>();
    report.test_roc_auc = metric_or_nan(test.at("roc_auc"));
    for (const nlohmann::json& v : test.at("class_acc"))
      report.test_class_acc.push_back(metric_or_nan(v));
  }
  report.class_names = ds_.class_names;
  report.epoch_time_s = totals_.train_s / epochs;
  report.sample_s = totals_.sample_s / epochs;
  report.gather_s = totals_.gather_s / epochs;
  report.compute_s = totals_.compute_s / epochs;
  report.wait_s = totals_.wait_s / epochs;
  report.cpu_s = totals_.cpu_s / epochs;
  report.param_digest = parameter_digest(params_);
  if (loader_->store().row_file() != nullptr) {
    const DiskTally disk = DiskTally::of(loader_->store()).since(disk_start_);
    report.disk_bytes_gathered = disk.bytes_gathered;
    report.disk_bytes_asked = disk.bytes_asked;
    if (loader_->store().row_cache() != nullptr) report.disk_cache_hit_rate = disk.hit_rate();
    report.feature_cache = cache_line_;
  }
  if (energy_epochs_ > 0) {
    report.gpu_energy_j = energy_j_ / static_cast<double>(energy_epochs_);
    report.gpu_power_w = energy_j_ / std::max(totals_.train_s, 1e-9);
  }
  report.eval_s =
      totals_.evaluations > 0 ? totals_.eval_s / static_cast<double>(totals_.evaluations) : 0.0;
  nlohmann::json final_record = report.to_json();
  final_record["event"] = "final";
  final_record["threads"] = num_threads();
  final_record["ranks"] = ranks_;
  metrics_->write(final_record);
  if (o_.quiet || !leader_) return report;
  char line[256];
  std::snprintf(line, sizeof(line), "Best validation epoch %lld: Val Acc %.4f | Test Acc %.4f",
                static_cast<long long>(report.best_epoch), report.best_val_acc, report.test_acc);
  out_ << line;
  if (ds_.num_classes == 2) {
    std::snprintf(line, sizeof(line), " | Test ROC-AUC %.4f", report.test_roc_auc);
    out_ << line;
  }
  out_ << class_accuracy_text(report);
  std::snprintf(line, sizeof(line),
                "\nAverage epoch time %.4f s (sampling %.4f, gathering %.4f, compute %.4f, "
                "waiting %.4f; CPU %.2f s); evaluation %.4f s\n",
                report.epoch_time_s, report.sample_s, report.gather_s, report.compute_s,
                report.wait_s, report.cpu_s, report.eval_s);
  out_ << line;
  if (!o_.checkpoint_dir.empty()) {
    out_ << "Checkpoint (epoch " << report.best_epoch << ") in " << o_.checkpoint_dir << "\n";
  }
  return report;
}

}  // namespace directgnn
