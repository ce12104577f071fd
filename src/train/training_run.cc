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

std::function<uint64_t(int64_t)> node_step_streams(uint64_t seed, int64_t epoch, int rank,
                                                   int ranks) {
  return [seed, epoch, rank, ranks](int64_t step) {
    const uint64_t stream = mix64(seed, epoch, step);
    return ranks > 1 ? mix64(stream, static_cast<uint64_t>(rank)) : stream;
  };
}

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

nlohmann::json checkpoint_description(RunKind kind, const TrainOptions& o,
                                      const nlohmann::json& model, int64_t epoch, const Dataset& ds,
                                      const std::string& split_description) {
  return {{"task", run_kind_name(kind)},
          {"options", options_json(o, kind)},
          {"model", model},
          {"seed", o.seed},
          {"split", o.split},
          {"epoch", epoch},
          {"split_description", split_description},
          {"dataset", {{"name", ds.name}, {"source", ds.source}, {"num_nodes", ds.num_nodes()}}}};
}

void check_run_options(const TrainOptions& o) {
  DGNN_CHECK_ARG(o.epochs >= 1, "epochs", "must be at least 1, got ", o.epochs);
  DGNN_CHECK_ARG(o.eval_every >= 1, "eval_every", "must be positive, got ", o.eval_every);
  DGNN_CHECK_ARG(o.lr > 0, "lr", "must be positive, got ", o.lr);
  DGNN_CHECK_ARG(o.weight_decay >= 0, "weight_decay", "must not be negative, got ", o.weight_decay);
  DGNN_CHECK_ARG(!o.load_only || !o.evaluate, "load_only",
                 "runs no model, so there is nothing to evaluate; turn evaluation off");
  DGNN_CHECK_ARG(o.warmup_epochs >= 0 && o.warmup_epochs < o.epochs, "warmup_epochs",
                 "must be in 0..epochs-1 (", o.epochs - 1, "), got ", o.warmup_epochs);
  DGNN_CHECK_ARG(o.checkpoint_every >= 0, "checkpoint_every", "must not be negative, got ",
                 o.checkpoint_every);
}

}  // namespace directgnn
