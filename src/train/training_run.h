// What every kind of run shares beyond the loop (train/run_loop.h): the metrics log, the
// agreed stop, the resumed run's checks, the training state's making, the optimiser, the
// options' checks. Internal to train/.
#pragma once

#include <torch/optim/optimizer.h>
#include <torch/utils.h>

#include <cstdint>
#include <fstream>
#include <functional>
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

// The random seed of each step of a node-seeded epoch: mix64(seed, epoch, step), mixed with the
// rank when there are several (a single process's streams do not depend on ranks).
std::function<uint64_t(int64_t)> node_step_streams(uint64_t seed, int64_t epoch, int rank,
                                                   int ranks);

// Copies `from`'s parameters and buffers (batch norm's running statistics) into `to`, a
// module of the same structure on any device.
void copy_parameters(torch::nn::Module& from, torch::nn::Module& to);

// The checks of the options every kind of run shares (epochs, cadences, rates, warm-up);
// throws InvalidArgument naming the option.
void check_run_options(const TrainOptions& options);

// The model a run trains on `device`, and on a GPU a CPU copy that evaluation runs: the copy
// is made before seeding, so the random stream matches a CPU run's; every device starts from
// the same initialisation, made on the CPU, and every rank of `group` from rank 0's.
template <typename Model>
struct RunModel {
  std::unique_ptr<Model> model, cpu_copy;
  std::vector<at::Tensor> params;
};
template <typename Model, typename Make>
RunModel<Model> make_run_model(const Make& make, const c10::Device& device, uint64_t seed,
                               ProcessGroup* group) {
  RunModel<Model> m;
  if (device.is_cuda()) m.cpu_copy = make();
  torch::manual_seed(seed);
  m.model = make();
  if (device.is_cuda()) m.model->to(device);
  m.params = m.model->parameters();
  if (group != nullptr) {
    torch::NoGradGuard no_grad;
    group->broadcast(m.params, 0);
  }
  return m;
}

// A homogeneous run's checkpoint description: its kind, options, model, seed and split, the
// epoch, and the dataset it was trained on (the kind adds its metrics).
nlohmann::json checkpoint_description(RunKind kind, const TrainOptions& o,
                                      const nlohmann::json& model, int64_t epoch, const Dataset& ds,
                                      const std::string& split_description);

// The run's optimiser over `params`: Adam (the fused CPU/GPU step) or plain SGD.
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const std::vector<at::Tensor>& params,
                                                        const TrainOptions& options);

}  // namespace directgnn
