// The one training loop every kind of run goes through (train/run_options.h names the kinds):
// epochs, the progress line, the stop the ranks agree on (SIGINT/SIGTERM), periodic and final
// training states, the state saved when an input read fails, the gradients' all-reduce, the
// feature cache's fill, the evaluation cadence, the best epoch and its checkpoint, the metrics
// log, the time split, warm-up epochs, GPU energy and peak memory, disk counters and adaptive
// threads are all here, written once. What differs by kind is a RunTask: its batches and
// steps, its evaluation, its checkpoint and the words of its lines. Internal to train/.
#pragma once

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "feature/feature_store.h"
#include "loader/options.h"
#include "train/run_options.h"
#include "train/run_state.h"
#include "train/trainer.h"

namespace directgnn {

// The loader's share of one step.
struct BatchTimes {
  double sample_s = 0, gather_s = 0;
};

// An evaluation as the kind makes it: its metrics ({"val": {...}, "test": {...}}, kept for the
// best epoch), the fields it adds to the epoch's metrics record, the validation value that
// picks the best epoch (higher is better), and the epoch line's words (" | Val Acc 0.7800").
struct Evaluation {
  nlohmann::json metrics = nlohmann::json::object();
  nlohmann::json record = nlohmann::json::object();
  double value = 0;
  std::string text;
};

struct RunReport;

// A feature table a loader reads, by name: a heterogeneous graph's node type ("" for the one
// table of a homogeneous graph).
struct NamedStore {
  std::string name;
  const FeatureStore* store = nullptr;
};

// What one kind of run does; the loop does the rest.
class RunTask {
 public:
  virtual ~RunTask() = default;
  virtual RunKind kind() const = 0;

  // The model being trained (on the run's device), its parameters in a fixed order (the
  // gradients' all-reduce, the digest) and its optimiser.
  virtual torch::nn::Module& model() = 0;
  virtual const std::vector<at::Tensor>& parameters() const = 0;
  virtual torch::optim::Optimizer& optimizer() = 0;
  // Extra tensors the digest covers (learnable tables), none by default.
  virtual std::vector<at::Tensor> digest_extras() const { return {}; }

  virtual const LoaderSettings& settings() const = 0;
  // The feature table the loader reads (its disk counters, its cache), or nullptr.
  virtual const FeatureStore* store() const = 0;
  // Every table the loader reads (a heterogeneous graph's, per node type): store()'s by default.
  virtual std::vector<NamedStore> stores() const {
    if (store() == nullptr) return {};
    return {NamedStore{"", store()}};
  }
  // Fills the disk tables' RAM cache before the first epoch; returns the header's line ("" when
  // there is nothing to fill).
  virtual std::string fill_cache(bool verbose) {
    (void)verbose;
    return "";
  }
  // This rank's steps an epoch, and the dataset's node count (a resumed run's check).
  virtual int64_t steps_per_epoch() const = 0;
  virtual int64_t num_nodes() const = 0;

  // Starts `epoch`'s batches at `first_step` (this rank's shard of the epoch's order).
  virtual void start_epoch(int64_t epoch, int64_t first_step) = 0;
  // Takes the epoch's next batch, waiting for it. Throws Error when the input fails (the loop
  // saves the state first).
  virtual BatchTimes next_batch() = 0;
  // Forward and backward on that batch; adds the loss and, for a classification, the correct
  // predictions to `sums` on the device (no host sync). The loop then averages the gradients
  // over the ranks and steps the optimiser.
  virtual void forward_backward(StepSums& sums) = 0;
  // After the optimiser's step: a learnable table's sparse update, then the batch is released
  // (held on, it would stay in memory beside the next one while that is prepared).
  virtual void after_step() = 0;
  // Whether the epoch line and record show a training accuracy.
  virtual bool classifies() const = 0;

  // Evaluates the current model (every rank takes part).
  virtual Evaluation evaluate(ProcessGroup* group) = 0;
  // The checkpoint of `epoch`'s model in `dir`, with its evaluation (nullptr: not evaluated).
  virtual void save_checkpoint(const std::string& dir, int64_t epoch,
                               const Evaluation* evaluation) = 0;
  // The kind's own part of the training state (learnable tables: written under `dir`, named
  // in `state.extras`), and its restoring.
  virtual void save_extras(const std::string& dir, TrainingState& state) { (void)dir, (void)state; }
  // After state.pt has been written (older copies of the extras may go).
  virtual void extras_saved(const std::string& dir, const TrainingState& state) {
    (void)dir, (void)state;
  }
  virtual void load_extras(const std::string& dir, const TrainingState& state) {
    (void)dir, (void)state;
  }

  // The header's lines; the best epoch's words in the summary; the kind's fields of the final
  // metrics record (the loop adds the times, the digest and what every kind reports).
  // Adds the task's own figures of the epoch just trained to its record and line (before
  // evaluation); none by default.
  virtual void write_epoch(nlohmann::json& record, std::string& text) { (void)record, (void)text; }
  virtual void print_header(std::ostream& out) const = 0;
  virtual std::string best_text(const RunReport& report) const = 0;
  virtual nlohmann::json final_record(const RunReport& report) const = 0;
};

// What the loop reports of a run, whatever its kind (each kind's report is made from it).
struct RunReport {
  int64_t epochs = 0, timed_epochs = 0, steps_per_epoch = 0;
  RunTotals totals;  // the best epoch with its metrics
  double epoch_time_s = 0, sample_s = 0, gather_s = 0, compute_s = 0, wait_s = 0, cpu_s = 0;
  double eval_s = 0;
  int64_t gpu_peak_bytes = 0;
  double gpu_energy_j = 0, gpu_power_w = 0;  // NaN where NVML cannot tell
  int64_t disk_bytes_gathered = 0, disk_bytes_asked = 0;
  double disk_cache_hit_rate = 0;  // NaN without a cache
  std::string feature_cache, device, mode, param_digest;
};

// Trains `task` with `options` (epochs, evaluation cadence, checkpoints, resume, ranks ...).
// Throws Interrupted after saving the state when a stop signal arrives, StoppedWithState when
// an input read fails.
RunReport run_loop(RunTask& task, const TrainOptions& options, std::ostream& out);

// The same an epoch at a time (tests change the input between epochs): run_loop is
// `for (e = first_epoch(); e <= epochs; ++e) train_epoch(e); return finish();`.
class RunLoop {
 public:
  RunLoop(RunTask& task, const TrainOptions& options, std::ostream& out);
  ~RunLoop();
  int64_t first_epoch() const;
  void train_epoch(int64_t epoch);
  RunReport finish();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// The kinds on the loop, for callers that drive it an epoch at a time.
std::unique_ptr<RunTask> make_node_task(const Dataset& dataset, const TrainOptions& options);

}  // namespace directgnn
