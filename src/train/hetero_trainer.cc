#include "train/hetero_trainer.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <optional>
#include <sstream>

#include "core/random.h"
#include "core/threads.h"
#include "directgnn/error.h"
#include "loader/hetero_loader.h"
#include "loader/loader.h"
#include "train/checkpoint.h"
#include "train/hetero_sharding.h"
#include "train/metrics.h"
#include "train/run_options.h"

namespace directgnn {
namespace {

Split pick_split(const HeteroDataset& ds, int64_t split) {
  const NodeType& target = ds.target();  // throws naming the fix when no type is labelled
  DGNN_CHECK(!ds.splits.empty(), ds.source, ": stores no split of node type '", target.name,
             "'; give train, validation and test ids");
  DGNN_CHECK(split >= 0 && split < static_cast<int64_t>(ds.splits.size()), ds.source, ": has ",
             ds.splits.size(), " split(s); split ", split, " does not exist");
  return ds.splits[static_cast<size_t>(split)];
}

at::Tensor shuffled_ids(const at::Tensor& ids, uint64_t seed) {
  at::Tensor out = ids.clone();
  seeded_shuffle(out.data_ptr<int64_t>(), out.numel(), seed);
  return out;
}

class HeteroNodeTask final : public HeteroTask<HeteroModel> {
 public:
  HeteroNodeTask(const HeteroDataset& ds, const TrainOptions& o, HeteroModelConfig config)
      : HeteroTask(ds, o, config),
        ds_(ds),
        split_(pick_split(ds, o.split)),
        config_(std::move(config)),
        loader_(ds, hetero_fanouts(ds, o), hetero_run_settings(o, ds, HeteroSampling{true})) {
    prepare_tables(ds, loader_.settings().device);
    init_model([this] { return std::make_unique<HeteroModel>(config_); },
               loader_.settings().device);
    exchanges_ = shard_hetero_tables(ds, o, loader_.mutable_stores(), cache_text_);
    if (!exchanges_.empty() && o.seed_assignment == SeedAssignment::kPart) {
      const PartShare share =
          hetero_part_share(ds, ds.target_type, split_.train, rank_, ranks_,
                            "training nodes of type '" + ds.target().name + "'");
      part_seeds_ = split_.train.to(at::kLong).index_select(0, share.mine);
      num_train_ = share.count;
    } else {
      // Each rank trains on its own equal shard of every epoch's shuffled training nodes.
      num_train_ = split_.train.numel() / ranks_;
      DGNN_CHECK(num_train_ > 0, "the split has ", split_.train.numel(),
                 " training nodes, fewer than the ", ranks_, " ranks");
    }
    steps_ = loader_.steps(num_train_);
  }

  RunKind kind() const override { return RunKind::kHetero; }
  const LoaderSettings& settings() const override { return loader_.settings(); }
  std::vector<NamedStore> stores() const override { return named_stores(loader_.stores()); }

  // Ranks by one pass over the training nodes in an order of its own, as node training does.
  std::string fill_cache(bool verbose) override {
    at::Tensor order = split_.train.clone();
    seeded_shuffle(order.data_ptr<int64_t>(), order.numel(), mix64(o_.seed, 0xcac4e));
    return fill_hetero_feature_cache(loader_.mutable_stores(), ds_,
                                     loader_.presample(order, o_.seed), o_.loader.cache, verbose);
  }
  int64_t steps_per_epoch() const override { return steps_; }
  int64_t num_nodes() const override { return ds_.num_nodes(); }
  bool classifies() const override { return true; }

  // Part seeds: the epoch's shuffle of this part's seeds, cut to the count every rank has;
  // otherwise this rank's shard of the global shuffle.
  void start_epoch(int64_t epoch, int64_t first_step) override {
    const bool part = part_seeds_.defined();
    const at::Tensor order =
        shuffled_ids(part ? part_seeds_ : split_.train, mix64(o_.seed, 0x5eed, epoch));
    clear_hetero_exchange_counts(exchanges_);
    batches_.emplace(loader_.epoch(order.narrow(0, part ? 0 : rank_ * num_train_, num_train_),
                                   node_step_streams(o_.seed, epoch, rank_, ranks_), first_step));
  }

