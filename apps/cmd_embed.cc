#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/signals.h"
#include "directgnn/error.h"
#include "graph/splits.h"
#include "io/dataset_reorder.h"
#include "options.h"
#include "train/checkpoint.h"
#include "train/embed.h"
#include "train/link_trainer.h"

namespace directgnn::cli {
namespace {

struct Args {
  std::string checkpoint, dataset, out, dtype = "float32", type;
  bool keep_self_loops = false;
  int threads = 0;
};

void embed(const Args& a) {
  install_stop_handlers(StopAction::kRemoveTemporaries);
  DGNN_CHECK_ARG(a.dtype == "float32" || a.dtype == "float16", "dtype", "'", a.dtype,
                 "' is not float32 or float16");
  const nlohmann::json meta = read_checkpoint_meta(a.checkpoint);
  const RunKind kind = checkpoint_kind(meta);
  const at::ScalarType dtype = a.dtype == "float16" ? at::kHalf : at::kFloat;
  if (is_hetero(kind)) {
    return embed_hetero_command(kind, meta, {a.checkpoint, a.dataset, a.type, a.out, dtype});
  }
  DGNN_CHECK(a.type.empty(), "--type ", a.type,
             ": applies to heterogeneous checkpoints; a homogeneous one has one node type");
  const std::string where = a.checkpoint + "/checkpoint.pt";
  const ModelConfig config = ModelConfig::from_json(meta.at("model"), where);
  const Dataset ds = dataset_or_default(a.dataset, import_options(a.keep_self_loops));
  DGNN_CHECK(ds.feat_dim() == config.in_dim, where, ": the checkpoint was trained on ",
             config.in_dim, " features, but ", ds.source, " has ", ds.feat_dim(),
             "; pass the dataset it was trained on");
  EmbedOptions o;
  o.dtype = dtype;
  // A renumbered dataset's embeddings are written by original node id.
  if (ds.node_ids.defined()) o.stored_of = stored_of_original(ds);
  if (kind == RunKind::kNode) {
    GnnModel model(config);
    load_checkpoint(a.checkpoint, model, nullptr);
    write_embeddings(model, ds.graph, ds.features, a.out, o);
  } else {
    // A link model embeds over the graph its test scores passed messages on.
    const LinkCheckpoint c = load_link_checkpoint(a.checkpoint, meta, ds);
    const LinkGraphs& g = c.graphs;
    write_embeddings(c.model->encoder(), g.test_graph ? *g.test_graph : g.graph, ds.features, a.out,
                     o);
  }
  std::cout << "Wrote " << a.out << ": " << ds.num_nodes() << " x " << config.num_classes << " "
            << a.dtype << (ds.node_ids.defined() ? ", rows by original node id" : "") << "\n";
}

}  // namespace

void register_embed(CLI::App& app) {
  auto args = std::make_shared<Args>();
  CLI::App* c = app.add_subcommand(
      "embed",
      "write every node's final-layer output (a link model's embeddings) as .npy, per node "
      "type for a heterogeneous model");
  c->add_option("--checkpoint", args->checkpoint, "checkpoint directory")->required();
  c->add_option("--dataset", args->dataset,
                "dataset directory or .npz (omit for the built-in synthetic graph)");
  c->add_option("--out", args->out,
                "the .npy file to write (atomically); for a heterogeneous checkpoint without "
                "--type, a directory of TYPE.npy files")
      ->required();
  c->add_option("--type", args->type,
                "heterogeneous checkpoints: only this node type's rows, written to the file --out");
  c->add_option("--dtype", args->dtype, "float32 or float16")->capture_default_str();
  c->add_flag("--keep-self-loops", args->keep_self_loops, "keep self-loops when importing .npz");
  add_threads_option(c, &args->threads);
  c->callback([args] { embed(*args); });
}

}  // namespace directgnn::cli
