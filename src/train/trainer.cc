#include "train/trainer.h"

#include <ATen/ATen.h>
#include <torch/optim/adam.h>
#include <torch/utils.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/progress.h"
#include "core/random.h"
#include "core/threads.h"
#include "directgnn/error.h"
#include "feature/feature_store.h"
#include "graph/splits.h"
#include "sampling/neighbor_sampler.h"
#include "train/checkpoint.h"
#include "train/evaluate.h"

namespace directgnn {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// NaN has no JSON form; absent metrics are written as null.
nlohmann::json number_or_null(double value) {
  return std::isnan(value) ? nlohmann::json(nullptr) : nlohmann::json(value);
}

at::Tensor shuffled(const at::Tensor& ids, uint64_t seed) {
  at::Tensor out = ids.clone();
  int64_t* p = out.data_ptr<int64_t>();
  SplitRng rng(seed);
  for (int64_t i = out.numel() - 1; i > 0; --i) std::swap(p[i], p[rng.below(i + 1)]);
  return out;
}

class MetricsLog {
 public:
  explicit MetricsLog(const std::string& path) {
    if (path.empty()) return;
    file_.open(path, std::ios::out | std::ios::trunc);
    DGNN_CHECK(file_.good(), "--metrics ", path, ": cannot open for writing");
    path_ = path;
  }
  void write(const nlohmann::json& record) {
    if (!file_.is_open()) return;
    file_ << record.dump() << '\n';
    file_.flush();
    DGNN_CHECK(file_.good(), "--metrics ", path_, ": write failed (disk full?)");
  }

 private:
  std::ofstream file_;
  std::string path_;
};

}  // namespace

nlohmann::json TrainReport::to_json() const {
  nlohmann::json out = {{"best_epoch", best_epoch},  {"val_acc", best_val_acc},
                        {"test_acc", test_acc},      {"epoch_time_s", epoch_time_s},
                        {"sample_s", sample_s},      {"gather_s", gather_s},
                        {"compute_s", compute_s},    {"eval_time_s", eval_s},
                        {"epochs", epochs},          {"steps_per_epoch", steps_per_epoch},
                        {"split", split_description}};
  if (!std::isnan(test_roc_auc)) out["test_roc_auc"] = test_roc_auc;
  return out;
}

std::string resolved_fanout(const TrainOptions& options) {
  if (!options.fanout.empty()) return options.fanout;
  std::string text;
  for (int64_t l = 0; l < options.model.layers; ++l) text += l == 0 ? "10" : ",10";
  return text;
}

