#include "train/hetero_trainer.h"

#include <ATen/ATen.h>
#include <torch/optim/optimizer.h>
#include <torch/utils.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <sstream>
#include <utility>

#include "core/random.h"
#include "core/signals.h"
#include "core/threads.h"
#include "directgnn/error.h"
#include "train/checkpoint.h"
#include "train/metrics.h"
#include "train/trainer.h"
#include "train/training_run.h"

namespace directgnn {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// One epoch's sums.
struct EpochSums {
  double loss = 0, correct = 0, seen = 0, sample_s = 0, gather_s = 0, wait_s = 0;
};

class HeteroRun {
 public:
  HeteroRun(const HeteroDataset& ds, const HeteroTrainOptions& o, std::ostream& log)
      : ds_(ds), o_(o), log_(log), split_(pick_split()) {
    HeteroModelConfig config = HeteroModelConfig::for_dataset(ds);
    config.kind = o.model.kind;
    config.hidden = o.model.hidden;
    config.layers = o.model.layers;
    config.dropout = o.model.dropout;
    config.num_bases = o.model.num_bases;
    torch::manual_seed(o_.seed);
    model_ = std::make_shared<HeteroModel>(config);
    TrainOptions adam;
    adam.lr = o_.lr;
    adam.weight_decay = o_.weight_decay;
    optimizer_ = make_optimizer(model_->parameters(), adam);
    loader_ = std::make_unique<HeteroLoader>(ds, o_.sampler, o_.loader);
    for (const NodeType& t : ds.node_types) features_.push_back(t.features);
    if (!o_.metrics_path.empty()) metrics_ = std::make_unique<MetricsLog>(o_.metrics_path, false);
  }

  HeteroTrainReport run();

 private:
  Split pick_split() const {
    DGNN_CHECK(ds_.target_type >= 0, ds_.source,
               ": has no labelled node type; node classification needs labels and a split");
    DGNN_CHECK(!ds_.splits.empty(), ds_.source, ": stores no split of node type '",
               ds_.target().name, "'; give train, validation and test ids");
    DGNN_CHECK(o_.split >= 0 && o_.split < static_cast<int64_t>(ds_.splits.size()), ds_.source,
               ": has ", ds_.splits.size(), " split(s); split ", o_.split, " does not exist");
    return ds_.splits[static_cast<size_t>(o_.split)];
  }
  EpochSums train_epoch(int64_t epoch);
  std::pair<double, double> evaluate();
  void log_epoch(int64_t epoch, const EpochSums& s, double seconds, double val, double test,
                 bool evaluated);
  [[noreturn]] void stopped(int signal, int64_t epoch, int64_t steps) const;

