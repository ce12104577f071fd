// End-to-end: link prediction on one relation of a heterogeneous graph from the command line
// (`train --task link --target-relation`): RGCN learns the relation far above chance and above
// an MLP on paper features, `eval` reproduces a checkpoint's test metric from the seed, triplet
// negatives give MRR, a homogeneous graph with learnable embeddings trains through the same
// path, and what this path does not take is refused by flag (stops, resumes and ranks:
// kinds_test.cc).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "e2e/e2e_util.h"
#include "io/hetero_dir.h"
#include "io/npy.h"
#include "test_util.h"

namespace directgnn {
namespace {

using e2e::CommandResult;
using e2e::final_record;
using e2e::run;
using testing::TempDirectory;

// The final metrics record of a link run on mag:0.01's author,writes,paper (or `relation`).
nlohmann::json link_run(const std::string& args, const TempDirectory& dir, const std::string& tag) {
  const std::string metrics = dir.file(tag + ".jsonl");
  const CommandResult r =
      run("train --task link --epochs 2 --hidden 32 --threads 2 --metrics " + metrics + " " + args);
  EXPECT_EQ(r.status, 0) << r.output;
  if (r.status != 0) return nlohmann::json::object();
  return final_record(metrics);
}

TEST(HeteroLink, RgcnLearnsARelationAndEvalReproducesItsCheckpoint) {
  TempDirectory dir;
  const CommandResult g = run("generate mag --scale 0.01 --out " + dir.file("mag"));
  ASSERT_EQ(g.status, 0) << g.output;
  const std::string data = "--dataset " + dir.file("mag");
  const nlohmann::json rgcn = link_run(
      data + " --target-relation author,writes,paper --checkpoint " + dir.file("ck"), dir, "rgcn");
  ASSERT_TRUE(rgcn.contains("test")) << rgcn;
  EXPECT_EQ(rgcn["relation"], "author,writes,paper");
  EXPECT_EQ(rgcn["primary_metric"], "roc_auc");
  // Chance is 0.5; two short epochs reach about 0.73 here.
  EXPECT_GT(rgcn["test"]["roc_auc"].get<double>(), 0.65) << rgcn;
  const CommandResult e = run("eval --checkpoint " + dir.file("ck"));
  ASSERT_EQ(e.status, 0) << e.output;
  EXPECT_NE(e.output.find("Matches the test roc_auc recorded at training time"), std::string::npos)
      << e.output;
  // embed: the encoder's rows of both ends of the relation, every node, in the dataset's ids.
  const CommandResult m = run("embed --checkpoint " + dir.file("ck") + " --type author --out " +
                              dir.file("authors.npy") + " --dtype float16");
  ASSERT_EQ(m.status, 0) << m.output;
  const at::Tensor authors = load_npy(dir.file("authors.npy"));
  EXPECT_EQ(authors.scalar_type(), at::kHalf);
  const HeteroDataset mag = load_hetero_dir(dir.file("mag"));
  EXPECT_EQ(authors.size(0), mag.node_types[mag.type_index("author", "test")].count);
  // Citations within papers: an MLP on paper features does far worse than RGCN.
  const nlohmann::json cites = link_run(data + " --target-relation cites", dir, "cites");
  const nlohmann::json mlp = link_run(data + " --target-relation cites --model mlp", dir, "mlp");
  ASSERT_TRUE(cites.contains("test") && mlp.contains("test"));
  EXPECT_GT(cites["test"]["roc_auc"].get<double>(), mlp["test"]["roc_auc"].get<double>() + 0.1)
      << cites << "\n"
      << mlp;
}

TEST(HeteroLink, TripletNegativesAreRankedByMrr) {
  TempDirectory dir;
  const nlohmann::json r = link_run(
      "--dataset mag:0.01 --target-relation author,writes,paper --neg-sampling triplet "
      "--neg-ratio 3 --eval-negatives 20 --model hsage",
      dir, "triplet");
  ASSERT_TRUE(r.contains("test")) << r;
  EXPECT_EQ(r["primary_metric"], "mrr");
  // Chance: a positive among 20 random negatives has MRR about 0.17.
  EXPECT_GT(r["test"]["mrr"].get<double>(), 0.25) << r;
}

TEST(HeteroLink, AHomogeneousGraphTrainsWithLearnableEmbeddings) {
  TempDirectory dir;
  const nlohmann::json r = link_run("--node-embeddings 16", dir, "embeddings");
  ASSERT_TRUE(r.contains("test")) << r;
  EXPECT_EQ(r["relation"], "node,to,node");
  EXPECT_GT(r["steps_per_epoch"].get<int64_t>(), 0);
}

TEST(HeteroLink, SameSeedSameModelWhateverThePrefetch) {
  TempDirectory dir;
  const std::string args = "--dataset mag:0.01 --target-relation cites ";
  const nlohmann::json inline_batches = link_run(args + "--prefetch 0", dir, "p0");
  const nlohmann::json prefetched = link_run(args + "--prefetch 2 --sampler-workers 2", dir, "p2");
  ASSERT_TRUE(inline_batches.contains("param_digest") && prefetched.contains("param_digest"));
  EXPECT_EQ(inline_batches["param_digest"], prefetched["param_digest"]);
}

TEST(HeteroLink, WhatIsNotSupportedIsRefusedByFlag) {
  const std::string mag = "--dataset mag:0.005 --epochs 1 ";
  const std::pair<std::string, std::string> cases[] = {
      {mag + "--task link", "needs --target-relation SRC,REL,DST"},
      {mag + "--task link --target-relation author,likes,paper",
       "no relation 'author,likes,paper'"},
      {mag + "--task link --target-relation cites --use-val-edges",
       "--use-val-edges is not offered"},
      {mag + "--task link --target-relation cites --link-split 0.5,0.5", "TRAIN,VAL,TEST"},
      {mag + "--task link --target-relation cites --neg-ratio 0",
       "--neg-ratio: must be at least 1"},
      {mag + "--task link --target-relation cites --link-split 1,0,0",
       "--link-split: leaves no validation or test edges"},
      {mag + "--target-relation cites", "is a link prediction option; add --task link"},
      {"--task link --target-relation cites --epochs 1", "--target-relation applies to "},
  };
  for (const auto& [args, needle] : cases) {
    const CommandResult r = run("train " + args);
    EXPECT_NE(r.status, 0) << args;
    EXPECT_NE(r.output.find(needle), std::string::npos) << args << "\n" << r.output;
  }
}

}  // namespace
}  // namespace directgnn