  // A sharded table's exchanges this epoch, as this rank saw them.
  void write_epoch(nlohmann::json& record, std::string& text) override {
    if (!exchanges_.empty()) write_hetero_exchange_counts(exchanges_, ds_, record, text);
  }

  BatchTimes next_batch() override {
    batch_ = batches_->next();
    return {batch_.sample_s, batch_.gather_s};
  }

  void forward_backward(StepSums& sums) override {
    HeteroBatch& b = batch_;
    const c10::Device device = loader_.settings().device;
    hetero_batch_to_device(b.sample.blocks, b.x, device);
    b.labels = b.labels.to(device);
    tables_.read_rows(b.sample.input_nodes, device, b.x);
    const at::Tensor logits = model_->forward(b.sample.blocks, b.x);
    const at::Tensor loss = at::cross_entropy_loss(logits, b.labels);
    loss.backward();
    sums.add(loss, logits, b.labels);
  }

  void after_step() override {
    tables_.update(batch_.sample.input_nodes, batch_.x, o_.group);
    batch_ = HeteroBatch();
  }

  Evaluation evaluate(ProcessGroup*) override {
    double val = 0, test = 0;
    // A sharded table is read through its exchanges: every rank samples every evaluation
    // batch, so their collectives pair up (and every rank gets the same result).
    if (o_.eval_sampled || !exchanges_.empty()) {
      val = sampled_accuracy(split_.val, 0x7a1);
      test = sampled_accuracy(split_.test, 0x7e57);
    } else {
      const at::Tensor logits = host_model().infer(ds_, tables_.inputs(ds_));
      val = accuracy(logits, ds_.labels, split_.val);
      test = accuracy(logits, ds_.labels, split_.test);
    }
    Evaluation e;
    e.value = val;
    e.metrics = {{"val", {{"acc", val}}}, {"test", {{"acc", test}}}};
    e.record = {{"val_acc", val}, {"test_acc", test}};
    char line[96];
    std::snprintf(line, sizeof(line), " | Val Acc %.4f | Test Acc %.4f", val, test);
    e.text = line;
    return e;
  }

  // Accuracy on `nodes` from their sampled neighbourhoods, batch by batch through the
  // training loader (its fan-outs, placements and device), in eval mode without gradients;
  // batch i samples with mix64(seed, purpose, i), the same every evaluation.
  double sampled_accuracy(const at::Tensor& nodes, uint64_t purpose) {
    if (nodes.numel() == 0) return 0;
    at::NoGradGuard no_grad;
    model_->eval();
    const c10::Device device = loader_.settings().device;
    const uint64_t seed = o_.seed;
    HeteroLoader::Epoch batches = loader_.epoch(nodes, [seed, purpose](int64_t i) {
      return mix64(seed, purpose, static_cast<uint64_t>(i));
    });
    at::Tensor correct = at::zeros({}, at::TensorOptions(at::kLong).device(device));
    while (!batches.done()) {
      HeteroBatch b = batches.next();
      hetero_batch_to_device(b.sample.blocks, b.x, device);
      tables_.read_rows(b.sample.input_nodes, device, b.x);
      const at::Tensor logits = model_->forward(b.sample.blocks, b.x);
      correct += (logits.argmax(1) == b.labels.to(device)).sum();
    }
    model_->train();
    return static_cast<double>(correct.item<int64_t>()) / static_cast<double>(nodes.numel());
  }

  void save_checkpoint(const std::string& dir, int64_t epoch, const Evaluation* e) override {
    nlohmann::json meta = {{"split", o_.split}};
    if (e != nullptr) meta.update(e->record);
    write_checkpoint(dir, epoch, config_.to_json(), ds_, std::move(meta));
  }

