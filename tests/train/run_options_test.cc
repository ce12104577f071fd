// The table of run options (train/run_options.h): every option of every kind survives JSON,
// values come as a command line or Python give them, bad ones and options of other kinds are
// refused by name, a resumed run's changes are found, and checkpoints of both formats are read.
#include "train/run_options.h"

#include <gtest/gtest.h>

#include "test_util.h"
#include "train/run_state.h"

namespace directgnn {
namespace {

using nlohmann::json;

constexpr RunKind kKinds[] = {RunKind::kNode, RunKind::kLink, RunKind::kHetero,
                              RunKind::kHeteroLink};

TEST(RunOptions, EveryKindsOptionsRoundTripThroughJson) {
  for (const RunKind kind : kKinds) {
    const json defaults = options_json(default_options(kind), kind);
    EXPECT_EQ(defaults.size(), option_names(kind).size()) << run_kind_name(kind);
    TrainOptions back = default_options(kind);
    back.lr = 1;  // overwritten by the JSON
    apply_options_json(defaults, back, kind, "state.json");
    EXPECT_EQ(options_json(back, kind), defaults) << run_kind_name(kind);
  }
  EXPECT_EQ(parse_run_kind("hetero_link"), RunKind::kHeteroLink);
  EXPECT_EQ(run_kind(true, false), RunKind::kLink);
  EXPECT_ERROR_CONTAINS(parse_run_kind("graph"), "not a kind of run");
}

TEST(RunOptions, ValuesComeAsText_NumbersOrBooleans) {
  const TrainOptions o = make_options(RunKind::kLink, {{"lr", "0.01"},
                                                       {"hidden", 32},
                                                       {"fan_out", "15,-1"},
                                                       {"keep_seed_edges", true},
                                                       {"no_eval", "true"},
                                                       {"prefetch", "3"},
                                                       {"device", "cpu"},
                                                       {"decoder", "mlp"}});
  EXPECT_EQ(o.lr, 0.01);
  EXPECT_EQ(o.model.hidden, 32);
  EXPECT_EQ(o.loader.fanouts, (std::vector<int64_t>{15, -1}));
  EXPECT_FALSE(o.link.sampling.exclude_seed_edges);
  EXPECT_FALSE(o.evaluate);
  EXPECT_EQ(o.loader.prefetch, 3);
  EXPECT_EQ(o.link.decoder, DecoderKind::kMlp);
  const TrainOptions h =
      make_options(RunKind::kHeteroLink, {{"model", "sage"},
                                          {"fan_out_rel", "paper,cites,paper=3,2;rev_writes=1,1"},
                                          {"link_split", "0.8,0.1,0.1"},
                                          {"target_relation", "writes"}});
  EXPECT_EQ(h.hetero.model, HeteroModelKind::kHsage) << "sage is hsage on a heterogeneous graph";
  ASSERT_EQ(h.loader.relation_fanouts.size(), 2u);
  EXPECT_EQ(h.loader.relation_fanouts[1].relation, "rev_writes");
  EXPECT_EQ(h.loader.relation_fanouts[1].fanouts, (std::vector<int64_t>{1, 1}));
  EXPECT_DOUBLE_EQ(h.link.split.val, 0.1);
  EXPECT_EQ(options_json(h, RunKind::kHeteroLink)["link_split"], "0.8,0.1,0.1");
}

TEST(RunOptions, BadValuesAndOtherKindsOptionsAreRefusedByName) {
  TrainOptions o;
  for (const auto& [name, value, needle] : std::vector<std::tuple<std::string, json, std::string>>{
           {"lr", "fast", "'fast' is not a number"},
           {"hidden", "1.5", "'1.5' is not an integer"},
           {"model", "gcn2", "gcn2"},
           {"fan_out", "10,0", "each fan-out must be positive"},
           {"residual", "maybe", "not true or false"},
           {"decoder", "dot", "applies to link prediction only, not to node runs"},
           {"bases", 2, "applies to heterogeneous graphs"},
           {"nothing", 1, "is not an option"}}) {
    try {
      set_option(o, RunKind::kNode, name, value);
      ADD_FAILURE() << name << " accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(e.parameter(), name);
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  }
  EXPECT_ERROR_CONTAINS(apply_options_json({{"lr", "x"}}, o, RunKind::kNode, "ck/state.pt"),
                        "ck/state.pt: option lr holds a bad value");
}

TEST(RunOptions, AResumedRunsChangesAreTheKeptOptionsGivenOtherwise) {
  const TrainOptions saved = make_options(RunKind::kNode, {{"lr", 0.01}, {"epochs", 5}});
  const TrainOptions given =
      make_options(RunKind::kNode, {{"lr", 0.02}, {"epochs", 9}, {"prefetch", 4}});
  const std::vector<ChangedOption> changed =
      changed_options(options_json(saved, RunKind::kNode), options_json(given, RunKind::kNode),
                      RunKind::kNode, {"lr", "epochs", "prefetch"});
  ASSERT_EQ(changed.size(), 1u) << "epochs extends the run, prefetch changes no result";
  EXPECT_EQ(changed[0].name, "lr");
  EXPECT_EQ(changed[0].saved, 0.01);
  EXPECT_EQ(changed[0].given, 0.02);
  EXPECT_EQ(on_resume("epochs"), OnResume::kExtend);
  EXPECT_EQ(on_resume("prefetch"), OnResume::kGivenNow);
}

TEST(RunOptions, CheckpointsOfBothFormatsGiveTheirOptions) {
  TrainOptions o = make_options(
      RunKind::kHeteroLink,
      {{"target_relation", "writes"}, {"decoder", "mlp"}, {"eval_negatives", 20}, {"seed", 3}});
  const json now = {{"options", options_json(o, RunKind::kHeteroLink)}};
  EXPECT_EQ(options_json(checkpoint_options(now, RunKind::kHeteroLink, "ck"), RunKind::kHeteroLink),
            now["options"]);
  // A checkpoint of the format before: seed and split at the top, the link options in "link"
  // by the names of then.
  const json old = {{"seed", 3},
                    {"link",
                     {{"decoder", "mlp"},
                      {"exclude_seed_edges", false},
                      {"hits_k", 20},
                      {"relation", "writes"},
                      {"split", {{"val", 0.1}, {"test", 0.2}, {"neg_per_source", 20}}}}}};
  const TrainOptions back = checkpoint_options(old, RunKind::kHeteroLink, "ck");
  EXPECT_EQ(back.seed, 3u);
  EXPECT_EQ(back.link.decoder, DecoderKind::kMlp);
  EXPECT_FALSE(back.link.sampling.exclude_seed_edges);
  EXPECT_EQ(back.link.hits_k, 20);
  EXPECT_EQ(back.link.relation, "writes");
  EXPECT_DOUBLE_EQ(back.link.split.test, 0.2);
  EXPECT_EQ(back.link.split.neg_per_source, 20);
}

TEST(TrainingState, RoundTripsAndRefusesOtherFormatsByVersion) {
  TrainingState s;
  s.task = "link";
  s.options = options_json(default_options(RunKind::kLink), RunKind::kLink);
  s.run = {{"dataset", "/data/cora"}};
  s.ranks = 2;
  s.num_nodes = 2708;
  s.steps_per_epoch = 7;
  s.epoch = 3;
  s.progress.next_step = 4;
  s.progress.loss_sum = 1.25;
  s.totals.best_epoch = 2;
  s.totals.best_value = 0.875;
  s.totals.best_metrics = {{"val", {{"roc_auc", 0.875}}}};
  s.extras = {{"embeddings_dir", "state-embeddings-3"}};
  const json j = s.to_json();
  const TrainingState back = TrainingState::from_json(j, "ck/state.pt");
  EXPECT_EQ(back.to_json(), j);
  json old = j;
  old.erase("version");  // format 1 had none
  EXPECT_ERROR_CONTAINS(TrainingState::from_json(old, "ck/state.pt"),
                        "holds a training state of format 1, written by an earlier directgnn");
  json later = j;
  later["version"] = kTrainingStateVersion + 1;
  EXPECT_ERROR_CONTAINS(TrainingState::from_json(later, "ck/state.pt"), "a later directgnn");
  EXPECT_ERROR_CONTAINS(TrainingState::from_json(json{{"a", 1}}, "x"),
                        "is not a directgnn training state");
  json partial = j;
  partial.erase("totals");
  EXPECT_ERROR_CONTAINS(TrainingState::from_json(partial, "ck/state.pt"), "incomplete");
}

}  // namespace
}  // namespace directgnn
