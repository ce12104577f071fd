#include "train/run_loop.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>

#include "core/clock.h"
#include "core/free_cores.h"
#include "core/nvml.h"
#include "core/progress.h"
#include "core/resources.h"
#include "core/signals.h"
#include "core/threads.h"
#include "directgnn/error.h"
#include "gpu/runtime.h"
#include "loader/feature_cache.h"
#include "train/checkpoint.h"
#include "train/training_run.h"

namespace directgnn {
namespace {

// The clock of the epoch being trained, which may have started before a resume.
struct EpochClock {
  Clock::time_point start;
  double cpu_start = 0, elapsed_before = 0, cpu_before = 0;
  double elapsed_s() const { return elapsed_before + seconds_since(start); }
  double cpu_s() const { return cpu_before + process_cpu_seconds() - cpu_start; }
};

// The tables read from disk, and their counters.
std::vector<NamedStore> disk_stores(const RunTask& task) {
  std::vector<NamedStore> out;
  for (const NamedStore& s : task.stores()) {
    if (s.store != nullptr && s.store->row_file() != nullptr) out.push_back(s);
  }
  return out;
}

std::vector<DiskTally> disk_tallies(const std::vector<NamedStore>& stores) {
  std::vector<DiskTally> out;
  for (const NamedStore& s : stores) out.push_back(DiskTally::of(*s.store));
  return out;
}

std::vector<DiskTally> tallies_since(const std::vector<DiskTally>& now,
                                     const std::vector<DiskTally>& before) {
  std::vector<DiskTally> out;
  for (size_t i = 0; i < now.size(); ++i) out.push_back(now[i].since(before[i]));
  return out;
}

// The epoch's disk figures: all tables together in the record's disk_* fields and the line;
// per node type (named tables) under "disk_types" and in brackets, e.g.
// " (paper: rows 1.20 GB, hits 45.3%, asked 0.66 GB; ...)".
std::string write_disk_epoch(const std::vector<NamedStore>& stores,
                             const std::vector<DiskTally>& epoch, nlohmann::json& record) {
  const DiskTally total = DiskTally::sum(epoch);
  total.write_to(record);
  std::string text = total.text(), types;
  for (size_t i = 0; i < stores.size(); ++i) {
    if (stores[i].name.empty()) continue;
    nlohmann::json one = nlohmann::json::object();
    epoch[i].write_to(one, false);
    record["disk_types"][stores[i].name] = one;
    char part[160];
    std::snprintf(part, sizeof(part), "%s: rows %.2f GB, hits %.1f%%, asked %.2f GB",
                  stores[i].name.c_str(), static_cast<double>(epoch[i].bytes_gathered) / 1e9,
                  100.0 * epoch[i].hit_rate(), static_cast<double>(epoch[i].bytes_asked) / 1e9);
    types += (types.empty() ? "" : "; ") + std::string(part);
  }
  return types.empty() ? text : text + " (" + types + ")";
}

}  // namespace

class RunLoop::Impl {
 public:
  Impl(RunTask& task, const TrainOptions& o, std::ostream& out);
  int64_t first_epoch() const { return start_epoch_; }
  void train_epoch(int64_t epoch);
  RunReport finish();

 private:
  void resume();
  void save_state(int64_t epoch, const EpochProgress& progress);
  void write_state(int64_t epoch, const EpochProgress& progress);
  void adapt_threads();
  int train_steps(int64_t epoch, EpochProgress& ep, StepSums& sums, const EpochClock& clock);
  BatchTimes next_or_save(int64_t epoch, const EpochProgress& ep, const StepSums& sums,
                          const EpochClock& clock);
  EpochProgress progress_now(EpochProgress ep, const StepSums& sums, const EpochClock& clock);
  nlohmann::json epoch_record(int64_t epoch, const EpochProgress& ep, double epoch_s, double cpu_s,
                              double energy_start, bool timed);
  void evaluate_epoch(int64_t epoch, nlohmann::json& record, std::string& line);
  [[noreturn]] void interrupted(int signal, const std::string& where);

