// One training run as train() (train/trainer.h) drives it: the minibatch loader, the model and
// its optimiser, the split, the checkpoints and the metrics, composed once; then one call per
// epoch. Internal to train/.
#pragma once

#include <torch/optim/optimizer.h>

#include <cstdint>
#include <fstream>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "core/nvml.h"
#include "graph/splits.h"
#include "loader/feature_cache.h"
#include "loader/loader.h"
#include "train/run_options.h"
#include "train/run_state.h"
#include "train/trainer.h"

namespace directgnn {

class FreeCores;
class Progress;

// The --metrics file: one JSON object per line, flushed after each; nothing without a path.
// Throws naming the file when it cannot be opened or written (a full disk).
class MetricsLog {
 public:
  MetricsLog(const std::string& path, bool append);
  void write(const nlohmann::json& record);

 private:
  std::ofstream file_;
  std::string path_;
};

// The signal that asked any rank of `group` (or this process) to stop, the same on every rank
// (SIGTERM on the ranks that were not signalled), or 0: ranks must stop at the same step.
int agreed_stop(ProcessGroup* group);
// The checks a resumed run of `kind` makes of its saved `state` (`where` names it): the same
// kind, the options it was saved with (those a resumed run may change aside), the same ranks,
// the same dataset (node count, steps an epoch), and epochs left to train. Throws naming what
// differs.
void check_resumed_run(const TrainingState& state, const TrainOptions& o, RunKind kind, int ranks,
                       int64_t num_nodes, int64_t steps_per_epoch, const std::string& where);
// The training state of a `kind` run of `o` (its ranks, the dataset's node count and this
// rank's steps an epoch) standing at `epoch`, with its progress within it and its totals.
struct StateShape {
  int ranks = 1;
  int64_t num_nodes = 0, steps_per_epoch = 0;
};
TrainingState training_state(RunKind kind, const TrainOptions& o, const StateShape& shape,
                             int64_t epoch, const EpochProgress& progress, const RunTotals& totals);
// "SIGINT", "SIGTERM" or "a signal".
const char* signal_name(int signal);

// Copies `from`'s parameters and buffers (batch norm's running statistics) into `to`, a
// module of the same structure on any device.
void copy_parameters(torch::nn::Module& from, torch::nn::Module& to);

// The run's optimiser over `params`: Adam (the fused CPU/GPU step) or plain SGD.
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const std::vector<at::Tensor>& params,
                                                        const TrainOptions& options);

class TrainingRun {
 public:
  TrainingRun(const Dataset& dataset, const TrainOptions& options, std::ostream& out);
  ~TrainingRun();

  // 1, or the epoch a resumed run continues.
  int64_t first_epoch() const { return start_epoch_; }
  // Trains, evaluates and records one epoch. Throws Interrupted (core/signals.h) after saving
  // the training state when a stop signal arrives.
  void train_epoch(int64_t epoch);
  // The report over all epochs; writes the final metrics record and prints the summary.
  TrainReport finish();

 private:
  // The clock of the epoch being trained, which may have started before a resume.
  struct EpochClock {
    std::chrono::steady_clock::time_point start;
    double cpu_start = 0, elapsed_before = 0, cpu_before = 0;
    double elapsed_s() const;
    double cpu_s() const;
  };

  void init_model();
  void adapt_threads();
  void resume();
  void print_header() const;
  void save_state(int64_t epoch, const EpochProgress& progress);
  // Steps of `epoch` from ep.next_step; returns the stop signal that ended them early, or 0.
  int train_steps(int64_t epoch, MinibatchLoader::Epoch& batches, EpochProgress& ep,
                  const EpochClock& clock);
  Minibatch next_or_save(MinibatchLoader::Epoch& batches, int64_t epoch, EpochProgress& ep,
                         const StepSums& sums, const EpochClock& clock);
  void one_step(const Minibatch& batch, EpochProgress& ep, StepSums& sums);
  // `timed`: the epoch counts towards the report's means (it is past the warm-up epochs).
  nlohmann::json epoch_record(int64_t epoch, const EpochProgress& ep, double epoch_s, double cpu_s,
                              double energy_start, bool timed);
  void evaluate_epoch(int64_t epoch, nlohmann::json& record, std::string& line);
  [[noreturn]] void interrupted(int signal, const std::string& where);

  const Dataset& ds_;
  const TrainOptions& o_;
  std::ostream& out_;
  ModelConfig config_;
  std::unique_ptr<MinibatchLoader> loader_;
  const LoaderSettings& run_;  // the loader's, resolved
  std::unique_ptr<GpuEnergyMeter> energy_;
  ChosenSplit chosen_;
  ProcessGroup* group_;
  int rank_, ranks_;
  bool leader_;
  int max_threads_;  // the team on an idle machine
  std::unique_ptr<FreeCores> free_cores_;
  std::unique_ptr<GnnModel> cpu_model_;  // GPU runs evaluate with a CPU copy
  std::unique_ptr<GnnModel> model_;
  std::vector<at::Tensor> params_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  TrainReport report_;
  int64_t num_train_ = 0, steps_ = 0;
  int64_t start_epoch_ = 1;
  EpochProgress resumed_;
  RunTotals totals_;
  std::string state_dir_;
  std::unique_ptr<MetricsLog> metrics_;
  std::string cache_line_;  // the header's line on the feature cache (--feature-cache-gib)
  DiskTally disk_start_;    // --features disk: the counters when training began
  double energy_j_ = 0;
  int64_t energy_epochs_ = 0;
};

}  // namespace directgnn
