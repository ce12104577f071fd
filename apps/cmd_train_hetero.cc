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

// Flags of homogeneous training that this path does not take yet: refused, never ignored.
constexpr const char* kNotYet[] = {"--features",    "--gather",
                                   "--sampler",     "--graph",
                                   "--norm",        "--residual",
                                   "--heads",       "--attn-dropout",
                                   "--disk-io",     "--weighted-sampling",
                                   "--optimizer",   "--feature-cache-gib",
                                   "--disk-direct", "--dist-backend",
                                   "--dist-timeout"};

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

void run_hetero(const HeteroDataset& ds, const HeteroTrainOptions& o) {
  std::printf("dataset %s: %s; %zu relations, %lld edges; target %s, %lld classes\n",
              ds.name.c_str(), type_summary(ds).c_str(), ds.relations.size(),
              static_cast<long long>(ds.num_edges()), ds.target().name.c_str(),
              static_cast<long long>(ds.num_classes));
  if (o.embeddings.dim > 0) {
    std::printf("learnable embeddings: %lld wide for every featureless type, %s, lr %g\n",
                static_cast<long long>(o.embeddings.dim),
                sparse_optimizer_name(o.embeddings.optimizer), o.embeddings.lr);
  }
  const std::string bases =
      o.model.num_bases > 0 ? ", " + std::to_string(o.model.num_bases) + " bases" : "";
  std::printf("model %s, %lld layers, hidden %lld%s; fan-outs %s; batch %lld\n",
              hetero_model_kind_name(o.model.kind), static_cast<long long>(o.model.layers),
              static_cast<long long>(o.model.hidden), bases.c_str(),
              hetero_fanout_text(ds, o.sampler).c_str(),
              static_cast<long long>(o.loader.batch_size));
  std::fflush(stdout);
  const HeteroTrainReport r = train_hetero(ds, o, std::cout);
  std::printf("best epoch %lld: val %.4f, test %.4f; %.2f s per epoch, %.2f s per evaluation\n",
              static_cast<long long>(r.best_epoch), r.best_val_acc, r.test_acc, r.epoch_time_s,
              r.eval_s);
}

void run_hetero_link(const HeteroDataset& ds, const HeteroTrainOptions& o,
                     const HeteroLinkOptions& link) {
  std::printf("dataset %s: %s; %zu relations, %lld edges\n", ds.name.c_str(),
              type_summary(ds).c_str(), ds.relations.size(),
              static_cast<long long>(ds.num_edges()));
  const LinkSamplerOptions& s = link.link.sampling;
  std::printf("link prediction on %s: split %g/%g/%g, %s negatives (%lld per positive, %s%s)%s\n",
              ds.relations[ds.relation_index(link.relation, ds.source)].key().c_str(),
              1 - link.split.val - link.split.test, link.split.val, link.split.test,
              negative_mode_name(s.mode).c_str(), static_cast<long long>(s.neg_ratio),
              negative_dist_name(s.dist).c_str(), s.exact_negatives ? ", exact" : "",
              s.exclude_seed_edges ? "; seed edges left out of their neighbourhoods" : "");
  std::printf("model %s, %lld layers, %lld-wide embeddings, %s decoder; fan-outs %s; batch %lld\n",
              hetero_model_kind_name(o.model.kind), static_cast<long long>(o.model.layers),
              static_cast<long long>(o.model.hidden), decoder_kind_name(link.link.decoder),
              hetero_fanout_text(ds, o.sampler).c_str(),
              static_cast<long long>(o.loader.batch_size));
  const HeteroLinkTarget target = find_link_target(ds, link.relation, ds.source);
  for (const int t : {target.src_type, target.dst_type}) {
    const NodeType& type = ds.node_types[t];
    if (o.model.kind == HeteroModelKind::kMlp && !type.has_features() && o.embeddings.dim == 0) {
      std::printf(
          "note: node type '%s' has no features and the mlp reads no relation: its "
          "embedding is one vector for every node (--node-embeddings D gives it a "
          "table)\n",
          type.name.c_str());
    }
  }
  std::fflush(stdout);
  const HeteroLinkReport r = train_hetero_links(ds, o, link, std::cout);
  const bool mrr = r.primary_metric == "mrr";
  std::printf("%lld training, %lld validation, %lld test edges; %lld steps per epoch\n",
              static_cast<long long>(r.train_edges), static_cast<long long>(r.val_edges),
              static_cast<long long>(r.test_edges), static_cast<long long>(r.steps_per_epoch));
  if (r.best_epoch >= 0) {
    std::printf("best epoch %lld: val %s %.4f, test %s %.4f, test Hits@%lld %.4f\n",
                static_cast<long long>(r.best_epoch), r.primary_metric.c_str(),
                mrr ? r.best_val.mrr : r.best_val.roc_auc, r.primary_metric.c_str(),
                mrr ? r.test.mrr : r.test.roc_auc, static_cast<long long>(link.link.hits_k),
                r.test.hits);
  }
  std::printf("%.2f s per epoch, %.2f s per evaluation\n", r.epoch_time_s, r.eval_s);
}

