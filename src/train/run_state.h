// What a training run carries from step to step and epoch to epoch, and saves with its
// training state (train/checkpoint.h) so a stopped run resumes where it was.
#pragma once

#include <ATen/ATen.h>
#include <torch/utils.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
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

// Progress within the epoch being trained.
struct EpochProgress {
  int64_t next_step = 0;
  double loss_sum = 0;
  int64_t correct = 0;
  double sample_s = 0, gather_s = 0, compute_s = 0, wait_s = 0, elapsed_s = 0, cpu_s = 0;

  NLOHMANN_DEFINE_TYPE_INTRUSIVE(EpochProgress, next_step, loss_sum, correct, sample_s, gather_s,
                                 compute_s, wait_s, elapsed_s, cpu_s)
};

// Totals over the epochs finished so far.
struct RunTotals {
  double train_s = 0, eval_s = 0, sample_s = 0, gather_s = 0, compute_s = 0, wait_s = 0, cpu_s = 0;
  int64_t evaluations = 0;
  int64_t best_epoch = -1;
  double best_val_acc = 0, test_acc = 0, test_roc_auc = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> test_class_acc;  // at the best epoch, per class

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
            {"best_val_acc", best_val_acc},
            {"test_acc", test_acc},
            {"test_roc_auc", number_or_null(test_roc_auc)},
            {"test_class_acc", numbers_or_nulls(test_class_acc)}};
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
    t.best_val_acc = j.at("best_val_acc").get<double>();
    t.test_acc = j.at("test_acc").get<double>();
    t.test_roc_auc = j.at("test_roc_auc").is_null() ? std::numeric_limits<double>::quiet_NaN()
                                                    : j.at("test_roc_auc").get<double>();
    // States saved before per-class accuracy was kept have none.
    for (const nlohmann::json& v : j.value("test_class_acc", nlohmann::json::array())) {
      t.test_class_acc.push_back(v.is_null() ? std::numeric_limits<double>::quiet_NaN()
                                             : v.get<double>());
    }
    return t;
  }
};

// An epoch's loss sum (over seeds) and correct predictions, accumulated on the training
// device with the same arithmetic as adding them up on the host (float loss widened to
// double). Reading them every step would wait for a GPU every step; they are read when the
// epoch ends or its state is saved.
class StepSums {
 public:
  StepSums(const EpochProgress& start, const c10::Device& device)
      : loss_(at::full({}, start.loss_sum, at::TensorOptions(device).dtype(at::kDouble))),
        correct_(at::full({}, start.correct, at::TensorOptions(device).dtype(at::kLong))) {}

  void add(const at::Tensor& loss, const at::Tensor& logits, const at::Tensor& labels) {
    torch::NoGradGuard no_grad;
    loss_.add_(loss.detach().to(at::kDouble) * static_cast<double>(labels.numel()));
    correct_.add_(logits.argmax(1).eq(labels).sum());
  }
  void read_into(EpochProgress& ep) const {
    ep.loss_sum = loss_.item<double>();
    ep.correct = correct_.item<int64_t>();
  }

 private:
  at::Tensor loss_, correct_;
};

}  // namespace directgnn
