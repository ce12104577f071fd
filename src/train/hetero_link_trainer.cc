#include "train/hetero_link_trainer.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <utility>

#include "core/random.h"
#include "directgnn/error.h"
#include "loader/hetero_link_loader.h"
#include "train/checkpoint.h"
#include "train/hetero_sharding.h"
#include "train/run_options.h"

namespace directgnn {
namespace {

// Decoder scores of pairs (src[i], dst[i]): rows of h_src and h_dst, `chunk` pairs at a time.
at::Tensor score_typed_pairs(LinkDecoder& decoder, const at::Tensor& h_src, const at::Tensor& h_dst,
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

LinkMetrics score_typed_split(LinkDecoder& decoder, const at::Tensor& h_src,
                              const at::Tensor& h_dst, const at::Tensor& pos, const at::Tensor& neg,
                              LinkNegatives layout, int64_t hits_k) {
  const at::Tensor p = score_typed_pairs(decoder, h_src, h_dst, pos.select(1, 0), pos.select(1, 1));
  at::Tensor n;
  if (layout == LinkNegatives::kShared) {
    n = score_typed_pairs(decoder, h_src, h_dst, neg.select(1, 0), neg.select(1, 1));
  } else {
    const at::Tensor src = pos.select(1, 0).view({-1, 1}).expand_as(neg).reshape(-1);
    n = score_typed_pairs(decoder, h_src, h_dst, src, neg.reshape(-1)).view(neg.sizes());
  }
  return link_metrics(p, n, layout, hits_k);
}

HeteroLinkSplit checked_split(const HeteroDataset& ds, const HeteroLinkTarget& target,
                              const TrainOptions& o) {
  LinkSplitOptions options = o.link.split;
  options.seed = o.seed;
  HeteroLinkSplit split = random_hetero_link_split(ds, target, options);
  DGNN_CHECK_ARG(!o.evaluate || (split.split.val.size(0) > 0 && split.split.test.size(0) > 0),
                 "link_split",
                 "leaves no validation or test edges to evaluate; give both a fraction (or train "
                 "without evaluation)");
  return split;
}

class HeteroLinkTask final : public HeteroTask<HeteroLinkModel> {
 public:
  HeteroLinkTask(const HeteroDataset& ds, const TrainOptions& o, const HeteroLinkTarget& target,
                 HeteroModelConfig config)
      : HeteroTask(ds, o, config),
        link_(o.link),
        target_(target),
        split_(checked_split(ds, target, o)),
        config_(std::move(config)),
        loader_(split_.graph, target_, hetero_fanouts(ds, o), link_.sampling,
                hetero_run_settings(
                    o, split_.graph,
                    {false,
                     "link prediction on heterogeneous graphs samples on the CPU (dropping "
                     "a batch's seed edges has no GPU twin there yet)"})) {
    prepare_tables(split_.graph, loader_.settings().device);
    init_model(
        [this] {
          return std::make_unique<HeteroLinkModel>(config_, link_.decoder, link_.decoder_layers);
        },
        loader_.settings().device);
    exchanges_ = shard_hetero_tables(split_.graph, o, loader_.mutable_stores(), cache_text_);
    const at::Tensor& train = split_.split.train;
    if (!exchanges_.empty() && o.seed_assignment == SeedAssignment::kPart) {
      // Each rank trains on the positives whose source node its part owns.
      const PartShare share = hetero_part_share(split_.graph, target_.src_type, train.select(1, 0),
                                                rank_, ranks_, "training edges (by source node)");
      part_positives_ = train.index_select(0, share.mine);
      num_train_ = share.count;
    } else {
      // Each rank trains on its own equal shard of every epoch's shuffled positives.
      num_train_ = train.size(0) / ranks_;
      DGNN_CHECK(num_train_ > 0, "the link split has ", train.size(0),
                 " training edges, fewer than the ", ranks_, " ranks");
    }
    steps_ = loader_.steps(num_train_);
    if (link_.steps_per_epoch > 0) steps_ = std::min(steps_, link_.steps_per_epoch);
  }

  RunKind kind() const override { return RunKind::kHeteroLink; }
  const LoaderSettings& settings() const override { return loader_.settings(); }
  std::vector<NamedStore> stores() const override { return named_stores(loader_.stores()); }

  // Ranks by the batches of one epoch over the training edges in an order of their own.
  std::string fill_cache(bool verbose) override {
    const at::Tensor positives = shuffled_rows(split_.split.train, mix64(o_.seed, 0xcac4e));
    const HeteroPresample presample = presample_batches(
        positives, loader_.settings().batch_size, steps_,
        [this](const at::Tensor& part, int64_t step) {
          return loader_.sampler().sample(part, mix64(o_.seed, 0xcac4e, step)).sample.input_nodes;
        });
    return fill_hetero_feature_cache(loader_.mutable_stores(), split_.graph, presample,
                                     o_.loader.cache, verbose);
  }
  int64_t steps_per_epoch() const override { return steps_; }
  int64_t num_nodes() const override { return split_.graph.num_nodes(); }
  bool classifies() const override { return false; }

  // Part positives: the epoch's shuffle of this part's, cut to the count every rank has;
  // otherwise this rank's shard of the global shuffle.
  void start_epoch(int64_t epoch, int64_t first_step) override {
    const bool part = part_positives_.defined();
    const at::Tensor mine =
        shuffled_rows(part ? part_positives_ : split_.split.train, mix64(o_.seed, 0x5eed, epoch))
            .narrow(0, part ? 0 : rank_ * num_train_, num_train_);
    clear_hetero_exchange_counts(exchanges_);
    // Rank r's step s draws from stream s·ranks + r: one stream per rank, a single process's
    // streams unchanged.
    const uint64_t seed = o_.seed;
    const int64_t rank = rank_, ranks = ranks_;
    batches_.emplace(loader_.epoch(
        mine, [=](int64_t s) { return mix64(seed, epoch, s * ranks + rank); }, first_step, steps_));
  }

  // A sharded table's exchanges this epoch, as this rank saw them.
  void write_epoch(nlohmann::json& record, std::string& text) override {
    if (!exchanges_.empty()) write_hetero_exchange_counts(exchanges_, split_.graph, record, text);
  }

  BatchTimes next_batch() override {
    batch_ = batches_->next();
    return {batch_.sample_s, batch_.gather_s};
  }

  void forward_backward(StepSums& sums) override {
    HeteroLinkBatch& b = batch_.batch;
    const c10::Device device = loader_.settings().device;
    hetero_batch_to_device(b.sample.blocks, batch_.x, device);
    tables_.read_rows(b.sample.input_nodes, device, batch_.x);
    const std::vector<at::Tensor> h = model_->encoder().forward_outputs(b.sample.blocks, batch_.x);
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
    const at::Tensor scores =
        model_->decoder().forward(h[target_.src_type].index_select(0, src.to(device)),
                                  h[target_.dst_type].index_select(0, dst.to(device)));
    const at::Tensor loss = at::binary_cross_entropy_with_logits(scores, labels.to(device));
    loss.backward();
    sums.add_mean(loss);
  }

  void after_step() override {
    tables_.update(batch_.batch.sample.input_nodes, batch_.x, o_.group);
    batch_ = HeteroLinkMinibatch();
  }

  // Full neighbourhoods over the whole tables; a rank holding its parts of the tables samples
  // the pairs' neighbourhoods instead, every rank all of them (each batch's rows exchanged).
  Evaluation evaluate(ProcessGroup*) override {
    const LinkEvalResult r =
        exchanges_.empty()
            ? evaluate_hetero_links(host_model(), split_.graph, target_,
                                    tables_.inputs(split_.graph), split_.split, link_.hits_k)
            : evaluate_sampled();
    return link_evaluation(r, split_.split.negatives, link_.hits_k);
  }

  void save_checkpoint(const std::string& dir, int64_t epoch, const Evaluation* e) override {
    nlohmann::json meta = {{"primary_metric", primary_link_metric(split_.split.negatives)}};
    if (e != nullptr) meta.update(e->metrics);
    write_checkpoint(dir, epoch, config_.to_json(), split_.graph, std::move(meta));
  }

  void print_header(std::ostream& out) const override;

  std::string best_text(const RunReport& r) const override {
    if (r.totals.best_epoch < 0) return "No evaluation";
    return "Best validation epoch " + std::to_string(r.totals.best_epoch) + " (by " +
           primary_link_metric(split_.split.negatives) + ")" +
           link_metrics_text("Val", metrics_from_json(r.totals.best_metrics["val"]), link_.hits_k) +
           link_metrics_text("Test", metrics_from_json(r.totals.best_metrics["test"]),
                             link_.hits_k);
  }

  nlohmann::json final_record(const RunReport& r) const override {
    nlohmann::json out = {{"task", run_kind_name(RunKind::kHeteroLink)},
                          {"relation", split_.graph.relations[target_.relation].key()},
                          {"model", hetero_model_kind_name(config_.kind)},
                          {"best_epoch", r.totals.best_epoch},
                          {"primary_metric", primary_link_metric(split_.split.negatives)},
                          {"train_edges", split_.split.train.size(0)},
                          {"val_edges", split_.split.val.size(0)},
                          {"test_edges", split_.split.test.size(0)}};
    if (r.totals.best_epoch >= 0) {
      out["val"] = r.totals.best_metrics["val"];
      out["test"] = r.totals.best_metrics["test"];
    }
    return out;
  }

 private:
  LinkEvalResult evaluate_sampled();
  std::vector<at::Tensor> sampled_embeddings(const std::vector<at::Tensor>& nodes);

  const LinkOptions& link_;
  HeteroLinkTarget target_;
  HeteroLinkSplit split_;
  HeteroModelConfig config_;
  HeteroLinkLoader loader_;
  HeteroExchanges exchanges_;  // sharded tables (empty: whole)
  at::Tensor part_positives_;  // seed_assignment part: the positives this part's sources start
  std::string cache_text_;     // how the copy of remote rows was chosen
  int64_t num_train_ = 0, steps_ = 0;
  std::optional<HeteroLinkLoader::Epoch> batches_;
  HeteroLinkMinibatch batch_;
};

// The scored pairs' distinct sources and destinations: the validation and test positives and
// their negatives (shared pairs, or each positive's source against its K destinations).
std::pair<at::Tensor, at::Tensor> scored_ends(const LinkSplit& s) {
  std::vector<at::Tensor> src{s.val.select(1, 0), s.test.select(1, 0)};
  std::vector<at::Tensor> dst{s.val.select(1, 1), s.test.select(1, 1)};
  for (const at::Tensor& neg : {s.val_neg, s.test_neg}) {
    if (s.negatives == LinkNegatives::kShared) {
      src.push_back(neg.select(1, 0));
      dst.push_back(neg.select(1, 1));
    } else {
      dst.push_back(neg.reshape(-1));
    }
  }
  return {at::cat(src).to(at::kLong), at::cat(dst).to(at::kLong)};
}

// `pairs` with each source's id replaced by its position in `src` and each destination's by its
// position in `dst` (sorted distinct ids holding every one): shared pairs [n, 2], or [n, K]
// destinations (`dst_only`).
at::Tensor positions(const at::Tensor& pairs, const at::Tensor& src, const at::Tensor& dst,
                     bool dst_only) {
  const at::Tensor ids = pairs.to(at::kLong).contiguous();
  if (dst_only) return at::searchsorted(dst, ids);
  return at::stack({at::searchsorted(src, ids.select(1, 0).contiguous()),
                    at::searchsorted(dst, ids.select(1, 1).contiguous())},
                   1);
}

// The embeddings of `nodes[t]` (sorted distinct ids of each node type t; empty where none), in
// that order: their neighbourhoods sampled with the training fan-outs, a batch of each type at a
// time (batch i draws with mix64(seed, 0xe7a1, i)), the rows read through the loader's tables
// (a sharded table's exchanged). Every rank asks for as many batches.
std::vector<at::Tensor> HeteroLinkTask::sampled_embeddings(const std::vector<at::Tensor>& nodes) {
  const int64_t batch = loader_.settings().batch_size;
  int64_t steps = 0;
  for (const at::Tensor& n : nodes) steps = std::max(steps, (n.numel() + batch - 1) / batch);
  const c10::Device device = loader_.settings().device;
  std::vector<std::vector<at::Tensor>> parts(nodes.size());
  for (int64_t i = 0; i < steps; ++i) {
    std::vector<at::Tensor> seeds(nodes.size());
    for (size_t t = 0; t < nodes.size(); ++t) {
      const int64_t lo = std::min(i * batch, nodes[t].numel());
      seeds[t] = nodes[t].narrow(0, lo, std::min(batch, nodes[t].numel() - lo));
    }
    HeteroMiniBatch b =
        loader_.sampler().sampler().sample(seeds, mix64(o_.seed, 0xe7a1, static_cast<uint64_t>(i)));
    std::vector<at::Tensor> x = loader_.stores().gather(b.input_nodes);
    hetero_batch_to_device(b.blocks, x, device);
    tables_.read_rows(b.input_nodes, device, x);
    const std::vector<at::Tensor> h = model_->encoder().forward_outputs(b.blocks, x);
    for (size_t t = 0; t < nodes.size(); ++t) {
      if (seeds[t].numel() > 0) parts[t].push_back(h[t].narrow(0, 0, seeds[t].numel()));
    }
  }
  std::vector<at::Tensor> out(nodes.size());
  for (size_t t = 0; t < nodes.size(); ++t) {
    if (!parts[t].empty()) out[t] = at::cat(parts[t]);
  }
  return out;
}

LinkEvalResult HeteroLinkTask::evaluate_sampled() {
  at::NoGradGuard no_grad;
  model_->eval();
  const LinkSplit& s = split_.split;
  const auto [src_ids, dst_ids] = scored_ends(s);
  const int src = target_.src_type, dst = target_.dst_type;
  std::vector<at::Tensor> nodes(split_.graph.node_types.size(), at::empty({0}, at::kLong));
  nodes[static_cast<size_t>(src)] = std::get<0>(at::_unique(src_ids));
  nodes[static_cast<size_t>(dst)] =
      std::get<0>(at::_unique(src == dst ? at::cat({src_ids, dst_ids}) : dst_ids));
  const std::vector<at::Tensor> h = sampled_embeddings(nodes);
  const at::Tensor &src_nodes = nodes[static_cast<size_t>(src)],
                   &dst_nodes = nodes[static_cast<size_t>(dst)];
  const bool per_source = s.negatives == LinkNegatives::kPerSource;
  LinkEvalResult r;
  LinkDecoder& decoder = model_->decoder();
  const at::Tensor &h_src = h[static_cast<size_t>(src)], &h_dst = h[static_cast<size_t>(dst)];
  r.val = score_typed_split(decoder, h_src, h_dst, positions(s.val, src_nodes, dst_nodes, false),
                            positions(s.val_neg, src_nodes, dst_nodes, per_source), s.negatives,
                            link_.hits_k);
  r.test = score_typed_split(decoder, h_src, h_dst, positions(s.test, src_nodes, dst_nodes, false),
                             positions(s.test_neg, src_nodes, dst_nodes, per_source), s.negatives,
                             link_.hits_k);
  model_->train();
  return r;
}

void HeteroLinkTask::print_header(std::ostream& out) const {
  const HeteroDataset& ds = split_.graph;
  const LinkSamplerOptions& s = link_.sampling;
  const LinkSplit& split = split_.split;
  out << "Dataset " << ds.name << ": " << hetero_type_summary(ds) << "; " << ds.relations.size()
      << " relations, " << ds.num_edges() << " message-passing edges\n"
      << "Link split of " << ds.relations[target_.relation].key() << ": " << split.train.size(0)
      << " training, " << split.val.size(0) << " validation, " << split.test.size(0)
      << " test edges; negatives " << negative_mode_name(s.mode) << " x" << s.neg_ratio << " ("
      << negative_dist_name(s.dist) << (s.exact_negatives ? ", exact" : "") << "), seed edges "
      << (s.exclude_seed_edges ? "excluded" : "kept") << "\n";
  print_hetero_inputs(ds, config_, o_.hetero.embeddings, tables_, out);
  out << "Model: " << hetero_model_text(config_) << ", decoder " << decoder_kind_name(link_.decoder)
      << ", fan-out " << hetero_fanout_text(ds, hetero_fanouts(ds, o_)) << ", batch "
      << loader_.settings().batch_size << " positive edges" << (ranks_ > 1 ? " per rank" : "")
      << "\n"
      << hetero_run_line(loader_.settings(), o_.group) << "\n"
      << hetero_features_line(loader_.stores())
      << (exchanges_.empty() ? ""
                             : hetero_sharding_header(split_.graph, o_, exchanges_, cache_text_));
  for (const int t : {target_.src_type, target_.dst_type}) {
    const NodeType& type = ds.node_types[t];
    if (config_.kind == HeteroModelKind::kMlp && !type.has_features() &&
        o_.hetero.embeddings.dim == 0) {
      out << "note: node type '" << type.name
          << "' has no features and the mlp reads no relation: its embedding is one vector for "
             "every node (learnable embeddings, node_embeddings > 0, give it a table)\n";
    }
  }
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
  c.norm = model.norm;
  c.residual = model.residual;
  c.heads = model.heads;
  c.attn_dropout = model.attn_dropout;
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
  r.val = score_typed_split(model.decoder(), h_src, h_dst, split.val, split.val_neg,
                            split.negatives, hits_k);
  r.test = score_typed_split(model.decoder(), h_src, h_dst, split.test, split.test_neg,
                             split.negatives, hits_k);
  if (was_training) model.train();
  return r;
}

RunReport train_hetero_links(const HeteroDataset& dataset, const TrainOptions& o,
                             std::ostream& out) {
  check_run_options(o);
  DGNN_CHECK_ARG(!o.link.use_val_edges, "use_val_edges",
                 "is not offered for heterogeneous link prediction: its test split is scored "
                 "over the training edges");
  const HeteroLinkTarget target = find_link_target(dataset, o.link.relation, dataset.source);
  HeteroLinkTask task(dataset, o, target,
                      hetero_link_encoder(dataset, target, hetero_model_config(dataset, o)));
  return run_loop(task, o, out);
}

}  // namespace directgnn