TrainReport train(const Dataset& ds, const TrainOptions& options, std::ostream& out) {
  DGNN_CHECK(options.epochs >= 1, "--epochs must be at least 1, got ", options.epochs);
  DGNN_CHECK(options.batch_size >= 1, "--batch-size must be positive, got ", options.batch_size);
  DGNN_CHECK(options.eval_every >= 1, "--eval-every must be positive, got ", options.eval_every);
  DGNN_CHECK(options.lr > 0, "--lr must be positive, got ", options.lr);
  DGNN_CHECK(options.weight_decay >= 0, "--weight-decay must not be negative, got ",
             options.weight_decay);
  ModelConfig config = options.model;
  config.in_dim = ds.feat_dim();
  config.num_classes = ds.num_classes;
  config.validate();
  const std::string fanout_text = resolved_fanout(options);
  const NeighborSampler sampler(ds.graph, parse_fanouts(fanout_text, config.layers));
  const FeatureStore store(ds.features, parse_placement(options.features));
  const ChosenSplit chosen = choose_split(ds, options.split, options.seed);
  const Split& split = chosen.split;

  torch::manual_seed(options.seed);
  GnnModel model(config);
  torch::optim::Adam optimizer(
      model.parameters(), torch::optim::AdamOptions(options.lr).weight_decay(options.weight_decay));
  MetricsLog metrics(options.metrics_path);

  TrainReport report;
  report.split_description = chosen.description;
  const int64_t num_train = split.train.numel();
  report.steps_per_epoch = (num_train + options.batch_size - 1) / options.batch_size;
  if (!options.quiet) {
    out << "Dataset " << ds.name << ": " << ds.num_nodes() << " nodes, " << ds.graph.num_edges()
        << " edges, " << ds.feat_dim() << " features, " << ds.num_classes << " classes\n"
        << "Split: " << chosen.description << "\n"
        << "Model: " << config.arch << ", " << config.layers << " layers, hidden " << config.hidden
        << ", fan-out " << fanout_text << ", batch " << options.batch_size << ", features "
        << placement_name(store.placement()) << ", " << num_threads() << " thread(s)\n";
  }
  double total_train_s = 0, total_eval_s = 0;
  int64_t evaluations = 0;
  for (int64_t epoch = 1; epoch <= options.epochs; ++epoch) {
    model.train();
    const auto epoch_start = Clock::now();
    const at::Tensor order = shuffled(split.train, mix64(options.seed, 0xe90c, epoch));
    double loss_sum = 0, sample_s = 0, gather_s = 0, compute_s = 0;
    int64_t correct = 0;
    Progress progress("Epoch " + std::to_string(epoch) + " steps", report.steps_per_epoch);
    for (int64_t step = 0; step < report.steps_per_epoch; ++step) {
      progress.update(step);
      const int64_t lo = step * options.batch_size;
      const at::Tensor seeds = order.narrow(0, lo, std::min(options.batch_size, num_train - lo));
      auto t = Clock::now();
      const MiniBatch batch = sampler.sample(seeds, mix64(options.seed, epoch, step));
      sample_s += seconds_since(t);
      t = Clock::now();
      const at::Tensor x = store.gather(batch.input_nodes);
      gather_s += seconds_since(t);
      t = Clock::now();
      const at::Tensor labels = ds.labels.index_select(0, seeds);
      optimizer.zero_grad();
      const at::Tensor logits = model.forward(batch.blocks, x);
      const at::Tensor loss = at::cross_entropy_loss(logits, labels);
      loss.backward();
      optimizer.step();
      loss_sum += loss.item<double>() * static_cast<double>(seeds.numel());
      correct += logits.argmax(1).eq(labels).sum().item<int64_t>();
      compute_s += seconds_since(t);
    }
    progress.finish();
    const double epoch_s = seconds_since(epoch_start);
    total_train_s += epoch_s;
    report.sample_s += sample_s;
    report.gather_s += gather_s;
    report.compute_s += compute_s;
    const double loss = loss_sum / static_cast<double>(num_train);
    const double train_acc = static_cast<double>(correct) / static_cast<double>(num_train);
    nlohmann::json record = {
        {"event", "epoch"},       {"epoch", epoch},          {"loss", loss},
        {"train_acc", train_acc}, {"epoch_time_s", epoch_s}, {"sample_s", sample_s},
        {"gather_s", gather_s},   {"compute_s", compute_s}};
    char line[256];
    std::snprintf(line, sizeof(line), "Epoch %05lld | Loss %.4f | Train Acc %.4f",
                  static_cast<long long>(epoch), loss, train_acc);
    std::string text = line;
    if (epoch % options.eval_every == 0 || epoch == options.epochs) {
      const auto eval_start = Clock::now();
      const EvalResult r = evaluate(model, ds, split);
      const double eval_s = seconds_since(eval_start);
      total_eval_s += eval_s;
      ++evaluations;
      record["val_acc"] = r.val_acc;
      record["test_acc"] = r.test_acc;
      record["eval_time_s"] = eval_s;
      if (ds.num_classes == 2) {
        record["val_roc_auc"] = number_or_null(r.val_roc_auc);
        record["test_roc_auc"] = number_or_null(r.test_roc_auc);
      }
      std::snprintf(line, sizeof(line), " | Val Acc %.4f | Test Acc %.4f", r.val_acc, r.test_acc);
      text += line;
      if (report.best_epoch < 0 || r.val_acc > report.best_val_acc) {
        report.best_epoch = epoch;
        report.best_val_acc = r.val_acc;
        report.test_acc = r.test_acc;
        report.test_roc_auc = r.test_roc_auc;
        if (!options.checkpoint_dir.empty()) {
          const nlohmann::json meta = {
              {"model", config.to_json()},
              {"epoch", epoch},
              {"val_acc", r.val_acc},
              {"test_acc", r.test_acc},
              {"test_roc_auc", number_or_null(r.test_roc_auc)},
              {"seed", options.seed},
              {"split", options.split},
              {"split_description", chosen.description},
              {"dataset",
               {{"name", ds.name}, {"source", ds.source}, {"num_nodes", ds.num_nodes()}}},
              {"fanout", fanout_text},
              {"lr", options.lr},
              {"weight_decay", options.weight_decay},
              {"batch_size", options.batch_size}};
          save_checkpoint(options.checkpoint_dir, model, optimizer, meta);
        }
      }
    }
    std::snprintf(line, sizeof(line), " | Time(s) %.4f", epoch_s);
    text += line;
    if (!options.quiet) out << text << std::endl;
    metrics.write(record);
  }
  const auto epochs = static_cast<double>(options.epochs);
  report.epochs = options.epochs;
  report.epoch_time_s = total_train_s / epochs;
  report.sample_s /= epochs;
  report.gather_s /= epochs;
  report.compute_s /= epochs;
  report.eval_s = evaluations > 0 ? total_eval_s / static_cast<double>(evaluations) : 0.0;
  nlohmann::json final_record = report.to_json();
  final_record["event"] = "final";
  final_record["threads"] = num_threads();
  metrics.write(final_record);
  if (!options.quiet) {
    char line[256];
    std::snprintf(line, sizeof(line), "Best validation epoch %lld: Val Acc %.4f | Test Acc %.4f",
                  static_cast<long long>(report.best_epoch), report.best_val_acc, report.test_acc);
    out << line;
    if (ds.num_classes == 2) {
      std::snprintf(line, sizeof(line), " | Test ROC-AUC %.4f", report.test_roc_auc);
      out << line;
    }
    std::snprintf(line, sizeof(line),
                  "\nAverage epoch time %.4f s (sampling %.4f, gathering %.4f, compute %.4f); "
                  "evaluation %.4f s\n",
                  report.epoch_time_s, report.sample_s, report.gather_s, report.compute_s,
                  report.eval_s);
    out << line;
    if (!options.checkpoint_dir.empty()) {
      out << "Checkpoint (epoch " << report.best_epoch << ") in " << options.checkpoint_dir << "\n";
    }
  }
  return report;
}

}  // namespace directgnn
