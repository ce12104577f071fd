// `directgnn train` on a heterogeneous dataset: a heterogeneous dataset directory
// (io/hetero_dir.h) or `mag:SCALE`, the ogbn-mag-shaped generator in memory
// (graph/mag_generator.h). Trains RGCN or heterogeneous SAGE (train/hetero_trainer.h).
#include <ATen/ATen.h>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "core/atomic_file.h"
#include "core/threads.h"
#include "directgnn/error.h"
#include "feature/embedding_table.h"
#include "graph/mag_generator.h"
#include "graph/node_order.h"
#include "graph/splits.h"
#include "io/hetero_dir.h"
#include "io/npy.h"
#include "loader/options.h"
#include "options.h"
#include "train/checkpoint.h"
#include "train/embed.h"
#include "train/hetero_link_trainer.h"
#include "train/hetero_trainer.h"
#include "train/metrics.h"

namespace directgnn::cli {
namespace {

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
// `labels` false leaves a homogeneous dataset's labels and split out (link prediction);
// `keep_self_loops` applies to an imported .npz (a heterogeneous dataset keeps its relations
// as stored); `part` of `parts` loads a partitioned directory's part of each table stored by
// part (load_hetero_dir).
HeteroDataset load_hetero(const std::string& dataset, int64_t split_index, uint64_t seed,
                          bool labels = true, bool keep_self_loops = false, int64_t part = -1,
                          int64_t parts = 0) {
  if (!is_hetero_dataset(dataset)) {
    return as_featureless_hetero(dataset_or_default(dataset, import_options(keep_self_loops)),
                                 split_index, seed, labels);
  }
  DGNN_CHECK(!keep_self_loops, "--keep-self-loops applies when importing an .npz file; ", dataset,
             " is a heterogeneous dataset, whose relations are used as stored; leave it out");
  if (!is_mag_spec(dataset)) return load_hetero_dir(dataset, part, parts);
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

// The dataset a heterogeneous checkpoint was trained on, or `dataset_arg`: a homogeneous one
// with its labels and split for node classification, without them for link prediction.
HeteroDataset checkpoint_dataset(RunKind kind, const nlohmann::json& meta,
                                 const std::string& dataset_arg) {
  const nlohmann::json run = meta.value("run", nlohmann::json::object());
  const std::string dataset =
      dataset_arg.empty() ? run.value("dataset", std::string()) : dataset_arg;
  const uint64_t seed = meta.value("seed", uint64_t{0});
  const bool loops = run.value("keep_self_loops", false) && !is_hetero_dataset(dataset);
  if (kind == RunKind::kHeteroLink) return load_hetero(dataset, 0, seed, false, loops);
  return load_hetero(dataset, std::max<int64_t>(0, run.value("homogeneous_split", int64_t{-1})),
                     seed, true, loops);
}

// The checkpoint's model configuration, checked against `ds` (its classes too, for `classes`).
HeteroModelConfig checked_config(const nlohmann::json& meta, const std::string& dir,
                                 const HeteroDataset& ds, bool classes) {
  const std::string where = dir + "/checkpoint.pt";
  HeteroModelConfig config = HeteroModelConfig::from_json(meta.at("model"), where);
  const HeteroModelConfig given = HeteroModelConfig::for_dataset(ds);
  DGNN_CHECK(
      config.relations == given.relations && (!classes || config.num_classes == given.num_classes),
      where, ": the checkpoint was trained on other node types, relations",
      classes ? " or classes" : "", " than ", ds.source, "'s; pass the dataset it was trained on");
  return config;
}

// A heterogeneous link checkpoint's model, loaded, with its relation and split rebuilt from
// the seed as training made them.
struct HeteroLinkCheckpoint {
  LinkOptions link;
  HeteroLinkTarget target;
  HeteroLinkSplit split;
  std::shared_ptr<HeteroLinkModel> model;
};

HeteroLinkCheckpoint load_hetero_link_checkpoint(const nlohmann::json& meta, const std::string& dir,
                                                 const HeteroDataset& ds) {
  HeteroLinkCheckpoint c;
  c.link = checkpoint_options(meta, RunKind::kHeteroLink, dir + "/checkpoint.pt").link;
  c.link.split.seed = meta.value("seed", uint64_t{0});
  c.target = find_link_target(ds, c.link.relation, ds.source);
  c.split = random_hetero_link_split(ds, c.target, c.link.split);
  c.model = std::make_shared<HeteroLinkModel>(checked_config(meta, dir, ds, false), c.link.decoder,
                                              c.link.decoder_layers);
  load_checkpoint(dir, *c.model, nullptr);
  return c;
}

std::string type_names(const HeteroDataset& ds, const std::vector<int>& types) {
  std::string out;
  for (const int t : types) {
    out += (out.empty() ? "" : ", ") + ds.node_types[static_cast<size_t>(t)].name;
  }
  return out;
}

}  // namespace

bool is_hetero_dataset(const std::string& dataset) {
  return !dataset.empty() && (is_mag_spec(dataset) || is_hetero_dir(dataset));
}

void train_hetero_command(RunKind kind, const TrainTarget& target, TrainOptions o) {
  const bool homogeneous = !is_hetero_dataset(target.dataset);
  o.run_info["homogeneous_split"] = homogeneous ? o.split : -1;
  // A rank of a run that may shard the tables loads its part's rows of those stored by part.
  const bool part = o.group != nullptr && o.shard_features != FeatureSharding::kOff;
  const HeteroDataset ds =
      load_hetero(target.dataset, o.split, o.seed, kind == RunKind::kHetero, target.keep_self_loops,
                  part ? o.group->rank() : -1, part ? o.group->size() : 0);
  if (homogeneous) o.split = 0;  // the split chosen above is the only one
  if (kind == RunKind::kHetero) {
    train_hetero(ds, o, std::cout);
    return;
  }
  if (o.link.relation.empty() && homogeneous) o.link.relation = "node,to,node";
  DGNN_CHECK(!o.link.relation.empty(),
             "--task link on a heterogeneous dataset needs --target-relation SRC,REL,DST: the "
             "relation whose edges are predicted");
  train_hetero_links(ds, o, std::cout);
}

EvalScore eval_hetero_command(const nlohmann::json& meta, const std::string& dir,
                              const std::string& dataset_arg) {
  const HeteroDataset ds = checkpoint_dataset(RunKind::kHetero, meta, dataset_arg);
  HeteroModel model(checked_config(meta, dir, ds, true));
  load_checkpoint(dir, model, nullptr);
  const std::vector<at::Tensor> inputs = checkpoint_inputs(meta, dir, ds);
  // A homogeneous dataset's split was chosen when it was loaded (its only split now).
  const bool homogeneous =
      meta.value("run", nlohmann::json::object()).value("homogeneous_split", int64_t{-1}) >= 0;
  const Split& s = ds.splits.at(homogeneous ? 0 : meta.value("split", size_t{0}));
  const at::Tensor logits = model.infer(ds, inputs);
  const double val = accuracy(logits, ds.labels, s.val), test = accuracy(logits, ds.labels, s.test);
  const int64_t epoch = meta.value("epoch", int64_t{-1});
  std::printf("Checkpoint epoch %lld | Val Acc %.4f | Test Acc %.4f\n",
              static_cast<long long>(epoch), val, test);
  return {{{"kind", "hetero"},
           {"epoch", epoch},
           {"val", {{"acc", val}}},
           {"test", {{"acc", test}}},
           {"metric", "acc"},
           {"recorded", meta.value("test_acc", nlohmann::json())}},
          "accuracy"};
}

EvalScore eval_hetero_link_command(const nlohmann::json& meta, const std::string& dir,
                                   const std::string& dataset_arg) {
  const HeteroDataset ds = checkpoint_dataset(RunKind::kHeteroLink, meta, dataset_arg);
  const HeteroLinkCheckpoint c = load_hetero_link_checkpoint(meta, dir, ds);
  const int64_t hits_k = c.link.hits_k;
  const LinkEvalResult r = evaluate_hetero_links(
      *c.model, c.split.graph, c.target, checkpoint_inputs(meta, dir, ds), c.split.split, hits_k);
  const std::string metric = primary_link_metric(c.split.split.negatives);
  const int64_t epoch = meta.value("epoch", int64_t{-1});
  const std::string relation = ds.relations[c.target.relation].key();
  std::printf("Checkpoint epoch %lld | %s%s%s\n", static_cast<long long>(epoch), relation.c_str(),
              link_metrics_text("Val", r.val, hits_k).c_str(),
              link_metrics_text("Test", r.test, hits_k).c_str());
  const nlohmann::json recorded = meta.value("test", nlohmann::json::object());
  return {{{"kind", "hetero_link"},
           {"epoch", epoch},
           {"relation", relation},
           {"val", metrics_json(r.val)},
           {"test", metrics_json(r.test)},
           {"metric", metric},
           {"recorded", recorded.value(metric, nlohmann::json())}},
          metric};
}

namespace {

// The last layer's rows of every node of the types a heterogeneous checkpoint's model emits (a
// link model over its split's message-passing graph, as its test scores were computed).
std::vector<at::Tensor> hetero_outputs(RunKind kind, const nlohmann::json& meta,
                                       const std::string& dir, const HeteroDataset& ds) {
  const std::vector<at::Tensor> inputs = checkpoint_inputs(meta, dir, ds);
  if (kind == RunKind::kHeteroLink) {
    const HeteroLinkCheckpoint c = load_hetero_link_checkpoint(meta, dir, ds);
    return c.model->encoder().infer_outputs(c.split.graph, inputs);
  }
  HeteroModel model(checked_config(meta, dir, ds, true));
  load_checkpoint(dir, model, nullptr);
  return model.infer_outputs(ds, inputs);
}

}  // namespace

void embed_hetero_command(RunKind kind, const nlohmann::json& meta, const HeteroEmbedArgs& a) {
  const HeteroDataset ds = checkpoint_dataset(kind, meta, a.dataset);
  const std::vector<at::Tensor> outputs = hetero_outputs(kind, meta, a.checkpoint, ds);
  std::vector<int> types;
  for (int t = 0; t < static_cast<int>(outputs.size()); ++t) {
    if (outputs[static_cast<size_t>(t)].defined()) types.push_back(t);
  }
  if (!a.type.empty()) {
    const int t = ds.type_index(a.type, "--type");
    DGNN_CHECK(outputs[static_cast<size_t>(t)].defined(), "--type ", a.type,
               ": the model's last layer emits no rows of this type; it emits ",
               type_names(ds, types));
    types = {t};
  }
  std::optional<TempDir> dir;  // every type: OUT/TYPE.npy, written together
  if (a.type.empty()) dir.emplace(a.out);
  for (const int t : types) {
    const NodeType& type = ds.node_types[static_cast<size_t>(t)];
    const std::string file = dir ? dir->path() + "/" + type.name + ".npy" : a.out;
    // A partitioned dataset's rows go back to the original ids: row o is original node o's.
    const at::Tensor& rows = outputs[static_cast<size_t>(t)];
    const at::Tensor out =
        type.node_ids.defined() ? rows.index_select(0, inverse_order(type.node_ids)) : rows;
    write_embedding_rows(out, a.dtype, file, true);
    std::cout << "Wrote " << (dir ? a.out + "/" + type.name + ".npy" : a.out) << ": " << out.size(0)
              << " x " << out.size(1) << " (node type " << type.name
              << (type.node_ids.defined() ? ", rows by original node id" : "") << ")\n";
  }
  if (dir) dir->commit();
}

}  // namespace directgnn::cli
