// What a training run carries from step to step and epoch to epoch, and saves with its
// training state (train/checkpoint.h) so a stopped run resumes where it was.
#pragma once

#include <ATen/ATen.h>
#include <torch/utils.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace directgnn {

// NaN has no JSON form; absent metrics are written as null.
inline nlohmann::json number_or_null(double value) {
  return std::isnan(value) ? nlohmann::json(nullptr) : nlohmann::json(value);
}
inline nlohmann::json numbers_or_nulls(const std::vector<double>& values) {
  nlohmann::json out = nlohmann::json::array();
  for (const double v : values) out.push_back(number_or_null(v));
  return out;
}
inline double metric_or_nan(const nlohmann::json& value) {
  return value.is_null() ? std::numeric_limits<double>::quiet_NaN() : value.get<double>();
}

// Progress within the epoch being trained, every kind alike (a kind leaves what it does not
// count at 0).
struct EpochProgress {
  int64_t next_step = 0;
  double loss_sum = 0;  // node tasks: summed over seeds; link tasks: over steps
  int64_t correct = 0;  // node tasks: correct predictions
  int64_t seen = 0;     // seeds the loss and the correct predictions were counted over
  double sample_s = 0, gather_s = 0, compute_s = 0, wait_s = 0, elapsed_s = 0, cpu_s = 0;

  NLOHMANN_DEFINE_TYPE_INTRUSIVE(EpochProgress, next_step, loss_sum, correct, seen, sample_s,
                                 gather_s, compute_s, wait_s, elapsed_s, cpu_s)
};

// Totals over the epochs finished so far, and the best evaluation among them.
struct RunTotals {
  double train_s = 0, eval_s = 0, sample_s = 0, gather_s = 0, compute_s = 0, wait_s = 0, cpu_s = 0;
  int64_t evaluations = 0;
  int64_t best_epoch = -1;
  // The validation metric that picks the best epoch, and the evaluation of that epoch as the
  // kind reports it ({"val": {...}, "test": {...}}).
  double best_value = std::numeric_limits<double>::quiet_NaN();
  nlohmann::json best_metrics = nlohmann::json::object();
  std::string best_dir;  // where the best epoch's model was saved ("": it was not)

  nlohmann::json to_json() const {
    return {{"train_s", train_s},
            {"eval_s", eval_s},
            {"sample_s", sample_s},
            {"gather_s", gather_s},
            {"compute_s", compute_s},
            {"wait_s", wait_s},
            {"cpu_s", cpu_s},
            {"evaluations", evaluations},
            {"best_epoch", best_epoch},
            {"best_value", number_or_null(best_value)},
            {"best_metrics", best_metrics},
            {"best_dir", best_dir}};
  }
  static RunTotals from_json(const nlohmann::json& j) {
    RunTotals t;
    t.train_s = j.at("train_s").get<double>();
    t.eval_s = j.at("eval_s").get<double>();
    t.sample_s = j.at("sample_s").get<double>();
    t.gather_s = j.at("gather_s").get<double>();
    t.compute_s = j.at("compute_s").get<double>();
    t.wait_s = j.at("wait_s").get<double>();
    t.cpu_s = j.at("cpu_s").get<double>();
    t.evaluations = j.at("evaluations").get<int64_t>();
    t.best_epoch = j.at("best_epoch").get<int64_t>();
    t.best_value = j.at("best_value").is_null() ? std::numeric_limits<double>::quiet_NaN()
                                                : j.at("best_value").get<double>();
    t.best_metrics = j.at("best_metrics");
    t.best_dir = j.at("best_dir").get<std::string>();
    return t;
  }
};

// The format of a training state's description; states of another version are refused with
// the version that wrote them (TrainingState::from_json).
inline constexpr int kTrainingStateVersion = 2;

// What state.pt describes (train/checkpoint.h holds the tensors: model, optimiser, generator),
// the same for every kind of run.
struct TrainingState {
  std::string task;             // run_kind_name (train/run_options.h)
  nlohmann::json options;       // options_json of the run's kind
  nlohmann::json run;           // the front end's record of the run (dataset path ...)
  int ranks = 1;                // data-parallel ranks it was trained with
  int64_t num_nodes = 0;        // the dataset's (every type's, on a heterogeneous graph)
  int64_t steps_per_epoch = 0;  // this rank's
  int64_t epoch = 1;            // the epoch to continue (epochs + 1: the run is finished)
  EpochProgress progress;       // within `epoch`
  RunTotals totals;             // over the epochs before it
  nlohmann::json extras = nlohmann::json::object();  // the kind's own (embedding tables ...)

  nlohmann::json to_json() const;
  // Throws naming `where` when `json` is not a training state, comes from another version
  // (saying which and what to do), or misses a field.
  static TrainingState from_json(const nlohmann::json& json, const std::string& where);
};

// An epoch's loss and correct predictions, summed on the training device with the same
// arithmetic as adding them up on the host (a float loss widened to double), and the seeds
// they were counted over. Reading them every step would wait for a GPU every step; they are
// read when the epoch ends or its state is saved.
class StepSums {
 public:
  StepSums(const EpochProgress& start, const c10::Device& device)
      : loss_(at::full({}, start.loss_sum, at::TensorOptions(device).dtype(at::kDouble))),
        correct_(at::full({}, start.correct, at::TensorOptions(device).dtype(at::kLong))),
        seen_(start.seen) {}

  // A classification's step: its mean loss over `labels`, and its correct predictions.
  void add(const at::Tensor& loss, const at::Tensor& logits, const at::Tensor& labels) {
    torch::NoGradGuard no_grad;
    loss_.add_(loss.detach().to(at::kDouble) * static_cast<double>(labels.numel()));
    correct_.add_(logits.argmax(1).eq(labels).sum());
    seen_ += labels.numel();
  }
  // A step whose loss is the mean over its pairs (link prediction): it counts once.
  void add_mean(const at::Tensor& loss) {
    torch::NoGradGuard no_grad;
    loss_.add_(loss.detach().to(at::kDouble));
    seen_ += 1;
  }
  void read_into(EpochProgress& ep) const {
    ep.loss_sum = loss_.item<double>();
    ep.correct = correct_.item<int64_t>();
    ep.seen = seen_;
  }

 private:
  at::Tensor loss_, correct_;
  int64_t seen_ = 0;
};

}  // namespace directgnn
