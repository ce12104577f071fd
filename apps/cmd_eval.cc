#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "directgnn/error.h"
#include "graph/splits.h"
#include "options.h"
#include "train/checkpoint.h"
#include "train/evaluate.h"
#include "train/link_trainer.h"

namespace directgnn::cli {
namespace {

// A link checkpoint: the split it was trained on (its dataset's, or the seeded random one),
// the metrics recomputed as training computed them.
EvalScore eval_link(const nlohmann::json& meta, const std::string& dir, const std::string& dataset,
                    bool keep_self_loops) {
  const Dataset ds = dataset_or_default(dataset, import_options(keep_self_loops));
  const LinkCheckpoint c = load_link_checkpoint(dir, meta, ds);
  const ChosenLinkSplit& split = c.split;
  const LinkEvalResult r =
      evaluate_link_model(*c.model, ds.features, split.split, c.graphs, c.link.hits_k);
  const int64_t epoch = meta.value("epoch", int64_t{-1});
  std::printf("Link split: %s\nCheckpoint epoch %lld%s%s\n", split.description.c_str(),
              static_cast<long long>(epoch), link_metrics_text("Val", r.val, c.link.hits_k).c_str(),
              link_metrics_text("Test", r.test, c.link.hits_k).c_str());
  const std::string metric = meta.value("primary_metric", std::string("roc_auc"));
  const nlohmann::json recorded = meta.value("test", nlohmann::json::object());
  return {{{"kind", "link"},
           {"epoch", epoch},
           {"split", split.description},
           {"val", metrics_json(r.val)},
           {"test", metrics_json(r.test)},
           {"metric", metric},
           {"recorded", recorded.value(metric, nlohmann::json())}},
          metric};
}

// A node classification checkpoint on its split.
EvalScore eval_node(const nlohmann::json& meta, const std::string& dir, const std::string& dataset,
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
  const int64_t epoch = meta.value("epoch", int64_t{-1});
  std::printf("Split: %s\nCheckpoint epoch %lld | Val Acc %.4f | Test Acc %.4f",
              split.description.c_str(), static_cast<long long>(epoch), r.val_acc, r.test_acc);
  nlohmann::json test = {{"acc", r.test_acc}};
  if (ds.num_classes == 2) {
    std::printf(" | Test ROC-AUC %.4f", r.test_roc_auc);
    test["roc_auc"] = r.test_roc_auc;
  }
  std::printf("\n");
  return {{{"kind", "node"},
           {"epoch", epoch},
           {"split", split.description},
           {"val", {{"acc", r.val_acc}}},
           {"test", test},
           {"metric", "acc"},
           {"recorded", meta.value("test_acc", nlohmann::json())}},
          "accuracy"};
}

EvalScore eval_checkpoint(const std::string& dir, const std::string& dataset,
                          bool keep_self_loops) {
  const nlohmann::json meta = read_checkpoint_meta(dir);
  switch (checkpoint_kind(meta)) {
    case RunKind::kHetero:
      return eval_hetero_command(meta, dir, dataset);
    case RunKind::kHeteroLink:
      return eval_hetero_link_command(meta, dir, dataset);
    case RunKind::kLink:
      return eval_link(meta, dir, dataset, keep_self_loops);
    case RunKind::kNode:
      break;
  }
  return eval_node(meta, dir, dataset, keep_self_loops);
}

}  // namespace

void finish_eval(EvalScore score, const std::string& json_path) {
  nlohmann::json& r = score.record;
  const std::string& metric = r.at("metric").get_ref<const std::string&>();
  const nlohmann::json& recorded = r.at("recorded");
  const nlohmann::json now = r.at("test").value(metric, nlohmann::json());
  if (!recorded.is_number()) {
    std::printf("Training recorded no test %s for this checkpoint (it ran without evaluation).\n",
                score.metric_words.c_str());
    r["matches"] = nullptr;
  } else {
    r["matches"] = now.is_number() && std::abs(recorded.get<double>() - now.get<double>()) < 1e-9;
    if (r["matches"].get<bool>()) {
      std::printf("Matches the test %s recorded at training time.\n", score.metric_words.c_str());
    } else {
      std::printf("Training recorded test %s %.4f for this checkpoint.\n",
                  score.metric_words.c_str(), recorded.get<double>());
    }
  }
  if (!json_path.empty()) write_file_atomic(json_path, r.dump(2) + "\n");
}

void register_eval(CLI::App& app) {
  struct Args {
    std::string checkpoint, dataset, json;
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
  c->add_option("--json", args->json,
                "also write the metrics, the recorded value and whether they match as JSON here");
  c->callback([args] {
    finish_eval(eval_checkpoint(args->checkpoint, args->dataset, args->keep_self_loops),
                args->json);
  });
}

}  // namespace directgnn::cli
