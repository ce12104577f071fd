// `directgnn train` on a heterogeneous dataset: a heterogeneous dataset directory
// (io/hetero_dir.h) or `mag:SCALE`, the ogbn-mag-shaped generator in memory
// (graph/mag_generator.h). Trains RGCN or heterogeneous SAGE (train/hetero_trainer.h).
#include <cstdio>
#include <iostream>
#include <string>

#include "directgnn/error.h"
#include "graph/mag_generator.h"
#include "io/hetero_dir.h"
#include "loader/options.h"
#include "options.h"
#include "train/hetero_trainer.h"

namespace directgnn::cli {
namespace {

// Flags of homogeneous training that this path does not take yet: refused, never ignored.
constexpr const char* kNotYet[] = {"--device",       "--features",
                                   "--gather",       "--sampler",
                                   "--graph",        "--norm",
                                   "--residual",     "--heads",
                                   "--attn-dropout", "--disk-io",
                                   "--resume",       "--checkpoint-every",
                                   "--task",         "--weighted-sampling",
                                   "--optimizer",    "--feature-cache-gib",
                                   "--disk-direct"};

bool is_mag_spec(const std::string& dataset) { return dataset.rfind("mag:", 0) == 0; }

HeteroDataset load_hetero(const std::string& dataset, uint64_t seed) {
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

}  // namespace

bool is_hetero_dataset(const std::string& dataset) {
  return !dataset.empty() && (is_mag_spec(dataset) || is_hetero_dir(dataset));
}

void train_hetero_command(const CLI::App& command, const std::string& dataset,
                          const TrainingArgs& args, const HeteroArgs& hetero) {
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
  o.loader.prefetch = parse_prefetch(args.prefetch).value_or(1);
  o.loader.workers = t.loader.workers;
  const HeteroDataset ds = load_hetero(dataset, t.seed);
  std::string all = args.fanout;
  if (all.empty() && hetero.fanout_rel.empty()) {
    for (int64_t l = 0; l < o.model.layers; ++l) all += l ? ",10" : "10";
  }
  o.sampler = parse_hetero_fanouts(ds, all, hetero.fanout_rel, o.model.layers);
  std::printf("dataset %s: %s; %zu relations, %lld edges; target %s, %lld classes\n",
              ds.name.c_str(), type_summary(ds).c_str(), ds.relations.size(),
              static_cast<long long>(ds.num_edges()), ds.target().name.c_str(),
              static_cast<long long>(ds.num_classes));
  std::printf(
      "model %s, %lld layers, hidden %lld%s; fan-outs %s; batch %lld\n",
      hetero_model_kind_name(o.model.kind), static_cast<long long>(o.model.layers),
      static_cast<long long>(o.model.hidden),
      o.model.num_bases > 0 ? (", " + std::to_string(o.model.num_bases) + " bases").c_str() : "",
      hetero_fanout_text(ds, o.sampler).c_str(), static_cast<long long>(o.loader.batch_size));
  std::fflush(stdout);
  const HeteroTrainReport r = train_hetero(ds, o, std::cout);
  std::printf("best epoch %lld: val %.4f, test %.4f; %.2f s per epoch, %.2f s per evaluation\n",
              static_cast<long long>(r.best_epoch), r.best_val_acc, r.test_acc, r.epoch_time_s,
              r.eval_s);
}

}  // namespace directgnn::cli
