#include "train/hetero_link_trainer.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/grad_mode.h>
#include <torch/optim/optimizer.h>
#include <torch/utils.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <utility>

#include "core/clock.h"
#include "core/random.h"
#include "core/signals.h"
#include "core/threads.h"
#include "directgnn/error.h"
#include "loader/hetero_link_loader.h"
#include "train/checkpoint.h"
#include "train/hetero_state.h"
#include "train/run_options.h"
#include "train/training_run.h"

namespace directgnn {
namespace {

// One epoch's loader timings (the sums that shape results live in EpochProgress).
struct EpochTimes {
  double sample_s = 0, gather_s = 0, wait_s = 0;
};

// Decoder scores of pairs (src[i], dst[i]): rows of h_src and h_dst, `chunk` pairs at a time.
at::Tensor score_pairs(LinkDecoder& decoder, const at::Tensor& h_src, const at::Tensor& h_dst,
                       const at::Tensor& src, const at::Tensor& dst, int64_t chunk = 65536) {
  at::Tensor out = at::empty({src.numel()}, at::kFloat);
  for (int64_t begin = 0; begin < src.numel(); begin += chunk) {
    const int64_t len = std::min(chunk, src.numel() - begin);
    const at::Tensor s = src.narrow(0, begin, len).to(h_src.device());
    const at::Tensor d = dst.narrow(0, begin, len).to(h_dst.device());
    out.narrow(0, begin, len)
        .copy_(decoder.forward(h_src.index_select(0, s), h_dst.index_select(0, d)).cpu());
  }
  return out;
}

LinkMetrics score_split(LinkDecoder& decoder, const at::Tensor& h_src, const at::Tensor& h_dst,
                        const at::Tensor& pos, const at::Tensor& neg, LinkNegatives layout,
                        int64_t hits_k) {
  const at::Tensor p = score_pairs(decoder, h_src, h_dst, pos.select(1, 0), pos.select(1, 1));
  at::Tensor n;
  if (layout == LinkNegatives::kShared) {
    n = score_pairs(decoder, h_src, h_dst, neg.select(1, 0), neg.select(1, 1));
  } else {
    const at::Tensor src = pos.select(1, 0).view({-1, 1}).expand_as(neg).reshape(-1);
    n = score_pairs(decoder, h_src, h_dst, src, neg.reshape(-1)).view(neg.sizes());
  }
  return link_metrics(p, n, layout, hits_k);
}

at::Tensor shuffled_rows(const at::Tensor& rows, uint64_t seed) {
  at::Tensor order = at::arange(rows.size(0), at::kLong);
  seeded_shuffle(order.data_ptr<int64_t>(), order.numel(), seed);
  return rows.index_select(0, order);
}

class HeteroLinkRun {
 public:
  HeteroLinkRun(const HeteroDataset& ds, const TrainOptions& o, std::ostream& log);
  HeteroLinkReport run();

 private:
  void step(HeteroLinkMinibatch& m);
  EpochTimes train_epoch(int64_t epoch);
  LinkEvalResult evaluate();
  void log_epoch(int64_t epoch, const EpochTimes& t, double seconds, const LinkEvalResult* r);
  void save_best(int64_t epoch, const LinkEvalResult& r);
  void save_state();
  [[noreturn]] void stopped(int signal);
  void finish(double train_s, double eval_s, int64_t evals, const EpochTimes& t, int64_t epochs);

