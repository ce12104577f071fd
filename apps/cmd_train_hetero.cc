// `directgnn train` on a heterogeneous dataset: a heterogeneous dataset directory
// (io/hetero_dir.h) or `mag:SCALE`, the ogbn-mag-shaped generator in memory
// (graph/mag_generator.h). Trains RGCN or heterogeneous SAGE (train/hetero_trainer.h).
#include <ATen/ATen.h>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <utility>

#include "core/threads.h"
#include "directgnn/error.h"
#include "dist/process_group.h"
#include "feature/embedding_table.h"
#include "graph/mag_generator.h"
#include "graph/splits.h"
#include "io/hetero_dir.h"
#include "io/npy.h"
#include "loader/options.h"
#include "options.h"
#include "train/checkpoint.h"
#include "train/hetero_link_trainer.h"
#include "train/hetero_state.h"
#include "train/hetero_trainer.h"
#include "train/metrics.h"

namespace directgnn::cli {
namespace {

// Ranks would each train alone: refused until heterogeneous training shares gradients.
void refuse_ranks() {
  DGNN_CHECK(dist_env_from_environment().world_size == 1,
             "heterogeneous training runs in one process for now; it does not take data-parallel "
             "ranks (torchrun, directgnn launch)");
}

bool is_mag_spec(const std::string& dataset) { return dataset.rfind("mag:", 0) == 0; }

// A homogeneous dataset as one node type whose input is a learnable table (its own feature
// table is left out) and one relation, node,to,node; the split as node training chooses it.
HeteroDataset as_featureless_hetero(const Dataset& homogeneous, int64_t split_index, uint64_t seed,
                                    bool labels) {
  HeteroDataset ds;
  ds.name = homogeneous.name;
  ds.source = homogeneous.source;
  ds.node_types.push_back({"node", homogeneous.num_nodes(), at::Tensor(), ""});
  Relation r;
  r.src = r.dst = "node";
  r.rel = "to";
  r.graph.indptr = homogeneous.graph.indptr;
  r.graph.indices = homogeneous.graph.indices;
  ds.relations.push_back(std::move(r));
  if (!labels) {  // link prediction: the graph alone
    validate_hetero(ds, ds.source, true);
    return ds;
  }
  require_labels(homogeneous);
  ds.target_type = 0;
  ds.labels = homogeneous.labels;
  ds.num_classes = homogeneous.num_classes;
  ds.class_names = homogeneous.class_names;
  const ChosenSplit split = choose_split(homogeneous, split_index, seed);
  std::printf("split: %s\n", split.description.c_str());
  ds.splits.push_back(split.split);
  validate_hetero(ds, ds.source, true);
  return ds;
}

// `split_index` picks a homogeneous dataset's split (a heterogeneous one's is the trainer's);
// `labels` false leaves a homogeneous dataset's labels and split out (link prediction).
HeteroDataset load_hetero(const std::string& dataset, int64_t split_index, uint64_t seed,
                          bool labels = true) {
  if (!is_hetero_dataset(dataset)) {
    return as_featureless_hetero(dataset_or_default(dataset, import_options(false)), split_index,
                                 seed, labels);
  }
  if (!is_mag_spec(dataset)) return load_hetero_dir(dataset);
  MagOptions mag;
  try {
    size_t used = 0;
    mag.scale = std::stod(dataset.substr(4), &used);
    DGNN_CHECK(used == dataset.size() - 4, "");
  } catch (const std::exception&) {
    fail("--dataset ", dataset, ": write mag:SCALE with a number, e.g. mag:0.01");
  }
  mag.seed = seed;
  check_mag_options(mag);
  return generate_mag(mag);
}

std::string type_summary(const HeteroDataset& ds) {
  std::string out;
  for (const NodeType& t : ds.node_types) {
    out += (out.empty() ? "" : ", ") + t.name + " " + std::to_string(t.count);
    if (t.has_features()) out += " (" + std::to_string(t.feat_dim()) + "-d)";
  }
  return out;
}

void run_hetero(const HeteroDataset& ds, const TrainOptions& o) {
  std::printf("dataset %s: %s; %zu relations, %lld edges; target %s, %lld classes\n",
              ds.name.c_str(), type_summary(ds).c_str(), ds.relations.size(),
              static_cast<long long>(ds.num_edges()), ds.target().name.c_str(),
              static_cast<long long>(ds.num_classes));
  const EmbeddingOptions& e = o.hetero.embeddings;
  if (e.dim > 0) {
    std::printf("learnable embeddings: %lld wide for every featureless type, %s, lr %g\n",
                static_cast<long long>(e.dim), sparse_optimizer_name(e.optimizer), e.lr);
  }
  const std::string bases =
      o.hetero.bases > 0 ? ", " + std::to_string(o.hetero.bases) + " bases" : "";
  std::printf("model %s, %lld layers, hidden %lld%s; fan-outs %s; batch %lld\n",
              hetero_model_kind_name(o.hetero.model), static_cast<long long>(o.model.layers),
              static_cast<long long>(o.model.hidden), bases.c_str(),
              hetero_fanout_text(ds, hetero_fanouts(ds, o)).c_str(),
              static_cast<long long>(o.loader.batch_size));
  std::fflush(stdout);
  const HeteroTrainReport r = train_hetero(ds, o, std::cout);
  std::printf("best epoch %lld: val %.4f, test %.4f; %.2f s per epoch, %.2f s per evaluation\n",
              static_cast<long long>(r.best_epoch), r.best_val_acc, r.test_acc, r.epoch_time_s,
              r.eval_s);
}

void run_hetero_link(const HeteroDataset& ds, const TrainOptions& o) {
  const LinkOptions& link = o.link;
  std::printf("dataset %s: %s; %zu relations, %lld edges\n", ds.name.c_str(),
              type_summary(ds).c_str(), ds.relations.size(),
              static_cast<long long>(ds.num_edges()));
  const LinkSamplerOptions& s = link.sampling;
  std::printf("link prediction on %s: split %g/%g/%g, %s negatives (%lld per positive, %s%s)%s\n",
              ds.relations[ds.relation_index(link.relation, ds.source)].key().c_str(),
              1 - link.split.val - link.split.test, link.split.val, link.split.test,
              negative_mode_name(s.mode).c_str(), static_cast<long long>(s.neg_ratio),
              negative_dist_name(s.dist).c_str(), s.exact_negatives ? ", exact" : "",
              s.exclude_seed_edges ? "; seed edges left out of their neighbourhoods" : "");
  std::printf("model %s, %lld layers, %lld-wide embeddings, %s decoder; fan-outs %s; batch %lld\n",
              hetero_model_kind_name(o.hetero.model), static_cast<long long>(o.model.layers),
              static_cast<long long>(o.model.hidden), decoder_kind_name(link.decoder),
              hetero_fanout_text(ds, hetero_fanouts(ds, o)).c_str(),
              static_cast<long long>(o.loader.batch_size));
  const HeteroLinkTarget target = find_link_target(ds, link.relation, ds.source);
  for (const int t : {target.src_type, target.dst_type}) {
    const NodeType& type = ds.node_types[t];
    if (o.hetero.model == HeteroModelKind::kMlp && !type.has_features() &&
        o.hetero.embeddings.dim == 0) {
      std::printf(
          "note: node type '%s' has no features and the mlp reads no relation: its "
          "embedding is one vector for every node (--node-embeddings D gives it a "
          "table)\n",
          type.name.c_str());
    }
  }
  std::fflush(stdout);
  const HeteroLinkReport r = train_hetero_links(ds, o, std::cout);
  const bool mrr = r.primary_metric == "mrr";
  std::printf("%lld training, %lld validation, %lld test edges; %lld steps per epoch\n",
              static_cast<long long>(r.train_edges), static_cast<long long>(r.val_edges),
              static_cast<long long>(r.test_edges), static_cast<long long>(r.steps_per_epoch));
  if (r.best_epoch >= 0) {
    std::printf("best epoch %lld: val %s %.4f, test %s %.4f, test Hits@%lld %.4f\n",
                static_cast<long long>(r.best_epoch), r.primary_metric.c_str(),
                mrr ? r.best_val.mrr : r.best_val.roc_auc, r.primary_metric.c_str(),
                mrr ? r.test.mrr : r.test.roc_auc, static_cast<long long>(link.hits_k),
                r.test.hits);
  }
  std::printf("%.2f s per epoch, %.2f s per evaluation\n", r.epoch_time_s, r.eval_s);
}

// Per type: the input a checkpoint's model reads, its learnable table (checked against the
// type's count) where it kept one, else the type's features.
std::vector<at::Tensor> checkpoint_inputs(const nlohmann::json& meta, const std::string& dir,
                                          const HeteroDataset& ds) {
  std::vector<at::Tensor> inputs;
  const nlohmann::json tables = meta.value("embeddings", nlohmann::json::object());
  for (const NodeType& t : ds.node_types) {
    if (!tables.contains(t.name)) {
      inputs.push_back(t.features);
      continue;
    }
    const std::string file = dir + "/" + tables[t.name].value("file", std::string());
    const at::Tensor table = load_npy(file);
    DGNN_CHECK(table.dim() == 2 && table.size(0) == t.count, file, ": has shape ", table.sizes(),
               " but node type '", t.name, "' has ", t.count, " nodes");
    inputs.push_back(table);
  }
  return inputs;
}

}  // namespace

bool is_hetero_dataset(const std::string& dataset) {
  return !dataset.empty() && (is_mag_spec(dataset) || is_hetero_dir(dataset));
}

void train_hetero_command(RunKind kind, const TrainTarget& target, TrainOptions o) {
  refuse_ranks();
  const bool homogeneous = !is_hetero_dataset(target.dataset);
  o.run_info["homogeneous_split"] = homogeneous ? o.split : -1;
  const HeteroDataset ds = load_hetero(target.dataset, o.split, o.seed, kind == RunKind::kHetero);
  if (homogeneous) o.split = 0;  // the split chosen above is the only one
  if (kind == RunKind::kHeteroLink) {
    if (o.link.relation.empty() && homogeneous) o.link.relation = "node,to,node";
    DGNN_CHECK(!o.link.relation.empty(),
               "--task link on a heterogeneous dataset needs --target-relation SRC,REL,DST: the "
               "relation whose edges are predicted");
    run_hetero_link(ds, o);
    return;
  }
  run_hetero(ds, o);
}

void eval_hetero_command(const nlohmann::json& meta, const std::string& dir,
                         const std::string& dataset_arg) {
  const std::string where = dir + "/checkpoint.pt";
  const nlohmann::json run = meta.value("run", nlohmann::json::object());
  const std::string dataset =
      dataset_arg.empty() ? run.value("dataset", std::string()) : dataset_arg;
  const int64_t split = run.value("homogeneous_split", int64_t{-1});
  const uint64_t seed = meta.value("seed", uint64_t{0});
  const HeteroDataset ds = load_hetero(dataset, std::max<int64_t>(0, split), seed);
  HeteroModelConfig config = HeteroModelConfig::from_json(meta.at("model"), where);
  const HeteroModelConfig given = HeteroModelConfig::for_dataset(ds);
  DGNN_CHECK(config.relations == given.relations && config.num_classes == given.num_classes, where,
             ": the checkpoint was trained on other node types, relations or classes than ",
             ds.source, "'s; pass the dataset it was trained on");
  HeteroModel model(config);
  load_checkpoint(dir, model, nullptr);
  const std::vector<at::Tensor> inputs = checkpoint_inputs(meta, dir, ds);
  const Split& s = ds.splits.at(split >= 0 ? 0 : meta.value("split", size_t{0}));
  const at::Tensor logits = model.infer(ds, inputs);
  const double val = accuracy(logits, ds.labels, s.val), test = accuracy(logits, ds.labels, s.test);
  std::printf("Checkpoint epoch %lld | Val Acc %.4f | Test Acc %.4f\n",
              static_cast<long long>(meta.value("epoch", int64_t{-1})), val, test);
  const double recorded = meta.value("test_acc", -1.0);
  if (std::abs(recorded - test) < 1e-9) {
    std::printf("Matches the test accuracy recorded at training time.\n");
  } else {
    std::printf("Training recorded Test Acc %.4f for this checkpoint.\n", recorded);
  }
}

void eval_hetero_link_command(const nlohmann::json& meta, const std::string& dir,
                              const std::string& dataset_arg) {
  const std::string where = dir + "/checkpoint.pt";
  const nlohmann::json run = meta.value("run", nlohmann::json::object());
  const std::string dataset =
      dataset_arg.empty() ? run.value("dataset", std::string()) : dataset_arg;
  const uint64_t seed = meta.value("seed", uint64_t{0});
  const HeteroDataset ds = load_hetero(dataset, 0, seed, false);
  LinkOptions link = checkpoint_options(meta, RunKind::kHeteroLink, where).link;
  const HeteroLinkTarget target = find_link_target(ds, link.relation, ds.source);
  link.split.seed = seed;
  const HeteroLinkSplit split = random_hetero_link_split(ds, target, link.split);
  const HeteroModelConfig config = HeteroModelConfig::from_json(meta.at("model"), where);
  const HeteroModelConfig given = HeteroModelConfig::for_dataset(ds);
  DGNN_CHECK(config.relations == given.relations, where,
             ": the checkpoint was trained on other node types or relations than ", ds.source,
             "'s; pass the dataset it was trained on");
  HeteroLinkModel model(config, link.decoder, link.decoder_layers);
  load_checkpoint(dir, model, nullptr);
  const LinkEvalResult r = evaluate_hetero_links(
      model, split.graph, target, checkpoint_inputs(meta, dir, ds), split.split, link.hits_k);
  const std::string metric = primary_link_metric(split.split.negatives);
  const double val = primary_value(r.val, split.split.negatives);
  const double test = primary_value(r.test, split.split.negatives);
  std::printf("Checkpoint epoch %lld | %s | Val %s %.4f | Test %s %.4f\n",
              static_cast<long long>(meta.value("epoch", int64_t{-1})),
              ds.relations[target.relation].key().c_str(), metric.c_str(), val, metric.c_str(),
              test);
  const nlohmann::json recorded_metrics = meta.value("test", nlohmann::json::object());
  if (!recorded_metrics.contains(metric)) {
    std::printf(
        "Training recorded no test metric for this checkpoint (trained without "
        "evaluation).\n");
    return;
  }
  const double recorded = recorded_metrics[metric].get<double>();
  if (std::abs(recorded - test) < 1e-9) {
    std::printf("Matches the test %s recorded at training time.\n", metric.c_str());
  } else {
    std::printf("Training recorded test %s %.4f for this checkpoint.\n", metric.c_str(), recorded);
  }
}

}  // namespace directgnn::cli
