// End-to-end: heterogeneous graphs from the command line. The mag generator written to a
// directory, `info` on it, RGCN training that reads the relations far better than an MLP on
// paper features, and the flags this path does not take refused by name.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "e2e/e2e_util.h"
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
  const double mlp = test_accuracy(common + " --model mlp", dir, "mlp");
  EXPECT_GE(rgcn, 0.8);
  EXPECT_GE(rgcn - mlp, 0.2) << "rgcn " << rgcn << ", mlp " << mlp;
  const double hsage = test_accuracy(
      common +
          " --model sage --fan-out-rel \"paper,cites,paper=5,5;rev_writes=3,3\" --fan-out "
          "4,4",
      dir, "hsage");
  EXPECT_GE(hsage, mlp + 0.1);
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

TEST(HeteroTraining, ResumedAfterSigtermEndsBitwiseLikeAnUninterruptedRun) {
  TempDirectory dir;
  const std::string run_args =
      "train --dataset mag:0.02 --node-embeddings 16 --embedding-optimizer adam --epochs 3 "
      "--hidden 16 --batch-size 64 --threads 1 --seed 4 ";
  const CommandResult a = run(run_args + "--metrics " + dir.file("a.jsonl"));
  ASSERT_EQ(a.status, 0) << a.output;
  const CommandResult resumed =
      e2e::stopped_and_resumed(run_args, dir.file("ck"), dir.file("b.jsonl"), dir.file("b.log"));
  ASSERT_EQ(resumed.status, 0) << resumed.output;
  EXPECT_EQ(final_record(dir.file("a.jsonl"))["param_digest"],
            final_record(dir.file("b.jsonl"))["param_digest"])
      << resumed.output;
  const CommandResult changed = run("train --resume " + dir.file("ck") + " --hidden 32");
  EXPECT_NE(changed.status, 0);
  EXPECT_NE(changed.output.find("--hidden: saved 16, given 32"), std::string::npos)
      << changed.output;
}

// Two data-parallel ranks, with learnable tables for the featureless types: a run stopped after
// two epochs and extended by --resume ends bitwise like the straight run. The state holds rank
// 0's tables, so a rank whose tables had drifted from rank 0's would end elsewhere.
void expect_two_ranks_resume_like_straight(const std::string& task_args) {
  TempDirectory dir;
  const std::string args =
      "launch -n 2 -- train --dataset mag:0.005 --hidden 16 --batch-size 256 "
      "--node-embeddings 8 --threads 1 " +
      task_args;
  const CommandResult straight = run(args + " --epochs 3 --metrics " + dir.file("a.jsonl"));
  ASSERT_EQ(straight.status, 0) << straight.output;
  EXPECT_NE(straight.output.find("2 ranks (gloo)"), std::string::npos) << straight.output;
  const CommandResult first = run(args + " --epochs 2 --checkpoint " + dir.file("ck") +
                                  " --metrics " + dir.file("b.jsonl"));
  ASSERT_EQ(first.status, 0) << first.output;
  const CommandResult more = run("launch -n 2 -- train --resume " + dir.file("ck") +
                                 " --epochs 3 --threads 1 --metrics " + dir.file("b.jsonl"));
  ASSERT_EQ(more.status, 0) << more.output;
  EXPECT_NE(more.output.find("at epoch 3, step 0"), std::string::npos) << more.output;
  EXPECT_EQ(final_record(dir.file("a.jsonl"))["param_digest"],
            final_record(dir.file("b.jsonl"))["param_digest"])
      << more.output;
}

TEST(HeteroTraining, TwoRanksWithTablesExtendedByResumeEndLikeTheirStraightRun) {
  expect_two_ranks_resume_like_straight("");
}

TEST(HeteroTraining, TwoRanksOfLinkPredictionExtendedByResumeEndLikeTheirStraightRun) {
  expect_two_ranks_resume_like_straight("--task link --target-relation author,writes,paper");
}

// Every kind of run goes through one loop: the same epoch line and the same fields in every
// epoch's record and in the final one (each kind adds its metrics).
TEST(AllKinds, PrintTheSameEpochLineAndMetricsFields) {
  TempDirectory dir;
  const std::pair<std::string, std::string> kinds[] = {
      {"node", ""},
      {"link", "--task link"},
      {"hetero", "--dataset mag:0.005"},
      {"hetero_link",
       "--dataset mag:0.005 --task link --target-relation author,writes,paper "
       "--steps-per-epoch 3"},
  };
  for (const auto& [kind, args] : kinds) {
    const std::string metrics = dir.file(kind + ".jsonl");
    const CommandResult r =
        run("train --epochs 1 --hidden 16 --threads 1 " + args + " --metrics " + metrics);
    ASSERT_EQ(r.status, 0) << kind << "\n" << r.output;
    EXPECT_NE(r.output.find("Epoch 00001 | Loss "), std::string::npos) << kind << "\n" << r.output;
    EXPECT_NE(r.output.find("Average epoch time "), std::string::npos) << kind << "\n" << r.output;
    const std::vector<nlohmann::json> records = e2e::read_jsonl(metrics);
    ASSERT_EQ(records.size(), 2u) << kind;
    for (const char* field : {"loss", "epoch_time_s", "sample_s", "gather_s", "compute_s", "wait_s",
                              "cpu_s", "threads"}) {
      EXPECT_TRUE(records[0].contains(field)) << kind << " epoch record lacks " << field;
    }
    for (const char* field : {"task", "steps_per_epoch", "epoch_time_s", "eval_s", "device",
                              "param_digest", "ranks", "threads"}) {
      EXPECT_TRUE(records[1].contains(field)) << kind << " final record lacks " << field;
    }
  }
}

TEST(HeteroTraining, WhatIsNotSupportedIsRefusedByFlag) {
  const std::pair<std::string, std::string> cases[] = {
      {"--dataset mag:0.005 --features pinned", "--features does not apply to heterogeneous"},
      {"--dataset mag:0.005 --gather cpu", "--gather does not apply to heterogeneous"},
      {"--dataset mag:0.005 --model gat", "use rgcn, hsage or mlp"},
      {"--dataset mag:0.005 --fan-out-rel \"paper,likes,paper=3,3\"",
       "no relation 'paper,likes,paper'"},
      {"--dataset mag:x", "mag:SCALE"},
      {"--bases 2", "--bases applies to heterogeneous datasets"},
  };
  for (const auto& [args, needle] : cases) {
    const CommandResult r = run("train --epochs 1 " + args);
    EXPECT_NE(r.status, 0) << args;
    EXPECT_NE(r.output.find(needle), std::string::npos) << args << "\n" << r.output;
  }
}

}  // namespace
}  // namespace directgnn