// The link task's options from the command line.
HeteroLinkOptions hetero_link_options(const HeteroArgs& hetero, const LinkTrainOptions& link,
                                      bool homogeneous) {
  HeteroLinkOptions o;
  o.relation = hetero.target_relation;
  if (o.relation.empty() && homogeneous) o.relation = "node,to,node";
  DGNN_CHECK(!o.relation.empty(),
             "--task link on a heterogeneous dataset needs --target-relation SRC,REL,DST: the "
             "relation whose edges are predicted");
  DGNN_CHECK(!link.use_val_edges,
             "--use-val-edges is not offered on heterogeneous datasets (the test split is scored "
             "over the training edges); leave it out");
  o.link = link;
  o.split = parse_link_fractions(hetero.link_split);
  DGNN_CHECK(hetero.eval_negatives >= 0, "--eval-negatives must not be negative, got ",
             hetero.eval_negatives);
  o.split.neg_per_source = hetero.eval_negatives;
  return o;
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

void add_hetero_options(CLI::App* c, HeteroArgs* args) {
  c->add_option("--fan-out-rel", args->fanout_rel,
                "heterogeneous datasets: fan-outs per relation, e.g. "
                "\"paper,cites,paper=15,10;author,writes,paper=5,5\" (others take --fan-out)");
  c->add_option("--bases", args->bases,
                "rgcn: basis decomposition of the relation weights (0: a full weight each)")
      ->default_val(0);
  c->add_option("--node-embeddings", args->node_embeddings,
                "learnable D-wide embeddings as the input of every featureless node type (on a "
                "homogeneous dataset: instead of its feature table), updated sparsely")
      ->default_val(0);
  c->add_option("--embedding-optimizer", args->embedding_optimizer,
                "the embeddings' sparse optimiser: adagrad (row-wise, one float of state per "
                "row) or adam (sparse Adam)")
      ->default_val("adagrad");
  c->add_option("--embedding-lr", args->embedding_lr, "the embeddings' learning rate")
      ->default_val(0.01);
  c->add_option("--target-relation", args->target_relation,
                "link, heterogeneous datasets: the relation whose edges are predicted, "
                "src,rel,dst (held-out edges leave it and its reverse rev_REL)");
  c->add_option("--link-split", args->link_split,
                "link, heterogeneous datasets: TRAIN,VAL,TEST fractions of the target "
                "relation's edges, a seeded random split")
      ->capture_default_str();
  c->add_option("--eval-negatives", args->eval_negatives,
                "link, heterogeneous datasets: 0 scores one shared random pair per validation/"
                "test positive (ROC-AUC); K scores K destinations per positive's source (MRR)")
      ->capture_default_str();
}

bool is_hetero_dataset(const std::string& dataset) {
  return !dataset.empty() && (is_mag_spec(dataset) || is_hetero_dir(dataset));
}

void train_hetero_command(const CLI::App& command, const std::string& dataset,
                          const TrainingArgs& args, const HeteroArgs& hetero,
                          const LinkTrainOptions* link) {
  refuse_ranks();
  for (const char* flag : kNotYet) {
    const CLI::Option* option = command.get_option_no_throw(flag);
    DGNN_CHECK(option == nullptr || option->count() == 0, flag,
               " does not apply to heterogeneous datasets yet; leave it out");
  }
  HeteroTrainOptions o;
  const TrainOptions& t = args.train;
  const CLI::Option* model = command.get_option_no_throw("--model");
  const bool model_given = model != nullptr && model->count() > 0;
  o.model.kind = parse_hetero_model_kind(!model_given           ? "rgcn"
                                         : args.model == "sage" ? "hsage"
                                                                : args.model);
  o.model.hidden = t.model.hidden;
  o.model.layers = t.model.layers;
  o.model.dropout = t.model.dropout;
  o.model.num_bases = hetero.bases;
  o.lr = t.lr;
  o.weight_decay = t.weight_decay;
  o.epochs = t.epochs;
  o.eval_every = t.eval_every;
  o.seed = t.seed;
  o.split = t.split;
  o.metrics_path = t.metrics_path;
  o.checkpoint_dir = t.checkpoint_dir;
  o.loader.batch_size = t.loader.batch_size;
  o.loader.workers = t.loader.workers;
  o.embeddings.dim = hetero.node_embeddings;
  o.embeddings.optimizer = parse_sparse_optimizer(hetero.embedding_optimizer);
  o.embeddings.lr = hetero.embedding_lr;
  o.checkpoint_every = t.checkpoint_every;
  std::string note;
  o.device = resolve_device(parse_device(args.device), nullptr, &note);
  if (!note.empty()) std::printf("%s\n", note.c_str());
  // As node training: on the CPU a producer thread only takes cores from the model (and its
  // arena page-faults batches in afresh), on a GPU it hides sampling behind the step.
  o.loader.prefetch = parse_prefetch(args.prefetch).value_or(o.device.is_cpu() ? 0 : 2);
  const bool homogeneous = !is_hetero_dataset(dataset);
  o.run_info = {{"dataset", is_mag_spec(dataset) ? dataset : absolute_path(dataset)},
                {"homogeneous_split", homogeneous ? t.split : -1},
                {"threads", num_threads()}};
  const HeteroDataset ds = load_hetero(dataset, t.split, t.seed, link == nullptr);
  if (homogeneous) o.split = 0;  // the split chosen above is the only one
  std::string all = args.fanout;
  if (all.empty()) {  // as node training: 10 per layer
    for (int64_t l = 0; l < o.model.layers; ++l) all += l ? ",10" : "10";
  }
  o.sampler = parse_hetero_fanouts(ds, all, hetero.fanout_rel, o.model.layers);
  if (link == nullptr) {
    run_hetero(ds, o);
    return;
  }
  o.evaluate = command.count("--no-eval") == 0;
  run_hetero_link(ds, o, hetero_link_options(hetero, *link, homogeneous));
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
  HeteroLinkOptions link = hetero_link_options_from_json(meta.at("link"), where);
  const HeteroLinkTarget target = find_link_target(ds, link.relation, ds.source);
  link.split.seed = seed;
  const HeteroLinkSplit split = random_hetero_link_split(ds, target, link.split);
  const HeteroModelConfig config = HeteroModelConfig::from_json(meta.at("model"), where);
  const HeteroModelConfig given = HeteroModelConfig::for_dataset(ds);
  DGNN_CHECK(config.relations == given.relations, where,
             ": the checkpoint was trained on other node types or relations than ", ds.source,
             "'s; pass the dataset it was trained on");
  HeteroLinkModel model(config, link.link.decoder, link.link.decoder_layers);
  load_checkpoint(dir, model, nullptr);
  const LinkEvalResult r = evaluate_hetero_links(
      model, split.graph, target, checkpoint_inputs(meta, dir, ds), split.split, link.link.hits_k);
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

bool resumes_hetero(const std::string& dir) {
  if (!has_training_state(dir)) return false;
  const std::string task = read_training_state(dir).value("task", "");
  return task == "hetero" || task == "hetero_link";
}

void resume_hetero_command(const CLI::App& command, const std::string& dir, int64_t epochs,
                           const std::string& metrics) {
  refuse_ranks();
  for (const CLI::Option* option : command.get_options()) {
    const std::string name = option->get_name();
    const bool allowed =
        name == "--resume" || name == "--epochs" || name == "--threads" || name == "--metrics";
    DGNN_CHECK(option->count() == 0 || allowed, name,
               ": a resumed heterogeneous run takes its options from ", dir,
               "; give only --resume (and --epochs to train further, --metrics to log elsewhere)");
  }
  const nlohmann::json state = read_training_state(dir);
  const std::string where = training_state_path(dir);
  HeteroTrainOptions o = hetero_options_from_json(state.at("options"), where);
  o.resume_dir = dir;
  o.run_info = state.at("run");
  if (command.count("--epochs") != 0) o.epochs = epochs;
  if (command.count("--metrics") != 0) o.metrics_path = metrics;
  // The thread count orders floating-point sums: the stored one, unless given again.
  if (command.count("--threads") == 0) configure_threads(o.run_info.value("threads", 0));
  const int64_t split = o.run_info.value("homogeneous_split", int64_t{-1});
  const bool link = state.value("task", "") == "hetero_link";
  const HeteroDataset ds = load_hetero(o.run_info.value("dataset", std::string()),
                                       std::max<int64_t>(0, split), o.seed, !link);
  if (link) {
    run_hetero_link(ds, o, hetero_link_options_from_json(state.at("link"), where));
  } else {
    run_hetero(ds, o);
  }
}

}  // namespace directgnn::cli