  const TrainOptions& o_;
  const LinkOptions& link_;
  std::ostream& log_;
  HeteroLinkTarget target_;
  HeteroLinkSplit split_;
  LoaderSettings settings_;
  std::shared_ptr<HeteroLinkModel> model_, cpu_model_;  // GPU runs evaluate a CPU copy
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  std::unique_ptr<HeteroLinkLoader> loader_;
  std::vector<std::unique_ptr<EmbeddingTable>> tables_;
  std::vector<std::string> type_names_;
  std::unique_ptr<MetricsLog> metrics_;
  int64_t epoch_ = 1;       // the epoch being trained
  EpochProgress progress_;  // within it
  RunTotals totals_;        // the best evaluation so far
  HeteroLinkReport report_;
};

HeteroLinkRun::HeteroLinkRun(const HeteroDataset& ds, const TrainOptions& o, std::ostream& log)
    : o_(o),
      link_(o.link),
      log_(log),
      target_(find_link_target(ds, o.link.relation, ds.source)),
      settings_(resolve_hetero_loader(o.loader)) {
  LinkSplitOptions split = link_.split;
  split.seed = o.seed;
  split_ = random_hetero_link_split(ds, target_, split);
  DGNN_CHECK_ARG(!o.evaluate || (split_.split.val.size(0) > 0 && split_.split.test.size(0) > 0),
                 "link_split",
                 "leaves no validation or test edges to evaluate; give both a fraction (or train "
                 "without evaluation)");
  HeteroModelConfig config = hetero_link_encoder(ds, target_, hetero_model_config(ds, o));
  tables_ = make_embedding_tables(ds, o.hetero.embeddings, o.seed, config.in_dims);
  torch::manual_seed(o.seed);
  model_ = std::make_shared<HeteroLinkModel>(config, link_.decoder, link_.decoder_layers);
  if (settings_.gpu()) {
    cpu_model_ = std::make_shared<HeteroLinkModel>(config, link_.decoder, link_.decoder_layers);
    model_->to(settings_.device);
  }
  optimizer_ = make_optimizer(model_->parameters(), o);
  loader_ = std::make_unique<HeteroLinkLoader>(split_.graph, target_, hetero_fanouts(ds, o),
                                               link_.sampling, settings_);
  const int64_t all = loader_->steps(split_.split.train.size(0));
  report_.steps_per_epoch = link_.steps_per_epoch > 0 ? std::min(all, link_.steps_per_epoch) : all;
  report_.train_edges = split_.split.train.size(0);
  report_.val_edges = split_.split.val.size(0);
  report_.test_edges = split_.split.test.size(0);
  report_.primary_metric = primary_link_metric(split_.split.negatives);
  for (const NodeType& t : ds.node_types) type_names_.push_back(t.name);
  if (!o.resume_dir.empty()) {
    const TrainingState state =
        load_hetero_state(o, RunKind::kHeteroLink, ds.num_nodes(), report_.steps_per_epoch, *model_,
                          *optimizer_, tables_, type_names_);
    epoch_ = state.epoch;
    progress_ = state.progress;
    totals_ = state.totals;
  }
  if (!o.metrics_path.empty()) {
    metrics_ = std::make_unique<MetricsLog>(o.metrics_path, !o.resume_dir.empty());
  }
}

void HeteroLinkRun::step(HeteroLinkMinibatch& m) {
  HeteroLinkBatch& b = m.batch;
  const c10::Device device = settings_.device;
  hetero_batch_to_device(b.sample.blocks, m.x, device);
  read_embedding_rows(tables_, b.sample.input_nodes, device, m.x);
  optimizer_->zero_grad();
  const std::vector<at::Tensor> h = model_->encoder().forward_outputs(b.sample.blocks, m.x);
  const at::Tensor& h_src = h[target_.src_type];
  const at::Tensor& h_dst = h[target_.dst_type];
  at::Tensor src, dst, labels;
  if (link_.sampling.mode == NegativeMode::kBinary) {
    src = b.edge_label_index[0];
    dst = b.edge_label_index[1];
    labels = b.edge_label;
  } else {
    const int64_t k = b.dst_neg_index.size(1);
    src = at::cat({b.src_index, b.src_index.repeat_interleave(k)});
    dst = at::cat({b.dst_pos_index, b.dst_neg_index.reshape(-1)});
    labels = at::cat({at::ones({b.src_index.numel()}), at::zeros({b.dst_neg_index.numel()})});
  }
  const at::Tensor scores = model_->decoder().forward(h_src.index_select(0, src.to(device)),
                                                      h_dst.index_select(0, dst.to(device)));
  const at::Tensor loss = at::binary_cross_entropy_with_logits(scores, labels.to(device));
  loss.backward();
  optimizer_->step();
  update_embedding_rows(tables_, b.sample.input_nodes, m.x);
  progress_.loss_sum += loss.item<double>();
  ++progress_.next_step;
}

EpochTimes HeteroLinkRun::train_epoch(int64_t epoch) {
  model_->train();
  const at::Tensor order = shuffled_rows(split_.split.train, mix64(o_.seed, 0x5eed, epoch));
  const uint64_t seed = o_.seed;
  HeteroLinkLoader::Epoch batches = loader_->epoch(
      order, [seed, epoch](int64_t step) { return mix64(seed, epoch, step); }, progress_.next_step,
      report_.steps_per_epoch);
  EpochTimes times;
  while (!batches.done()) {
    const auto t0 = Clock::now();
    HeteroLinkMinibatch b = batches.next();
    times.wait_s += seconds_since(t0);
    times.sample_s += b.sample_s;
    times.gather_s += b.gather_s;
    step(b);
    const int64_t global = (epoch - 1) * report_.steps_per_epoch + progress_.next_step;
    if (o_.checkpoint_every > 0 && global % o_.checkpoint_every == 0) save_state();
    if (const int signal = stop_signal()) stopped(signal);
  }
  return times;
}

LinkEvalResult HeteroLinkRun::evaluate() {
  if (cpu_model_) copy_parameters(*model_, *cpu_model_);
  return evaluate_hetero_links(cpu_model_ ? *cpu_model_ : *model_, split_.graph, target_,
                               hetero_inputs(split_.graph, tables_), split_.split, link_.hits_k);
}

void HeteroLinkRun::log_epoch(int64_t epoch, const EpochTimes& t, double seconds,
                              const LinkEvalResult* r) {
  const double loss =
      progress_.loss_sum / static_cast<double>(std::max<int64_t>(1, progress_.next_step));
  const LinkNegatives layout = split_.split.negatives;
  if (!o_.quiet) {
    char scores[96] = "(not evaluated)", line[256];
    if (r != nullptr) {
      std::snprintf(scores, sizeof scores, "val %s %.4f  test %.4f", report_.primary_metric.c_str(),
                    primary_value(r->val, layout), primary_value(r->test, layout));
    }
    std::snprintf(line, sizeof line,
                  "epoch %3lld  loss %.4f  %s  %.2f s (sample %.2f, gather %.2f, waited %.2f)",
                  static_cast<long long>(epoch), loss, scores, seconds, t.sample_s, t.gather_s,
                  t.wait_s);
    log_ << line << std::endl;
  }
  if (!metrics_) return;
  nlohmann::json record = {{"event", "epoch"},       {"epoch", epoch},
                           {"loss", loss},           {"epoch_time_s", seconds},
                           {"sample_s", t.sample_s}, {"gather_s", t.gather_s},
                           {"wait_s", t.wait_s}};
  if (r != nullptr) {
    record["val"] = metrics_json(r->val);
    record["test"] = metrics_json(r->test);
  }
  metrics_->write(record);
}

void HeteroLinkRun::save_best(int64_t epoch, const LinkEvalResult& r) {
  nlohmann::json meta = {{"task", run_kind_name(RunKind::kHeteroLink)},
                         {"options", options_json(o_, RunKind::kHeteroLink)},
                         {"model", model_->encoder().config().to_json()},
                         {"epoch", epoch},
                         {"seed", o_.seed},
                         {"val", metrics_json(r.val)},
                         {"test", metrics_json(r.test)},
                         {"run", o_.run_info}};
  nlohmann::json tables = nlohmann::json::object();
  for (size_t t = 0; t < tables_.size(); ++t) {
    if (!tables_[t]) continue;
    const std::string& name = split_.graph.node_types[t].name;
    std::filesystem::create_directories(o_.checkpoint_dir + "/embeddings");
    tables_[t]->save(o_.checkpoint_dir + "/embeddings", name);
    tables[name] = {{"dim", tables_[t]->dim()}, {"file", "embeddings/" + name + ".npy"}};
  }
  if (!tables.empty()) meta["embeddings"] = tables;
  // The tables first: checkpoint.pt, written last, names them. A GPU model is saved from its
  // CPU copy, brought up to date here (a run without evaluation has not copied it).
  if (cpu_model_) copy_parameters(*model_, *cpu_model_);
  save_checkpoint(o_.checkpoint_dir, cpu_model_ ? *cpu_model_ : *model_, *optimizer_, meta);
  totals_.best_dir = o_.checkpoint_dir;
}

void HeteroLinkRun::save_state() {
  save_hetero_state(hetero_state_dir(o_), *model_, *optimizer_, tables_, type_names_,
                    training_state(RunKind::kHeteroLink, o_,
                                   {1, split_.graph.num_nodes(), report_.steps_per_epoch}, epoch_,
                                   progress_, totals_));
}

void HeteroLinkRun::stopped(int signal) {
  save_state();
  throw Interrupted(signal,
                    std::string("Interrupted by ") + signal_name(signal) + " at epoch " +
                        std::to_string(epoch_) + ", step " + std::to_string(progress_.next_step) +
                        ". Training state saved in " + hetero_state_dir(o_),
                    hetero_state_dir(o_));
}

HeteroLinkReport HeteroLinkRun::run() {
  double train_s = 0, eval_s = 0;
  int64_t evals = 0, epochs_run = 0;
  EpochTimes totals;
  for (; epoch_ <= o_.epochs; ++epoch_) {
    const int64_t epoch = epoch_;
    const auto t0 = Clock::now();
    const EpochTimes t = train_epoch(epoch);
    const double seconds = seconds_since(t0);
    train_s += seconds;
    totals.sample_s += t.sample_s;
    totals.gather_s += t.gather_s;
    totals.wait_s += t.wait_s;
    ++epochs_run;
    const bool evaluated = o_.evaluate && (epoch % o_.eval_every == 0 || epoch == o_.epochs);
    LinkEvalResult r;
    if (evaluated) {
      const auto e0 = Clock::now();
      r = evaluate();
      eval_s += seconds_since(e0);
      ++evals;
      const double value = primary_value(r.val, split_.split.negatives);
      if (totals_.best_epoch < 0 || value > totals_.best_value) {
        totals_.best_epoch = epoch;
        totals_.best_value = value;
        totals_.best_metrics = {{"val", metrics_json(r.val)}, {"test", metrics_json(r.test)}};
        if (!o_.checkpoint_dir.empty()) save_best(epoch, r);
      }
    }
    log_epoch(epoch, t, seconds, evaluated ? &r : nullptr);
    progress_ = EpochProgress{};
  }
  // Without evaluation the last epoch's model is kept, for eval or later use.
  if (!o_.evaluate && !o_.checkpoint_dir.empty()) save_best(o_.epochs, LinkEvalResult());
  // A run that keeps a state dir leaves the finished state there, so --epochs can extend it.
  if (!o_.checkpoint_dir.empty() || !o_.resume_dir.empty()) save_state();
  finish(train_s, eval_s, evals, totals, epochs_run);
  return report_;
}

void HeteroLinkRun::finish(double train_s, double eval_s, int64_t evals, const EpochTimes& t,
                           int64_t epochs_run) {
  const auto epochs = static_cast<double>(std::max<int64_t>(1, epochs_run));
  report_.epochs = o_.epochs;
  report_.epoch_time_s = train_s / epochs;
  report_.sample_s = t.sample_s / epochs;
  report_.gather_s = t.gather_s / epochs;
  report_.wait_s = t.wait_s / epochs;
  report_.eval_s = evals > 0 ? eval_s / static_cast<double>(evals) : 0;
  report_.best_epoch = totals_.best_epoch;
  if (totals_.best_epoch >= 0) {
    report_.best_val = metrics_from_json(totals_.best_metrics.at("val"));
    report_.test = metrics_from_json(totals_.best_metrics.at("test"));
  }
  std::vector<at::Tensor> all = model_->parameters();
  for (const auto& table : tables_) {
    if (table) all.push_back(table->weight());
  }
  report_.param_digest = parameter_digest(all);
  if (!metrics_) return;
  metrics_->write({{"event", "final"},
                   {"task", "hetero_link"},
                   {"relation", split_.graph.relations[target_.relation].key()},
                   {"model", hetero_model_kind_name(model_->encoder().config().kind)},
                   {"best_epoch", report_.best_epoch},
                   {"primary_metric", report_.primary_metric},
                   {"val", metrics_json(report_.best_val)},
                   {"test", metrics_json(report_.test)},
                   {"epoch_time_s", report_.epoch_time_s},
                   {"sample_s", report_.sample_s},
                   {"gather_s", report_.gather_s},
                   {"wait_s", report_.wait_s},
                   {"eval_s", report_.eval_s},
                   {"steps_per_epoch", report_.steps_per_epoch},
                   {"threads", num_threads()},
                   {"param_digest", report_.param_digest}});
}

}  // namespace

HeteroModelConfig hetero_link_encoder(const HeteroDataset& ds, const HeteroLinkTarget& target,
                                      const HeteroModelConfig& model) {
  HeteroModelConfig c = HeteroModelConfig::for_dataset(ds);
  c.kind = model.kind;
  c.hidden = model.hidden;
  c.layers = model.layers;
  c.dropout = model.dropout;
  c.num_bases = model.num_bases;
  c.target_type = target.dst_type;
  c.output_types = {target.src_type};
  if (target.dst_type != target.src_type) c.output_types.push_back(target.dst_type);
  c.num_classes = model.hidden;  // the embeddings' width
  return c;
}

LinkEvalResult evaluate_hetero_links(HeteroLinkModel& model, const HeteroDataset& graph,
                                     const HeteroLinkTarget& target,
                                     const std::vector<at::Tensor>& inputs, const LinkSplit& split,
                                     int64_t hits_k) {
  at::NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  const std::vector<at::Tensor> h = model.encoder().infer_outputs(graph, inputs);
  LinkEvalResult r;
  const at::Tensor& h_src = h[target.src_type];
  const at::Tensor& h_dst = h[target.dst_type];
  r.val =
      score_split(model.decoder(), h_src, h_dst, split.val, split.val_neg, split.negatives, hits_k);
  r.test = score_split(model.decoder(), h_src, h_dst, split.test, split.test_neg, split.negatives,
                       hits_k);
  if (was_training) model.train();
  return r;
}

HeteroLinkReport train_hetero_links(const HeteroDataset& dataset, const TrainOptions& o,
                                    std::ostream& log) {
  DGNN_CHECK_ARG(o.epochs >= 1, "epochs", "must be at least 1, got ", o.epochs);
  DGNN_CHECK_ARG(o.eval_every >= 1, "eval_every", "must be at least 1, got ", o.eval_every);
  DGNN_CHECK_ARG(o.checkpoint_every >= 0, "checkpoint_every", "must not be negative, got ",
                 o.checkpoint_every);
  DGNN_CHECK_ARG(!o.link.use_val_edges, "use_val_edges",
                 "is not offered for heterogeneous link prediction: its test split is scored "
                 "over the training edges");
  HeteroLinkRun run(dataset, o, log);
  return run.run();
}

}  // namespace directgnn
