#include "train/trainer.h"

#include <ATen/ATen.h>
#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>
#include <torch/utils.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <memory>
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
  nlohmann::json out = {{"best_epoch", best_epoch},
                        {"val_acc", best_val_acc},
                        {"test_acc", test_acc},
                        {"epoch_time_s", epoch_time_s},
                        {"sample_s", sample_s},
                        {"gather_s", gather_s},
                        {"compute_s", compute_s},
                        {"eval_time_s", eval_s},
                        {"epochs", epochs},
                        {"steps_per_epoch", steps_per_epoch},
                        {"seeds_per_epoch", seeds_per_epoch},
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

  ProcessGroup* group = options.group;
  const int rank = group != nullptr ? group->rank() : 0;
  const int ranks = group != nullptr ? group->size() : 1;
  const bool leader = rank == 0;
  torch::manual_seed(options.seed);
  GnnModel model(config);
  std::vector<at::Tensor> params = model.parameters();
  if (group != nullptr) {
    torch::NoGradGuard no_grad;
    group->broadcast(params, 0);  // every rank starts from rank 0's initialisation
  }
  DGNN_CHECK(options.optimizer == "adam" || options.optimizer == "sgd", "--optimizer '",
             options.optimizer, "': use adam or sgd");
  std::unique_ptr<torch::optim::Optimizer> optimizer_owner;
  if (options.optimizer == "adam") {
    optimizer_owner = std::make_unique<torch::optim::Adam>(
        params, torch::optim::AdamOptions(options.lr).weight_decay(options.weight_decay));
  } else {
    optimizer_owner = std::make_unique<torch::optim::SGD>(
        params, torch::optim::SGDOptions(options.lr).weight_decay(options.weight_decay));
  }
  torch::optim::Optimizer& optimizer = *optimizer_owner;
  MetricsLog metrics(leader ? options.metrics_path : std::string());

  TrainReport report;
  report.split_description = chosen.description;
  // Each rank trains on its own equal shard of every epoch's shuffled training nodes.
  const int64_t num_train = split.train.numel() / ranks;
  DGNN_CHECK(num_train > 0, "the split has ", split.train.numel(),
             " training nodes, fewer than the ", ranks, " ranks");
  report.steps_per_epoch = (num_train + options.batch_size - 1) / options.batch_size;
  report.seeds_per_epoch = num_train * ranks;
  if (!options.quiet && leader) {
    out << "Dataset " << ds.name << ": " << ds.num_nodes() << " nodes, " << ds.graph.num_edges()
        << " edges, " << ds.feat_dim() << " features, " << ds.num_classes << " classes\n"
        << "Split: " << chosen.description << "\n"
        << "Model: " << config.arch << ", " << config.layers << " layers, hidden " << config.hidden
        << ", fan-out " << fanout_text << ", batch " << options.batch_size << ", features "
        << placement_name(store.placement()) << ", " << num_threads() << " thread(s)"
        << (ranks > 1 ? " per rank, " + std::to_string(ranks) + " ranks" : std::string()) << "\n";
  }
  double total_train_s = 0, total_eval_s = 0;
  int64_t evaluations = 0;
  for (int64_t epoch = 1; epoch <= options.epochs; ++epoch) {
    model.train();
    const auto epoch_start = Clock::now();
    const at::Tensor order = shuffled(split.train, mix64(options.seed, 0xe90c, epoch))
                                 .narrow(0, rank * num_train, num_train);
    double loss_sum = 0, sample_s = 0, gather_s = 0, compute_s = 0;
    int64_t correct = 0;
    Progress progress("Epoch " + std::to_string(epoch) + " steps",
                      leader ? report.steps_per_epoch : -1);
    for (int64_t step = 0; step < report.steps_per_epoch; ++step) {
      progress.update(step);
      const int64_t lo = step * options.batch_size;
      const at::Tensor seeds = order.narrow(0, lo, std::min(options.batch_size, num_train - lo));
      auto t = Clock::now();
      const uint64_t stream = mix64(options.seed, epoch, step);
      const MiniBatch batch = sampler.sample(seeds, ranks > 1 ? mix64(stream, rank) : stream);
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
      if (group != nullptr) {
        std::vector<at::Tensor> grads;
        for (const at::Tensor& p : params) grads.push_back(p.grad());
        group->all_reduce_mean(grads);
      }
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
    at::Tensor totals = at::tensor({loss_sum, static_cast<double>(correct)}, at::kDouble);
    if (group != nullptr) {
      std::vector<at::Tensor> t{totals};
      group->all_reduce_sum(t);
    }
    const auto seen = static_cast<double>(report.seeds_per_epoch);
    const double loss = totals[0].item<double>() / seen;
    const double train_acc = totals[1].item<double>() / seen;
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
      const EvalResult r = evaluate(model, ds, split, group);
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
        if (!options.checkpoint_dir.empty() && leader) {
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
              {"optimizer", options.optimizer},
              {"lr", options.lr},
              {"weight_decay", options.weight_decay},
              {"batch_size", options.batch_size}};
          save_checkpoint(options.checkpoint_dir, model, optimizer, meta);
        }
      }
    }
    std::snprintf(line, sizeof(line), " | Time(s) %.4f", epoch_s);
    text += line;
    if (!options.quiet && leader) out << text << std::endl;
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
  final_record["ranks"] = ranks;
  metrics.write(final_record);
  if (!options.quiet && leader) {
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