  const HeteroDataset& ds_;
  const HeteroTrainOptions& o_;
  std::ostream& log_;
  Split split_;
  std::shared_ptr<HeteroModel> model_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  std::unique_ptr<HeteroLoader> loader_;
  std::vector<at::Tensor> features_;
  std::unique_ptr<MetricsLog> metrics_;
  HeteroTrainReport report_;
};

EpochSums HeteroRun::train_epoch(int64_t epoch) {
  model_->train();
  at::Tensor order = split_.train.clone();
  seeded_shuffle(order.data_ptr<int64_t>(), order.numel(), mix64(o_.seed, 0x5eed, epoch));
  const uint64_t seed = o_.seed;
  HeteroLoader::Epoch batches =
      loader_->epoch(order, [seed, epoch](int64_t step) { return mix64(seed, epoch, step); });
  EpochSums s;
  int64_t step = 0;
  while (!batches.done()) {
    const auto t0 = std::chrono::steady_clock::now();
    HeteroBatch b = batches.next();
    s.wait_s += seconds_since(t0);
    s.sample_s += b.sample_s;
    s.gather_s += b.gather_s;
    optimizer_->zero_grad();
    const at::Tensor logits = model_->forward(b.sample.blocks, b.x);
    const at::Tensor loss = at::cross_entropy_loss(logits, b.labels);
    loss.backward();
    optimizer_->step();
    const double n = static_cast<double>(b.labels.numel());
    s.loss += loss.item<double>() * n;
    s.correct += logits.argmax(1).eq(b.labels).sum().item<double>();
    s.seen += n;
    ++step;
    if (const int signal = stop_signal()) stopped(signal, epoch, step);
  }
  report_.steps_per_epoch = step;
  return s;
}

std::pair<double, double> HeteroRun::evaluate() {
  const at::Tensor logits = model_->infer(ds_, features_);
  return {accuracy(logits, ds_.labels, split_.val), accuracy(logits, ds_.labels, split_.test)};
}

void HeteroRun::log_epoch(int64_t epoch, const EpochSums& s, double seconds, double val,
                          double test, bool evaluated) {
  const double loss = s.loss / std::max(1.0, s.seen), train = s.correct / std::max(1.0, s.seen);
  if (!o_.quiet) {
    char scores[64] = "(not evaluated)", line[256];
    if (evaluated) std::snprintf(scores, sizeof scores, "val %.4f  test %.4f", val, test);
    std::snprintf(line, sizeof line,
                  "epoch %3lld  loss %.4f  train %.4f  %s  %.2f s (sample %.2f, gather %.2f, "
                  "waited %.2f)",
                  static_cast<long long>(epoch), loss, train, scores, seconds, s.sample_s,
                  s.gather_s, s.wait_s);
    log_ << line << std::endl;
  }
  if (metrics_) {
    nlohmann::json record = {
        {"event", "epoch"},       {"epoch", epoch},          {"loss", loss},
        {"train_acc", train},     {"epoch_time_s", seconds}, {"sample_s", s.sample_s},
        {"gather_s", s.gather_s}, {"wait_s", s.wait_s}};
    if (evaluated) {
      record["val_acc"] = val;
      record["test_acc"] = test;
    }
    metrics_->write(record);
  }
}

void HeteroRun::stopped(int signal, int64_t epoch, int64_t steps) const {
  std::ostringstream message;
  message << "Interrupted by " << signal_name(signal) << " at epoch " << epoch << ", step " << steps
          << "; ";
  if (!o_.checkpoint_dir.empty() && report_.best_epoch >= 0) {
    message << "the best-validation model so far (epoch " << report_.best_epoch << ") is in "
            << o_.checkpoint_dir;
  } else {
    message << "no model was saved";
  }
  throw Interrupted(signal, message.str());
}

HeteroTrainReport HeteroRun::run() {
  double train_s = 0, eval_s = 0, sample_s = 0, gather_s = 0, wait_s = 0;
  int64_t evals = 0;
  for (int64_t epoch = 1; epoch <= o_.epochs; ++epoch) {
    const auto t0 = std::chrono::steady_clock::now();
    const EpochSums s = train_epoch(epoch);
    const double seconds = seconds_since(t0);
    train_s += seconds;
    sample_s += s.sample_s;
    gather_s += s.gather_s;
    wait_s += s.wait_s;
    const bool evaluated = o_.evaluate && (epoch % o_.eval_every == 0 || epoch == o_.epochs);
    double val = 0, test = 0;
    if (evaluated) {
      const auto e0 = std::chrono::steady_clock::now();
      std::tie(val, test) = evaluate();
      eval_s += seconds_since(e0);
      ++evals;
      if (report_.best_epoch < 0 || val > report_.best_val_acc) {
        report_.best_epoch = epoch;
        report_.best_val_acc = val;
        report_.test_acc = test;
        if (!o_.checkpoint_dir.empty()) {
          save_checkpoint(o_.checkpoint_dir, *model_, *optimizer_,
                          {{"task", "hetero"},
                           {"model", model_->config().to_json()},
                           {"epoch", epoch},
                           {"seed", o_.seed},
                           {"split", o_.split},
                           {"val_acc", val},
                           {"test_acc", test}});
        }
      }
    }
    log_epoch(epoch, s, seconds, val, test, evaluated);
  }
  const double epochs = static_cast<double>(std::max<int64_t>(1, o_.epochs));
  report_.epochs = o_.epochs;
  report_.epoch_time_s = train_s / epochs;
  report_.sample_s = sample_s / epochs;
  report_.gather_s = gather_s / epochs;
  report_.wait_s = wait_s / epochs;
  report_.eval_s = evals > 0 ? eval_s / static_cast<double>(evals) : 0;
  report_.param_digest = parameter_digest(model_->parameters());
  if (metrics_) {
    metrics_->write({{"event", "final"},
                     {"task", "hetero"},
                     {"model", hetero_model_kind_name(model_->config().kind)},
                     {"best_epoch", report_.best_epoch},
                     {"best_val_acc", report_.best_val_acc},
                     {"test_acc", report_.test_acc},
                     {"epoch_time_s", report_.epoch_time_s},
                     {"sample_s", report_.sample_s},
                     {"gather_s", report_.gather_s},
                     {"wait_s", report_.wait_s},
                     {"eval_s", report_.eval_s},
                     {"steps_per_epoch", report_.steps_per_epoch},
                     {"threads", num_threads()},
                     {"param_digest", report_.param_digest}});
  }
  return report_;
}

}  // namespace

HeteroTrainReport train_hetero(const HeteroDataset& dataset, const HeteroTrainOptions& options,
                               std::ostream& log) {
  DGNN_CHECK_ARG(options.epochs >= 1, "epochs", "must be at least 1, got ", options.epochs);
  DGNN_CHECK_ARG(options.eval_every >= 1, "eval_every", "must be at least 1, got ",
                 options.eval_every);
  HeteroRun run(dataset, options, log);
  return run.run();
}

}  // namespace directgnn