  void print_header(std::ostream& out) const override {
    out << "Dataset " << ds_.name << ": " << hetero_type_summary(ds_) << "; "
        << ds_.relations.size() << " relations, " << ds_.num_edges() << " edges; target "
        << ds_.target().name << ", " << ds_.num_classes << " classes\n"
        << "Split: " << split_.train.numel() << " training, " << split_.val.numel()
        << " validation, " << split_.test.numel() << " test nodes\n";
    print_hetero_inputs(ds_, config_, o_.hetero.embeddings, tables_, out);
    out << "Model: " << hetero_model_text(config_) << ", fan-out "
        << hetero_fanout_text(ds_, hetero_fanouts(ds_, o_)) << ", batch "
        << loader_.settings().batch_size << "\n"
        << hetero_run_line(loader_.settings(), o_.group) << "\n"
        << hetero_features_line(loader_.stores())
        << (exchanges_.empty() ? "" : hetero_sharding_header(ds_, o_, exchanges_, cache_text_));
  }

  std::string best_text(const RunReport& r) const override {
    if (r.totals.best_epoch < 0) return "No evaluation";
    char line[128];
    std::snprintf(line, sizeof(line), "Best validation epoch %lld: Val Acc %.4f | Test Acc %.4f",
                  static_cast<long long>(r.totals.best_epoch), r.totals.best_value,
                  r.totals.best_metrics["test"]["acc"].get<double>());
    return line;
  }

  nlohmann::json final_record(const RunReport& r) const override {
    nlohmann::json out = {{"task", run_kind_name(RunKind::kHetero)},
                          {"model", hetero_model_kind_name(config_.kind)},
                          {"best_epoch", r.totals.best_epoch},
                          {"seeds_per_epoch", num_train_ * ranks_}};
    if (r.totals.best_epoch >= 0) {
      out["best_val_acc"] = r.totals.best_value;
      out["test_acc"] = r.totals.best_metrics["test"]["acc"];
    }
    return out;
  }

