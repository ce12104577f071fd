// End-to-end: heterogeneous graphs from the command line. The mag generator written to a
// directory, `info` on it, RGCN training that reads the relations far better than an MLP on
// paper features, and the flags this path does not take refused by name (stops, resumes and
// ranks: kinds_test.cc).
#include <gtest/gtest.h>

#include <filesystem>
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

double test_accuracy(const std::string& args, const TempDirectory& dir, const std::string& tag) {
  const std::string metrics = dir.file(tag + ".jsonl");
  const CommandResult r = run("train " + args + " --threads 2 --metrics " + metrics);
  EXPECT_EQ(r.status, 0) << r.output;
  if (r.status != 0) return -1;
  return final_record(metrics)["test_acc"].get<double>();
}

TEST(HeteroTraining, RgcnOnTheMagGeneratorReadsTheRelations) {
  TempDirectory dir;
  const CommandResult g = run("generate mag --scale 0.01 --out " + dir.file("mag"));
  ASSERT_EQ(g.status, 0) << g.output;
  const CommandResult info = run("info " + dir.file("mag"));
  ASSERT_EQ(info.status, 0) << info.output;
  for (const char* needle : {"paper", "author,writes,paper", "rev_writes", "field_of_study"}) {
    EXPECT_NE(info.output.find(needle), std::string::npos) << needle << "\n" << info.output;
  }
  const std::string common = "--dataset " + dir.file("mag") + " --epochs 4 --hidden 64";
  const double rgcn =
      test_accuracy(common + " --model rgcn --checkpoint " + dir.file("ck"), dir, "rgcn");
  const CommandResult e = run("eval --checkpoint " + dir.file("ck"));
  ASSERT_EQ(e.status, 0) << e.output;
  EXPECT_NE(e.output.find("Matches the test accuracy recorded"), std::string::npos) << e.output;
  // embed: the model's last layer emits the target type's logits, one row per paper.
  const CommandResult m = run("embed --checkpoint " + dir.file("ck") + " --out " + dir.file("emb"));
  ASSERT_EQ(m.status, 0) << m.output;
  const at::Tensor papers = load_npy(dir.file("emb/paper.npy"));
  const HeteroDataset mag = load_hetero_dir(dir.file("mag"));
  EXPECT_EQ(papers.size(0), mag.node_types[mag.type_index("paper", "test")].count);
  const CommandResult author = run("embed --checkpoint " + dir.file("ck") +
                                   " --type author --out " + dir.file("author.npy"));
  EXPECT_NE(author.status, 0);
  EXPECT_NE(author.output.find("emits no rows of this type; it emits paper"), std::string::npos)
      << author.output;
  const double mlp = test_accuracy(common + " --model mlp", dir, "mlp");
  EXPECT_GE(rgcn, 0.8);
  EXPECT_GE(rgcn - mlp, 0.2) << "rgcn " << rgcn << ", mlp " << mlp;
  const double hsage = test_accuracy(
      common +
          " --model sage --fan-out-rel \"paper,cites,paper=5,5;rev_writes=3,3\" --fan-out "
          "4,4",
      dir, "hsage");
  EXPECT_GE(hsage, mlp + 0.1);
  // Every layer per relation: DGL's GraphConv (with a norm and residuals) and PyG's GATConv.
  const double gcn = test_accuracy(
      common + " --model gcn --norm batch --residual --checkpoint " + dir.file("gcn"), dir, "gcn");
  EXPECT_GE(gcn, mlp + 0.2);
  const CommandResult gcn_eval = run("eval --checkpoint " + dir.file("gcn"));
  EXPECT_NE(gcn_eval.output.find("Matches the test accuracy recorded"), std::string::npos)
      << gcn_eval.output;
  const double gat = test_accuracy(common + " --model gat --heads 2", dir, "gat");
  EXPECT_GE(gat, mlp + 0.2);
}

// Cora with its features left out, through learnable tables: random rows memorise the training
// nodes (0.54 test accuracy over seeds 0-2); rows that start smoothed over the graph (the default)
// generalise (0.69; docs/benchmarks.md).
TEST(HeteroTraining, LearnableTablesStartSmoothedOverTheGraphAndGeneralise) {
  REQUIRE_DATASET(cora, "cora.npz");
  TempDirectory dir;
  const std::string common = "--dataset " + cora + " --node-embeddings 64 --epochs 60";
  const CommandResult r = run("train --dataset " + cora + " --node-embeddings 8 --epochs 1");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("rows start smoothed over 8 hops of the graph"), std::string::npos)
      << r.output;
  const double smoothed = test_accuracy(common, dir, "smoothed");
  const double random_rows = test_accuracy(common + " --embedding-init-hops 0", dir, "random");
  EXPECT_GE(smoothed, 0.62);
  EXPECT_GE(smoothed - random_rows, 0.06) << "smoothed " << smoothed << ", random " << random_rows;
}