  RunTask& task_;
  const TrainOptions& o_;
  std::ostream& out_;
  ProcessGroup* group_;
  int rank_, ranks_;
  bool leader_;
  int max_threads_;  // the team on an idle machine
  std::unique_ptr<FreeCores> free_cores_;
  std::unique_ptr<GpuEnergyMeter> energy_;
  std::unique_ptr<MetricsLog> metrics_;
  std::string state_dir_, cache_line_;
  int64_t steps_ = 0, start_epoch_ = 1;
  EpochProgress resumed_;
  RunTotals totals_;
  std::vector<NamedStore> disk_stores_;
  std::vector<DiskTally> disk_start_;
  RunReport report_;
  double energy_j_ = 0;
  int64_t energy_epochs_ = 0;
  double last_state_save_s_ = 0;
  int64_t state_saves_ = 0;
};

RunLoop::Impl::Impl(RunTask& task, const TrainOptions& o, std::ostream& out)
    : task_(task),
      o_(o),
      out_(out),
      group_(o.group),
      rank_(group_ != nullptr ? group_->rank() : 0),
      ranks_(group_ != nullptr ? group_->size() : 1),
      leader_(rank_ == 0),
      max_threads_(num_threads()),
      free_cores_(o.adapt_threads ? std::make_unique<FreeCores>(max_threads_) : nullptr),
      state_dir_(!o.checkpoint_dir.empty() ? o.checkpoint_dir : std::string(kDefaultStateDir)),
      steps_(task.steps_per_epoch()) {
  const LoaderSettings& s = task_.settings();
  if (s.gpu()) energy_ = std::make_unique<GpuEnergyMeter>(gpu::pci_bus_id(s.index()));
  if (o.loader.cache.gib > 0) cache_line_ = task_.fill_cache(leader_ && !o.quiet);
  disk_stores_ = disk_stores(task_);
  disk_start_ = disk_tallies(disk_stores_);
  if (!o.resume_dir.empty()) resume();
  // Appending when resuming keeps the records of the epochs already done.
  metrics_ =
      std::make_unique<MetricsLog>(leader_ ? o.metrics_path : std::string(), !o.resume_dir.empty());
  if (!s.note.empty() && leader_ && !o.quiet) {
    out_ << s.note << "\n";
    if (o.verbose) out_ << "  why: " << gpu::unavailable_reason() << "\n";
  }
  if (o.quiet || !leader_) return;
  task_.print_header(out_);
  if (!cache_line_.empty()) out_ << cache_line_ << "\n";
  if (!o.resume_dir.empty()) {
    out_ << "Resuming from " << o.resume_dir << " at epoch " << start_epoch_ << ", step "
         << resumed_.next_step << " of " << steps_ << "\n";
  }
  out_.flush();  // seen at once, also when the output is a file
}

// Where the run stands: the saved state of an earlier run with the same options.
void RunLoop::Impl::resume() {
  const std::string where = training_state_path(o_.resume_dir);
  const TrainingState state = TrainingState::from_json(read_training_state(o_.resume_dir), where);
  check_resumed_run(state, o_, task_.kind(), ranks_, task_.num_nodes(), steps_, where);
  start_epoch_ = state.epoch;
  resumed_ = state.progress;
  // The saved sums are the ranks' together: one rank carries them on.
  if (!leader_) resumed_.loss_sum = 0, resumed_.correct = 0, resumed_.seen = 0;
  totals_ = state.totals;
  load_training_state(o_.resume_dir, task_.model(), task_.optimizer());
  task_.load_extras(o_.resume_dir, state);
}

// Every rank calls it at the same step (the sums are summed over the ranks); rank 0 writes.
void RunLoop::Impl::save_state(int64_t epoch, const EpochProgress& progress) {
  EpochProgress p = progress;
  if (group_ != nullptr) {
    std::vector<at::Tensor> sums{at::tensor(
        {p.loss_sum, static_cast<double>(p.correct), static_cast<double>(p.seen)}, at::kDouble)};
    group_->all_reduce_sum(sums);
    p.loss_sum = sums[0][0].item<double>();
    p.correct = static_cast<int64_t>(sums[0][1].item<double>());
    p.seen = static_cast<int64_t>(sums[0][2].item<double>());
  }
  if (leader_) write_state(epoch, p);
}

// The leader's writing of the state: the kind's extras, then state.pt naming them.
void RunLoop::Impl::write_state(int64_t epoch, const EpochProgress& progress) {
  TrainingState state = training_state(task_.kind(), o_, {ranks_, task_.num_nodes(), steps_}, epoch,
                                       progress, totals_);
  const auto start = Clock::now();
  task_.save_extras(state_dir_, state);
  save_training_state(state_dir_, task_.model(), task_.optimizer(), state.to_json());
  task_.extras_saved(state_dir_, state);
  last_state_save_s_ = seconds_since(start);
  ++state_saves_;
}

// Sizes the thread team to the cores other processes left free during the last epoch.
void RunLoop::Impl::adapt_threads() {
  const int threads = free_cores_->sample();
  if (threads == num_threads()) return;
  configure_threads(threads);
  if (o_.quiet || !leader_) return;
  out_ << "note: other processes keep " << max_threads_ - threads << " of " << max_threads_
       << " cores busy; training with " << threads << " thread(s) (a fixed thread count stops this)"
       << std::endl;
}

// The epoch's progress as it stands, its sums read off the device.
EpochProgress RunLoop::Impl::progress_now(EpochProgress ep, const StepSums& sums,
                                          const EpochClock& clock) {
  sums.read_into(ep);
  ep.elapsed_s = clock.elapsed_s();
  ep.cpu_s = clock.cpu_s();
  return ep;
}

// The next batch. Preparing it may fail on the data (a feature file that shrank, a read
// error): the steps done so far are saved first, so the run resumes once the input is mended.
BatchTimes RunLoop::Impl::next_or_save(int64_t epoch, const EpochProgress& ep, const StepSums& sums,
                                       const EpochClock& clock) {
  try {
    return task_.next_batch();
  } catch (const Error& e) {
    // Only the leader saves; with several ranks the others learn of the failure when they
    // time out waiting for this one.
    if (!leader_) throw;
    std::ostringstream message;
    message << e.what() << "\n";
    try {
      write_state(epoch, progress_now(ep, sums, clock));
      message << "Training state saved in " << state_dir_ << " (epoch " << epoch << ", step "
              << ep.next_step << " of " << steps_ << "); once the input is mended, resume from it";
    } catch (const std::exception& save_error) {
      message << "The training state could not be saved either: " << save_error.what();
      throw Error(message.str());
    }
    throw StoppedWithState(message.str(), state_dir_);
  }
}

int RunLoop::Impl::train_steps(int64_t epoch, EpochProgress& ep, StepSums& sums,
                               const EpochClock& clock) {
  Progress progress("Epoch " + std::to_string(epoch) + " steps", leader_ ? steps_ : -1);
  const std::vector<at::Tensor>& params = task_.parameters();
  int stopped = 0;
  for (int64_t step = ep.next_step; step < steps_ && stopped == 0; ++step) {
    progress.update(step);
    const auto t = Clock::now();
    const BatchTimes times = next_or_save(epoch, ep, sums, clock);
    ep.wait_s += seconds_since(t);
    ep.sample_s += times.sample_s;
    ep.gather_s += times.gather_s;
    const auto c = Clock::now();
    if (o_.load_only) {
      ep.next_step = step + 1;
      stopped = agreed_stop(group_);
      continue;
    }
    task_.optimizer().zero_grad();
    task_.forward_backward(sums);
    if (group_ != nullptr) {
      // A parameter this rank's batch did not reach (a relation absent from it) takes part
      // with a zero gradient, so that every rank steps every parameter alike.
      std::vector<at::Tensor> grads;
      for (at::Tensor param : params) {
        if (!param.grad().defined()) param.mutable_grad() = at::zeros_like(param);
        grads.push_back(param.grad());
      }
      group_->all_reduce_mean(grads);
    }
    task_.optimizer().step();
    task_.after_step();
    ep.compute_s += seconds_since(c);
    ep.next_step = step + 1;
    const int64_t global_step = (epoch - 1) * steps_ + step + 1;
    stopped = agreed_stop(group_);
    if ((stopped != 0 && o_.save_state_on_stop) ||
        (o_.checkpoint_every > 0 && global_step % o_.checkpoint_every == 0)) {
      save_state(epoch, progress_now(ep, sums, clock));
    }
  }
  progress.finish();
  const auto drain = Clock::now();
  sums.read_into(ep);  // waits for the epoch's last steps on a GPU: part of compute time
  ep.compute_s += seconds_since(drain);
  return stopped;
}

void RunLoop::Impl::train_epoch(int64_t epoch) {
  if (free_cores_ != nullptr) adapt_threads();
  task_.model().train();
  EpochProgress ep = epoch == start_epoch_ ? resumed_ : EpochProgress{};
  const LoaderSettings& s = task_.settings();
  if (s.gpu()) gpu::reset_peak_allocated(s.index());
  const double energy_start = energy_ != nullptr ? energy_->energy_joules() : 0.0;
  const EpochClock clock{Clock::now(), process_cpu_seconds(), ep.elapsed_s, ep.cpu_s};
  for (const NamedStore& n : disk_stores_) n.store->clear_distinct_rows();
  const std::vector<DiskTally> disk_before = disk_tallies(disk_stores_);
  task_.start_epoch(epoch, ep.next_step);
  StepSums sums(ep, s.device);
  const int stopped = train_steps(epoch, ep, sums, clock);
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
  std::snprintf(line, sizeof(line), "Epoch %05lld | Loss %.4f", static_cast<long long>(epoch),
                record["loss"].get<double>());
  std::string text = line;
  if (task_.classifies()) {
    std::snprintf(line, sizeof(line), " | Train Acc %.4f", record["train_acc"].get<double>());
    text += line;
  }
  std::string disk_text;  // the epoch's reads, before evaluation reads the table otherwise
  if (!disk_stores_.empty()) {
    disk_text = write_disk_epoch(disk_stores_,
                                 tallies_since(disk_tallies(disk_stores_), disk_before), record);
  }
  task_.write_epoch(record, disk_text);
  if (o_.evaluate && (epoch % o_.eval_every == 0 || epoch == o_.epochs)) {
    evaluate_epoch(epoch, record, text);
  }
  std::snprintf(line, sizeof(line), " | Time(s) %.4f", epoch_s);
  text += line + disk_text;
  if (!o_.quiet && leader_) out_ << text << std::endl;
  metrics_->write(record);
  // The epoch is complete; a stop now resumes at the next one.
  const int stop_now = agreed_stop(group_);
  // A run that keeps a state leaves its finished state, so that --epochs can extend it.
  const bool keep_state =
      o_.checkpoint_every > 0 || !o_.resume_dir.empty() || !o_.checkpoint_dir.empty();
  if ((stop_now != 0 && o_.save_state_on_stop) || (keep_state && epoch == o_.epochs))
    save_state(epoch + 1, EpochProgress{});
  if (stop_now != 0 && epoch < o_.epochs)
    interrupted(stop_now, "after epoch " + std::to_string(epoch));
}

void RunLoop::Impl::interrupted(int signal, const std::string& where) {
  if (group_ != nullptr) group_->barrier();  // the leader has written the state
  std::ostringstream message;
  message << "Interrupted by " << signal_name(signal) << " " << where;
  if (!totals_.best_dir.empty() && totals_.best_epoch >= 0) {
    message << "; the best-validation model so far (epoch " << totals_.best_epoch << ") is in "
            << totals_.best_dir;
  }
  if (!o_.save_state_on_stop) throw Interrupted(signal, message.str());
  message << ". Training state saved in " << state_dir_;
  throw Interrupted(signal, message.str(), state_dir_);
}

nlohmann::json RunLoop::Impl::epoch_record(int64_t epoch, const EpochProgress& ep, double epoch_s,
                                           double cpu_s, double energy_start, bool timed) {
  at::Tensor sums = at::tensor(
      {ep.loss_sum, static_cast<double>(ep.correct), static_cast<double>(ep.seen)}, at::kDouble);
  if (group_ != nullptr) {
    std::vector<at::Tensor> t{sums};
    group_->all_reduce_sum(t);
  }
  const double seen = std::max(1.0, sums[2].item<double>());
  nlohmann::json record = {{"event", "epoch"},
                           {"epoch", epoch},
                           {"loss", sums[0].item<double>() / seen},
                           {"epoch_time_s", epoch_s},
                           {"sample_s", ep.sample_s},
                           {"gather_s", ep.gather_s},
                           {"compute_s", ep.compute_s},
                           {"wait_s", ep.wait_s},
                           {"cpu_s", cpu_s},
                           {"cpu_util", cpu_s / std::max(epoch_s, 1e-9)},
                           {"threads", num_threads()},
                           {"peak_rss_bytes", peak_rss_bytes()}};
  if (task_.classifies()) record["train_acc"] = sums[1].item<double>() / seen;
  const LoaderSettings& s = task_.settings();
  if (!s.gpu()) return record;
  const int64_t peak = gpu::peak_allocated_bytes(s.index());
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

// Evaluates, and writes the checkpoint when the validation value is the best so far.
void RunLoop::Impl::evaluate_epoch(int64_t epoch, nlohmann::json& record, std::string& text) {
  const auto start = Clock::now();
  // Each rank updates batch norm's running statistics from its own batches; evaluation shares
  // the nodes out between ranks, so they first agree on the mean statistics.
  const std::vector<at::Tensor> buffers = task_.model().buffers();
  if (group_ != nullptr && !buffers.empty()) group_->all_reduce_mean(buffers);
  const Evaluation e = task_.evaluate(group_);
  const double eval_s = seconds_since(start);
  totals_.eval_s += eval_s;
  ++totals_.evaluations;
  record.update(e.record);
  record["eval_time_s"] = eval_s;
  text += e.text;
  if (totals_.best_epoch >= 0 && !(e.value > totals_.best_value)) return;
  totals_.best_epoch = epoch;
  totals_.best_value = e.value;
  totals_.best_metrics = e.metrics;
  if (o_.checkpoint_dir.empty() || !leader_) return;
  const auto saving = Clock::now();
  task_.save_checkpoint(o_.checkpoint_dir, epoch, &e);
  record["checkpoint_s"] = seconds_since(saving);
  totals_.best_dir = o_.checkpoint_dir;
}

RunReport RunLoop::Impl::finish() {
  // Without evaluation the last epoch's model is kept (for embed, or eval to score it).
  std::optional<double> checkpoint_s;
  if (!o_.evaluate && !o_.checkpoint_dir.empty() && leader_) {
    const auto start = Clock::now();
    task_.save_checkpoint(o_.checkpoint_dir, o_.epochs, nullptr);
    checkpoint_s = seconds_since(start);
  }
  RunReport& r = report_;
  r.epochs = o_.epochs;
  r.timed_epochs = o_.epochs - o_.warmup_epochs;
  r.steps_per_epoch = steps_;
  r.totals = totals_;
  const auto epochs = static_cast<double>(r.timed_epochs);
  r.epoch_time_s = totals_.train_s / epochs;
  r.sample_s = totals_.sample_s / epochs;
  r.gather_s = totals_.gather_s / epochs;
  r.compute_s = totals_.compute_s / epochs;
  r.wait_s = totals_.wait_s / epochs;
  r.cpu_s = totals_.cpu_s / epochs;
  r.eval_s =
      totals_.evaluations > 0 ? totals_.eval_s / static_cast<double>(totals_.evaluations) : 0.0;
  std::vector<at::Tensor> digest = task_.parameters();
  for (const at::Tensor& t : task_.digest_extras()) digest.push_back(t);
  r.param_digest = parameter_digest(digest);
  r.gpu_energy_j = r.gpu_power_w = std::numeric_limits<double>::quiet_NaN();
  if (energy_epochs_ > 0) {
    r.gpu_energy_j = energy_j_ / static_cast<double>(energy_epochs_);
    r.gpu_power_w = energy_j_ / std::max(totals_.train_s, 1e-9);
  }
  r.disk_cache_hit_rate = std::numeric_limits<double>::quiet_NaN();
  if (!disk_stores_.empty()) {
    const DiskTally disk = DiskTally::sum(tallies_since(disk_tallies(disk_stores_), disk_start_));
    r.disk_bytes_gathered = disk.bytes_gathered;
    r.disk_bytes_asked = disk.bytes_asked;
    const bool cached =
        std::any_of(disk_stores_.begin(), disk_stores_.end(),
                    [](const NamedStore& n) { return n.store->row_cache() != nullptr; });
    if (cached) r.disk_cache_hit_rate = disk.hit_rate();
    r.feature_cache = cache_line_;
  }
  r.device = report_device(task_.settings());
  nlohmann::json final_record = task_.final_record(r);
  final_record["event"] = "final";
  // What every kind reports, where the kind's record does not already say it.
  const nlohmann::json common = {{"task", run_kind_name(task_.kind())},
                                 {"epochs", r.epochs},
                                 {"steps_per_epoch", r.steps_per_epoch},
                                 {"epoch_time_s", r.epoch_time_s},
                                 {"sample_s", r.sample_s},
                                 {"gather_s", r.gather_s},
                                 {"compute_s", r.compute_s},
                                 {"wait_s", r.wait_s},
                                 {"cpu_s", r.cpu_s},
                                 {"eval_s", r.eval_s},
                                 {"device", r.device},
                                 {"param_digest", r.param_digest}};
  for (const auto& [key, value] : common.items()) {
    if (!final_record.contains(key)) final_record[key] = value;
  }
  final_record["threads"] = num_threads();
  final_record["ranks"] = ranks_;
  final_record["peak_rss_bytes"] = peak_rss_bytes();
  if (checkpoint_s) final_record["checkpoint_s"] = *checkpoint_s;
  if (state_saves_ > 0) {  // the training states this process wrote, the last one's seconds
    final_record["state_saves"] = state_saves_;
    final_record["last_state_save_s"] = last_state_save_s_;
  }
  metrics_->write(final_record);
  if (o_.quiet || !leader_) return r;
  if (o_.evaluate) {
    out_ << task_.best_text(r);
  } else {
    out_ << "Not evaluated";
  }
  char line[256];
  std::snprintf(line, sizeof(line),
                "\nAverage epoch time %.4f s, %.2f ms a step (sampling %.4f, gathering %.4f, "
                "compute %.4f, waiting %.4f; CPU %.2f s); evaluation %.4f s\n",
                r.epoch_time_s,
                1e3 * r.epoch_time_s / static_cast<double>(std::max<int64_t>(1, steps_)),
                r.sample_s, r.gather_s, r.compute_s, r.wait_s, r.cpu_s, r.eval_s);
  out_ << line;
  if (!o_.evaluate && !o_.checkpoint_dir.empty()) {
    out_ << "Checkpoint (epoch " << o_.epochs << ") in " << o_.checkpoint_dir << "\n";
  } else if (!totals_.best_dir.empty()) {
    out_ << "Checkpoint (epoch " << totals_.best_epoch << ") in " << totals_.best_dir << "\n";
  } else if (o_.evaluate && !o_.checkpoint_dir.empty()) {
    out_ << "No checkpoint holds the best epoch " << totals_.best_epoch
         << ": it came before the run saved checkpoints in " << o_.checkpoint_dir << "\n";
  }
  return r;
}

RunLoop::RunLoop(RunTask& task, const TrainOptions& options, std::ostream& out)
    : impl_(std::make_unique<Impl>(task, options, out)) {}
RunLoop::~RunLoop() = default;
int64_t RunLoop::first_epoch() const { return impl_->first_epoch(); }
void RunLoop::train_epoch(int64_t epoch) { impl_->train_epoch(epoch); }
RunReport RunLoop::finish() { return impl_->finish(); }

RunReport run_loop(RunTask& task, const TrainOptions& options, std::ostream& out) {
  RunLoop loop(task, options, out);
  for (int64_t epoch = loop.first_epoch(); epoch <= options.epochs; ++epoch)
    loop.train_epoch(epoch);
  return loop.finish();
}

}  // namespace directgnn