 private:
  const HeteroDataset& ds_;
  Split split_;
  HeteroModelConfig config_;
  HeteroLoader loader_;
  HeteroExchanges exchanges_;  // a sharded run's, per type (empty: not sharded)
  at::Tensor part_seeds_;      // seeds by part: the training nodes this rank's part owns
  std::string cache_text_;     // how the remote rows' copy was ranked
  int64_t num_train_ = 0, steps_ = 0;
  std::optional<HeteroLoader::Epoch> batches_;
  HeteroBatch batch_;
};

}  // namespace

void hetero_batch_to_device(std::vector<HeteroBlock>& blocks, std::vector<at::Tensor>& x,
                            const c10::Device& device) {
  if (device.is_cpu()) return;
  for (HeteroBlock& block : blocks) {
    for (Block& r : block.relations) {
      r.indptr = r.indptr.to(device);
      r.indices = r.indices.to(device);
    }
  }
  for (at::Tensor& rows : x) {
    if (rows.defined()) rows = rows.to(device);
  }
}

HeteroModelConfig hetero_model_config(const HeteroDataset& ds, const TrainOptions& o) {
  HeteroModelConfig config = HeteroModelConfig::for_dataset(ds);
  config.kind = o.hetero.model;
  config.hidden = o.model.hidden;
  config.layers = o.model.layers;
  config.dropout = o.model.dropout;
  config.num_bases = o.hetero.bases;
  config.norm = o.model.norm;
  config.residual = o.model.residual;
  config.heads = o.model.heads;
  config.attn_dropout = o.model.attn_dropout;
  return config;
}

HeteroSamplerOptions hetero_fanouts(const HeteroDataset& ds, const TrainOptions& o) {
  HeteroSamplerOptions s =
      hetero_sampler_options(ds, resolved_fanouts(o), o.loader.relation_fanouts, o.model.layers);
  s.degrees = o.hetero.model == HeteroModelKind::kGcn;  // its normalisation reads them
  return s;
}

std::string hetero_model_text(const HeteroModelConfig& c) {
  std::string text = std::string(hetero_model_kind_name(c.kind)) + ", " + std::to_string(c.layers) +
                     " layers, hidden " + std::to_string(c.hidden);
  if (c.kind == HeteroModelKind::kGat) text += " x " + std::to_string(c.heads) + " heads";
  if (c.num_bases > 0) text += ", " + std::to_string(c.num_bases) + " bases";
  if (c.norm != Norm::kNone) text += std::string(", ") + norm_name(c.norm) + " norm";
  if (c.residual) text += ", residual";
  return text;
}

std::string hetero_type_summary(const HeteroDataset& ds) {
  std::string out;
  for (const NodeType& t : ds.node_types) {
    out += (out.empty() ? "" : ", ") + t.name + " " + std::to_string(t.count);
    if (t.has_features()) out += " (" + std::to_string(t.feat_dim()) + "-d)";
  }
  return out;
}

std::string hetero_features_line(const HeteroStores& stores) {
  const std::string d = stores.description();
  return d.empty() ? d : "Features: " + d + "\n";
}

std::vector<NamedStore> named_stores(const HeteroStores& stores) {
  std::vector<NamedStore> out;
  for (size_t t = 0; t < stores.size(); ++t) {
    if (stores.store(t) != nullptr) out.push_back({stores.type_name(t), stores.store(t)});
  }
  return out;
}

std::string hetero_run_line(const LoaderSettings& s, ProcessGroup* group) {
  std::string line = std::to_string(num_threads()) + " thread(s)";
  if (group != nullptr && group->size() > 1) {
    line += " per rank, " + std::to_string(group->size()) + " ranks (" +
            to_string(group->backend()) + ")";
  }
  line += ", prefetch " + std::to_string(s.prefetch) + "; device " + report_device(s);
  if (s.gpu()) {
    line += s.gpu_sampler ? "; GPU sampler, relations " + graph_placement_name(s.graph)
                          : "; CPU sampler";
  }
  return line;
}

void print_hetero_inputs(const HeteroDataset& ds, const HeteroModelConfig& config,
                         const EmbeddingOptions& e, const HeteroTables& tables, std::ostream& out) {
  const std::optional<double> smooth_s = tables.smooth_seconds();
  if (e.dim > 0) {
    std::ostringstream line;
    line << "Learnable embeddings: " << e.dim << " wide for every featureless type, "
         << sparse_optimizer_name(e.optimizer) << ", lr " << e.lr;
    if (e.weight_decay > 0) line << ", weight decay " << e.weight_decay;
    if (!tables.placement().empty()) line << "; in " << tables.placement();
    if (smooth_s) {
      line << "; rows start smoothed over " << e.init_hops << " hops of the graph (" << std::fixed
           << std::setprecision(2) << *smooth_s << " s)";
    }
    out << line.str() << "\n";
  }
  if (config.kind == HeteroModelKind::kMlp) return;  // it reads the target's features only
  for (size_t t = 0; t < ds.node_types.size(); ++t) {
    if (config.in_dims[t] > 0) continue;
    const bool reached =
        std::any_of(ds.relations.begin(), ds.relations.end(),
                    [&](const Relation& r) { return r.dst_type == static_cast<int>(t); });
    if (reached) continue;
    const std::string& name = ds.node_types[t].name;
    out << "warning: node type '" << name << "' has no features and no relation ends at it, so "
        << "the model sees every '" << name << "' node alike; add the reverse relations (convert "
        << "with add_inverse_edges) or learnable embeddings (node_embeddings D)\n";
  }
}

RunReport train_hetero(const HeteroDataset& dataset, const TrainOptions& options,
                       std::ostream& out) {
  check_run_options(options);
  HeteroNodeTask task(dataset, options, hetero_model_config(dataset, options));
  return run_loop(task, options, out);
}

}  // namespace directgnn