// A run too large to score (the 30M-row tables of docs/benchmarks.md) trains without evaluation
// and keeps its last model; the records time the saves and give the peak RSS.
TEST(HeteroTraining, WithoutEvaluationTheLastModelIsKeptAndItsSavesAreTimed) {
  TempDirectory dir;
  const CommandResult r =
      run("train --dataset mag:0.005 --node-embeddings 8 --hidden 16 --epochs 2 --no-eval "
          "--checkpoint " +
          dir.file("ck") + " --metrics " + dir.file("m.jsonl"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("Not evaluated"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("; in host memory"), std::string::npos) << r.output;
  const std::vector<nlohmann::json> records = e2e::read_jsonl(dir.file("m.jsonl"));
  ASSERT_EQ(records.size(), 3u);
  EXPECT_FALSE(records[0].contains("val_acc"));
  EXPECT_GT(records[0].value("peak_rss_bytes", int64_t{0}), 0);
  const nlohmann::json& last = records.back();
  EXPECT_GE(last.value("checkpoint_s", -1.0), 0.0) << last;
  EXPECT_EQ(last.value("state_saves", 0), 1) << last;
  EXPECT_GE(last.value("last_state_save_s", -1.0), 0.0) << last;
  EXPECT_TRUE(std::filesystem::exists(dir.file("ck/embeddings/author.npy")));
  EXPECT_TRUE(std::filesystem::exists(dir.file("ck/checkpoint.pt")));
}

TEST(HeteroTraining, SameSeedSameModelWhateverThePrefetch) {
  TempDirectory dir;
  const std::string common = "train --dataset mag:0.005 --epochs 2 --hidden 16 --threads 2 ";
  const CommandResult a = run(common + "--prefetch 0 --metrics " + dir.file("a.jsonl"));
  const CommandResult b = run(common + "--prefetch 3 --metrics " + dir.file("b.jsonl"));
  ASSERT_EQ(a.status, 0) << a.output;
  ASSERT_EQ(b.status, 0) << b.output;
  EXPECT_EQ(final_record(dir.file("a.jsonl"))["param_digest"],
            final_record(dir.file("b.jsonl"))["param_digest"]);
}

// A recommender's export as typed edge lists, users rating items, with no labels or features:
// node classification says there is nothing to classify and how to name a labelled type or
// train links; link prediction warns that users, which no relation reaches, all look alike.
TEST(HeteroTraining, AGraphWithoutLabelsOrReverseRelationsSaysWhatItLacks) {
  TempDirectory dir;
  testing::write_text(dir.file("csv/nodes.csv"), "user,60\nitem,40\n");
  std::string edges;
  for (int u = 0; u < 60; ++u) {
    for (int k = 0; k < 4; ++k)
      edges += std::to_string(u) + "," + std::to_string((u * 7 + k * 5) % 40) + "\n";
  }
  testing::write_text(dir.file("csv/user___rates___item.csv"), edges);
  const CommandResult c = run("convert " + dir.file("csv") + " " + dir.file("ds"));
  ASSERT_EQ(c.status, 0) << c.output;
  const std::string train = "train --epochs 1 --hidden 8 --dataset " + dir.file("ds");
  const CommandResult node = run(train);
  EXPECT_EQ(node.status, 1) << node.output;
  for (const char* needle : {"no node type is labelled", "task link, target_relation"}) {
    EXPECT_NE(node.output.find(needle), std::string::npos) << needle << "\n" << node.output;
  }
  const CommandResult link = run(train + " --task link --target-relation user,rates,item");
  EXPECT_EQ(link.status, 0) << link.output;
  EXPECT_NE(link.output.find("warning: node type 'user' has no features and no relation ends at "
                             "it"),
            std::string::npos)
      << link.output;
  EXPECT_NE(link.output.find("add_inverse_edges"), std::string::npos) << link.output;
  EXPECT_EQ(link.output.find("warning: node type 'item'"), std::string::npos) << link.output;
}

// A type's table read from disk through a cache shared by the disk-backed types trains the same
// model as the table in RAM, and the metrics count its reads per type.
TEST(HeteroTraining, TablesOnDiskTrainTheSameModelAndCountTheirReadsPerType) {
  TempDirectory dir;
  const CommandResult g = run("generate mag --scale 0.005 --out " + dir.file("mag"));
  ASSERT_EQ(g.status, 0) << g.output;
  const std::string common =
      "train --dataset " + dir.file("mag") + " --epochs 2 --hidden 16 --threads 2 ";
  const CommandResult host = run(common + "--metrics " + dir.file("host.jsonl"));
  ASSERT_EQ(host.status, 0) << host.output;
  EXPECT_NE(host.output.find("Features: paper host (auto: fits in RAM)"), std::string::npos)
      << host.output;
  const CommandResult disk = run(common +
                                 "--features-per-type paper=disk --feature-cache-gib 0.0005 "
                                 "--disk-io pread --metrics " +
                                 dir.file("disk.jsonl"));
  ASSERT_EQ(disk.status, 0) << disk.output;
  for (const char* needle :
       {"Features: paper disk", "Feature cache: 0.51 MiB shared by paper (0.51 MiB, ",
        "(paper: rows "}) {
    EXPECT_NE(disk.output.find(needle), std::string::npos) << needle << "\n" << disk.output;
  }
  EXPECT_EQ(final_record(dir.file("host.jsonl"))["param_digest"],
            final_record(dir.file("disk.jsonl"))["param_digest"]);
  const nlohmann::json epoch = e2e::read_jsonl(dir.file("disk.jsonl")).front();
  const nlohmann::json& paper = epoch["disk_types"]["paper"];
  EXPECT_GT(paper["disk_bytes_gathered"].get<int64_t>(), 0) << epoch.dump();
  EXPECT_GT(paper["disk_cache_hit_rate"].get<double>(), 0.0) << epoch.dump();
  EXPECT_EQ(epoch["disk_bytes_gathered"], paper["disk_bytes_gathered"]);
}

// The MAG240M shape written as it is made, trained with its paper table on disk behind a
// small SIEVE cache, learnable tables for the featureless types, and sampled evaluation.
TEST(HeteroTraining, Mag240mShapeTrainsFromDiskWithSampledEvaluation) {
  TempDirectory dir;
  const CommandResult g =
      run("generate mag --shape mag240m --scale 0.002 --classes 16 "
          "--feat-dim 32 --threads 2 --out " +
          dir.file("m"));
  ASSERT_EQ(g.status, 0) << g.output;
  for (const char* needle : {"mag240m shape", "institution", "(written)", "paper,cites,paper"}) {
    EXPECT_NE(g.output.find(needle), std::string::npos) << needle << "\n" << g.output;
  }
  EXPECT_EQ(g.output.find("field_of_study"), std::string::npos) << g.output;
  const std::string metrics = dir.file("m.jsonl");
  const CommandResult t = run("train --dataset " + dir.file("m") +
                              " --epochs 4 --batch-size 128 --hidden 64 --node-embeddings 16 "
                              "--threads 2 "
                              "--features-per-type paper=disk --feature-cache-gib 0.001 "
                              "--feature-cache-policy sieve --eval-sampled --metrics " +
                              metrics);
  ASSERT_EQ(t.status, 0) << t.output;
  EXPECT_NE(t.output.find("Features: paper disk"), std::string::npos) << t.output;
  EXPECT_NE(t.output.find("then kept by sieve"), std::string::npos) << t.output;
  const nlohmann::json last = final_record(metrics);
  EXPECT_GT(last["test_acc"].get<double>(), 0.25) << "chance is 1/16\n" << t.output;
  const nlohmann::json epoch = e2e::read_jsonl(metrics).front();
  EXPECT_GT(epoch["disk_types"]["paper"]["disk_bytes_gathered"].get<int64_t>(), 0);
  const CommandResult link = run("train --dataset " + dir.file("m") +
                                 " --epochs 1 --task link --target-relation author,writes,paper "
                                 "--eval-sampled");
  EXPECT_NE(link.status, 0);
  EXPECT_NE(link.output.find("applies to node classification on heterogeneous datasets"),
            std::string::npos)
      << link.output;
}

// `partition` on a heterogeneous directory: each type's parts are contiguous id ranges, shown
// by info. The paper-only model draws the same batches of original nodes from the renumbered
// split, so it ends with the same parameters, and embed writes its rows by original id.
TEST(HeteroTraining, PartitionedDatasetTrainsTheSameMlpAndEmbedsByOriginalId) {
  TempDirectory dir;
  ASSERT_EQ(run("generate mag --scale 0.005 --out " + dir.file("mag")).status, 0);
  const CommandResult p =
      run("partition " + dir.file("mag") + " " + dir.file("parts") + " --parts 2 --method random");
  ASSERT_EQ(p.status, 0) << p.output;
  for (const char* needle : {"Partition:  2 parts by random", "part 1: paper ", "Imbalance:  edges",
                             "features by part (nodes/TYPE/part-K/features.npy): paper"}) {
    EXPECT_NE(p.output.find(needle), std::string::npos) << needle << "\n" << p.output;
  }
  const CommandResult i = run("info " + dir.file("parts"));
  EXPECT_NE(i.output.find("Partition:  2 parts by random"), std::string::npos) << i.output;
  const CommandResult m = run("partition " + dir.file("mag") + " " + dir.file("metis") +
                              " --parts 2 --method metis --features whole");
  if (m.status == 0) {
    EXPECT_EQ(m.output.find("features by part"), std::string::npos) << m.output;
  } else {
    EXPECT_NE(m.output.find("libmetis-dev"), std::string::npos) << m.output;
  }
  std::string digest[2];
  const char* names[2] = {"mag", "parts"};
  for (int k = 0; k < 2; ++k) {
    const std::string ck = dir.file(std::string("ck-") + names[k]);
    const std::string metrics = dir.file(std::string(names[k]) + ".jsonl");
    const CommandResult t = run("train --dataset " + dir.file(names[k]) +
                                " --model mlp --epochs 2 --hidden 16 --threads 2 --checkpoint " +
                                ck + " --metrics " + metrics);
    ASSERT_EQ(t.status, 0) << t.output;
    digest[k] = final_record(metrics)["param_digest"].get<std::string>();
    const CommandResult e = run("embed --checkpoint " + ck + " --type paper --out " +
                                dir.file(std::string(names[k]) + ".npy"));
    ASSERT_EQ(e.status, 0) << e.output;
  }
  EXPECT_EQ(digest[0], digest[1]);
  EXPECT_TRUE(load_npy(dir.file("mag.npy")).equal(load_npy(dir.file("parts.npy"))));
  const CommandResult whole =
      run("partition " + dir.file("mag") + " " + dir.file("y") + " --structure by-part");
  EXPECT_NE(whole.status, 0);
  EXPECT_NE(whole.output.find("relations stay whole"), std::string::npos) << whole.output;
  const CommandResult again = run("partition " + dir.file("parts") + " " + dir.file("x"));
  EXPECT_NE(again.status, 0);
  EXPECT_NE(again.output.find("is partitioned already (2 parts)"), std::string::npos)
      << again.output;
}

TEST(HeteroTraining, WhatIsNotSupportedIsRefusedByFlag) {
  const std::pair<std::string, std::string> cases[] = {
      {"--dataset mag:0.005 --features disk",
       "holds the table in memory, not in a file; save the dataset as a dataset directory"},
      {"--dataset mag:0.005 --features-per-type author=host",
       "node type 'author' has no feature table to place"},
      {"--dataset mag:0.005 --sampler gpu", "--sampler: gpu needs a GPU"},
      {"--dataset mag:0.005 --model gat --heads 0", "must be at least 1, got 0"},
      {"--dataset mag:0.005 --keep-self-loops", "--keep-self-loops applies when importing"},
      {"--dataset mag:0.005 --model gin", "use rgcn, hsage, gcn, gat or mlp"},
      {"--dataset mag:0.005 --fan-out-rel \"paper,likes,paper=3,3\"",
       "no relation 'paper,likes,paper'"},
      {"--dataset mag:x", "mag:SCALE"},
      {"--bases 2", "--bases applies to heterogeneous datasets"},
      {"--dataset mag:0.005 --node-embeddings 8 --embedding-placement pinned --device cpu",
       "pinned tables are read by GPU threads, but this run trains on the CPU"},
      {"--dataset mag:0.005 --node-embeddings 8 --embedding-placement gpu",
       "--embedding-placement: 'gpu': use auto"},
      {"--dataset mag:0.005 --gpu-memory-gib 4 --device cpu",
       "caps a GPU's memory, but this run trains on the CPU"},
      {"--dataset mag:0.005 --task link --target-relation author,writes,paper "
       "--shard-features on",
       "needs a partitioned dataset (directgnn partition) with one part per rank"},
      {"--dataset mag:0.005 --shard-features on",
       "needs a partitioned dataset (directgnn partition) with one part per rank"},
  };
  for (const auto& [args, needle] : cases) {
    const CommandResult r = run("train --epochs 1 " + args);
    EXPECT_NE(r.status, 0) << args;
    EXPECT_NE(r.output.find(needle), std::string::npos) << args << "\n" << r.output;
  }
}

}  // namespace
}  // namespace directgnn
