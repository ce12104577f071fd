#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "directgnn/error.h"
#include "graph/splits.h"
#include "options.h"
#include "train/checkpoint.h"
#include "train/evaluate.h"
#include "train/link_trainer.h"

namespace directgnn::cli {
namespace {

// A link checkpoint: the split it was trained on (its dataset's, or the seeded random one),
// the metrics recomputed as training computed them, and whether they match.
void eval_link(const nlohmann::json& meta, const std::string& dir, const std::string& dataset,
               bool keep_self_loops) {
  const Dataset ds = dataset_or_default(dataset, import_options(keep_self_loops));
  const LinkCheckpoint c = load_link_checkpoint(dir, meta, ds);
  const ChosenLinkSplit& split = c.split;
  const LinkEvalResult r =
      evaluate_link_model(*c.model, ds.features, split.split, c.graphs, c.link.hits_k);
  const nlohmann::json test = metrics_json(r.test);
  std::printf("Link split: %s\nCheckpoint epoch %lld | test %s\n", split.description.c_str(),
              static_cast<long long>(meta.value("epoch", int64_t{-1})), test.dump().c_str());
  const std::string metric = meta.value("primary_metric", std::string("roc_auc"));
  if (!meta.contains("test")) {
    std::printf("Training recorded no metrics for this checkpoint (it ran without evaluation).\n");
    return;
  }
  const double recorded = meta.at("test").value(metric, -1.0);
  const double now = test.value(metric, -2.0);
  if (std::abs(recorded - now) < 1e-9) {
    std::printf("Matches the test %s recorded at training time.\n", metric.c_str());
  } else {
    std::printf("Training recorded test %s %.4f for this checkpoint.\n", metric.c_str(), recorded);
  }
}

// A node classification checkpoint on its split.
void eval_node(const nlohmann::json& meta, const std::string& dir, const std::string& dataset,
               bool keep_self_loops) {
  const std::string where = dir + "/checkpoint.pt";
  const Dataset ds = dataset_or_default(dataset, import_options(keep_self_loops));
  ModelConfig config = ModelConfig::from_json(meta.at("model"), where);
  DGNN_CHECK(ds.feat_dim() == config.in_dim && ds.num_classes == config.num_classes, where,
             ": the checkpoint was trained on ", config.in_dim, " features and ",
             config.num_classes, " classes, but ", ds.source, " has ", ds.feat_dim(), " and ",
             ds.num_classes, "; pass the dataset it was trained on");
  GnnModel model(config);
  load_checkpoint(dir, model, nullptr);
  const ChosenSplit split =
      choose_split(ds, meta.value("split", int64_t{0}), meta.value("seed", uint64_t{0}));
  const EvalResult r = evaluate(model, ds, split.split);
  std::printf("Split: %s\nCheckpoint epoch %lld | Val Acc %.4f | Test Acc %.4f",
              split.description.c_str(), static_cast<long long>(meta.value("epoch", int64_t{-1})),
              r.val_acc, r.test_acc);
  if (ds.num_classes == 2) std::printf(" | Test ROC-AUC %.4f", r.test_roc_auc);
  std::printf("\n");
  const double recorded = meta.value("test_acc", -1.0);
  if (std::abs(recorded - r.test_acc) < 1e-9) {
    std::printf("Matches the test accuracy recorded at training time.\n");
  } else {
    std::printf("Training recorded Test Acc %.4f for this checkpoint.\n", recorded);
  }
}

}  // namespace

void register_eval(CLI::App& app) {
  struct Args {
    std::string checkpoint, dataset;
    bool keep_self_loops = false;
    int threads = 0;
  };
  auto args = std::make_shared<Args>();
  CLI::App* c = app.add_subcommand("eval", "evaluate a checkpoint on its dataset's split");
  c->add_option("--checkpoint", args->checkpoint, "checkpoint directory")->required();
  c->add_option("--dataset", args->dataset,
                "dataset directory or .npz (omit for the built-in synthetic graph)");
  c->add_flag("--keep-self-loops", args->keep_self_loops, "keep self-loops when importing .npz");
  add_threads_option(c, &args->threads);
  c->callback([args] {
    const nlohmann::json meta = read_checkpoint_meta(args->checkpoint);
    switch (checkpoint_kind(meta)) {
      case RunKind::kHetero:
        return eval_hetero_command(meta, args->checkpoint, args->dataset);
      case RunKind::kHeteroLink:
        return eval_hetero_link_command(meta, args->checkpoint, args->dataset);
      case RunKind::kLink:
        return eval_link(meta, args->checkpoint, args->dataset, args->keep_self_loops);
      case RunKind::kNode:
        return eval_node(meta, args->checkpoint, args->dataset, args->keep_self_loops);
    }
  });
}

}  // namespace directgnn::cli
