// End-to-end: `directgnn train --task link` on Cora's random link split.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "e2e/e2e_util.h"
#include "io/npy.h"
#include "test_util.h"

namespace directgnn {
namespace {

using e2e::CommandResult;
using e2e::final_record;
using e2e::run;
using testing::TempDirectory;

TEST(LinkTraining, CoraWithAnMlpDecoderScoresWellAboveChance) {
  REQUIRE_DATASET(cora, "cora.npz");
  TempDirectory dir;
  const CommandResult r =
      run("train --task link --dataset " + cora +
          " --epochs 20 --eval-every 5 --fan-out 10,10 --batch-size 256 --decoder mlp "
          "--threads 2 --metrics " +
          dir.file("m.jsonl") + " --checkpoint " + dir.file("ck"));
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* needle : {"Link split: random link split 85/5/10 (seed 0): 4488 train, 263 "
                             "validation, 527 test edges",
                             "negatives binary x1 (uniform), seed edges excluded",
                             "Epoch 00005 | Loss", "| Test AUC", "Best validation epoch"}) {
    EXPECT_NE(r.output.find(needle), std::string::npos) << needle << "\n" << r.output;
  }
  const nlohmann::json final = final_record(dir.file("m.jsonl"));
  EXPECT_EQ(final["task"], "link");
  EXPECT_EQ(final["primary_metric"], "roc_auc");
  EXPECT_GE(final["test"]["roc_auc"].get<double>(), 0.85) << r.output;
  EXPECT_GE(final["test"]["ap"].get<double>(), 0.85) << r.output;
  // The checkpoint (encoder and decoder) reproduces the recorded test metric.
  const CommandResult e = run("eval --checkpoint " + dir.file("ck") + " --dataset " + cora +
                              " --json " + dir.file("eval.json"));
  ASSERT_EQ(e.status, 0) << e.output;
  EXPECT_NE(e.output.find("Matches the test roc_auc recorded at training time"), std::string::npos)
      << e.output;
  // Named as the epoch line names them, not as JSON; the JSON goes to --json.
  EXPECT_NE(e.output.find(" | Test AUC "), std::string::npos) << e.output;
  EXPECT_EQ(e.output.find("{\""), std::string::npos) << e.output;
  std::ifstream in(dir.file("eval.json"));
  const nlohmann::json scored = nlohmann::json::parse(in);
  EXPECT_EQ(scored["kind"], "link");
  EXPECT_EQ(scored["matches"], true);
  EXPECT_EQ(scored["test"]["roc_auc"], final["test"]["roc_auc"]);
  EXPECT_EQ(scored["recorded"], final["test"]["roc_auc"]);
  // Every node's embedding, float16.
  const CommandResult m = run("embed --checkpoint " + dir.file("ck") + " --dataset " + cora +
                              " --out " + dir.file("emb.npy") + " --dtype float16");
  ASSERT_EQ(m.status, 0) << m.output;
  const at::Tensor emb = load_npy(dir.file("emb.npy"));
  EXPECT_EQ(emb.sizes(), (at::IntArrayRef{2708, 256}));
  EXPECT_EQ(emb.scalar_type(), at::kHalf);
}

TEST(LinkTraining, TripletNegativesPerSourceGiveMrr) {
  REQUIRE_DATASET(cora, "cora.npz");
  TempDirectory dir;
  const CommandResult c = run("convert " + cora + " " + dir.file("cora") +
                              " --link-split 0.85,0.05,0.1 --eval-negatives 50");
  ASSERT_EQ(c.status, 0) << c.output;
  const CommandResult r =
      run("train --task link --dataset " + dir.file("cora") +
          " --epochs 3 --neg-sampling triplet --neg-ratio 3 --neg-dist degree --exact-negatives "
          "--hits-k 10 --use-val-edges --threads 2 --metrics " +
          dir.file("m.jsonl"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("the dataset's link split"), std::string::npos) << r.output;
  const nlohmann::json final = final_record(dir.file("m.jsonl"));
  EXPECT_EQ(final["primary_metric"], "mrr");
  EXPECT_GT(final["test"]["mrr"].get<double>(), 0.0);
  EXPECT_TRUE(final["test"].contains("hits"));
}

TEST(LinkTraining, WhatIsNotSupportedYetIsRefusedByFlag) {
  REQUIRE_DATASET(cora, "cora.npz");
  TempDirectory dir;
  const std::pair<std::string, std::string> cases[] = {
      {"--checkpoint-every -1", "--checkpoint-every: must not be negative"},
      {"--neg-ratio 0", "--neg-ratio: must be at least 1"},
      {"--hits-k 300", "--hits-k: 300 is not below the 263 shared validation or test"},
      {"--decoder cosine", "--decoder: 'cosine' is not dot"},
      {"--weighted-sampling", "--weighted-sampling: link batches do not use edge weights"},
      {"--sampler gpu --device cpu", "--sampler: "},
      {"--steps-per-epoch -1", "--steps-per-epoch: must be 0"},
      {"--eval-negatives 100",
       "make them with `directgnn convert IN OUT --link-split 0.85,0.05,0.1 --eval-negatives "
       "100`, train on OUT and leave --eval-negatives out"},
      {"--link-split 0.8,0.1,0.1", "`directgnn convert IN OUT --link-split 0.8,0.1,0.1`"},
  };
  for (const auto& [flags, message] : cases) {
    const CommandResult r = run("train --task link --dataset " + cora + " " + flags);
    EXPECT_NE(r.status, 0) << flags;
    EXPECT_NE(r.output.find(message), std::string::npos) << flags << "\n" << r.output;
  }
}

// The parameter digest and test metric of a run's final record.
std::pair<std::string, double> outcome(const std::string& metrics) {
  const nlohmann::json final = final_record(metrics);
  return {final["param_digest"].get<std::string>(), final["test"]["roc_auc"].get<double>()};
}

TEST(LinkTraining, DiskFeaturesAndPrefetchingTrainTheSameModel) {
  REQUIRE_DATASET(cora, "cora.npz");
  TempDirectory dir;
  const CommandResult c = run("convert " + cora + " " + dir.file("cora"));
  ASSERT_EQ(c.status, 0) << c.output;
  const std::string base = "train --task link --dataset " + dir.file("cora") +
                           " --epochs 2 --hidden 32 --batch-size 512 --threads 1 --metrics ";
  const CommandResult host = run(base + dir.file("host.jsonl") + " --prefetch 0");
  ASSERT_EQ(host.status, 0) << host.output;
  const CommandResult disk = run(base + dir.file("disk.jsonl") + " --features disk --prefetch 2");
  ASSERT_EQ(disk.status, 0) << disk.output;
  EXPECT_NE(disk.output.find("prefetch 2"), std::string::npos) << disk.output;
  EXPECT_NE(disk.output.find("mode disk:"), std::string::npos) << disk.output;
  EXPECT_NE(disk.output.find("| Disk: rows"), std::string::npos) << disk.output;
  // The same batches in the same order, whoever reads the rows and whenever: the same model.
  EXPECT_EQ(outcome(dir.file("host.jsonl")), outcome(dir.file("disk.jsonl")));
  const nlohmann::json final = final_record(dir.file("disk.jsonl"));
  EXPECT_GT(final["disk_bytes_gathered"].get<int64_t>(), 0);
  // A RAM row cache is filled before the first step, as for node runs (it once reported 0.0%
  // hits for link runs): a quarter of Cora's rows serve about 29% of the reads.
  const CommandResult cached = run(base + dir.file("cache.jsonl") +
                                   " --features disk --feature-cache-gib 0.004 --prefetch 2");
  ASSERT_EQ(cached.status, 0) << cached.output;
  EXPECT_EQ(outcome(dir.file("host.jsonl")), outcome(dir.file("cache.jsonl")));
  const std::vector<nlohmann::json> epochs = e2e::read_jsonl(dir.file("cache.jsonl"));
  ASSERT_FALSE(epochs.empty());
  EXPECT_GT(epochs[0]["disk_cache_hit_rate"].get<double>(), 0.1) << cached.output;
  // SIEVE lets missed rows replace cached ones: other reads, the same model.
  const CommandResult sieve =
      run(base + dir.file("sieve.jsonl") +
          " --features disk --feature-cache-gib 0.004 --feature-cache-policy sieve --prefetch 2");
  ASSERT_EQ(sieve.status, 0) << sieve.output;
  EXPECT_NE(sieve.output.find("then kept by sieve"), std::string::npos) << sieve.output;
  EXPECT_EQ(outcome(dir.file("host.jsonl")), outcome(dir.file("sieve.jsonl")));
  const CommandResult none =
      run(base + dir.file("none.jsonl") + " --features disk --feature-cache-policy sieve");
  EXPECT_NE(none.status, 0);
  EXPECT_NE(none.output.find("says how the feature cache keeps its rows, but there is none"),
            std::string::npos)
      << none.output;
}

TEST(LinkTraining, TwoRanksTrainAndTheirMetricsAreOneProcesss) {
  REQUIRE_DATASET(cora, "cora.npz");
  TempDirectory dir;
  const CommandResult r =
      run("launch -n 2 -- train --task link --dataset " + cora +
          " --epochs 10 --eval-every 5 --hidden 64 --fan-out 10,10 --batch-size 128 --threads 1 "
          "--metrics " +
          dir.file("m.jsonl") + " --checkpoint " + dir.file("ck"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("per rank, 2 ranks (gloo)"), std::string::npos) << r.output;
  const nlohmann::json final = final_record(dir.file("m.jsonl"));
  EXPECT_EQ(final["ranks"], 2);
  // 4488 training edges, 2244 per rank: 18 batches of 128.
  EXPECT_EQ(final["steps_per_epoch"], 18);
  EXPECT_GE(final["test"]["roc_auc"].get<double>(), 0.85) << r.output;
  // The ranks each embedded half the nodes; one process scoring the saved model on its own
  // must find the very metrics the ranks recorded.
  const CommandResult e = run("eval --checkpoint " + dir.file("ck") + " --dataset " + cora);
  ASSERT_EQ(e.status, 0) << e.output;
  EXPECT_NE(e.output.find("Matches the test roc_auc recorded at training time"), std::string::npos)
      << e.output;
}

}  // namespace
}  // namespace directgnn
