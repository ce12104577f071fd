// Data-parallel training on Gloo over loopback: real processes of the real binary.
#include <ATen/ATen.h>
#include <signal.h>
#include <sys/wait.h>
#include <torch/utils.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "e2e/e2e_util.h"
#include "gpu/runtime.h"
#include "nn/model.h"
#include "test_util.h"
#include "train/checkpoint.h"

namespace directgnn {
namespace {

using e2e::CommandResult;
using e2e::final_record;
using e2e::run;
using testing::TempDirectory;

TEST(Distributed, TwoRanksTrainCoraToEightyPercent) {
  REQUIRE_DATASET(cora, "cora.npz");
  TempDirectory dir;
  const CommandResult r =
      run("launch -n 2 -- train --dataset " + cora + " --metrics " + dir.file("m.jsonl"));
  ASSERT_EQ(r.status, 0) << r.output;
  // --dist-backend auto: NCCL only where each rank has a GPU of its own.
  const std::string backend = gpu::device_count() >= 2 ? "2 ranks (nccl)" : "2 ranks (gloo)";
  EXPECT_NE(r.output.find(backend), std::string::npos) << r.output;
  const nlohmann::json final = final_record(dir.file("m.jsonl"));
  EXPECT_EQ(final["ranks"], 2);
  EXPECT_GE(final["test_acc"].get<double>(), 0.80) << r.output;
}

std::vector<at::Tensor> parameters_in(const std::string& checkpoint) {
  const nlohmann::json meta = read_checkpoint_meta(checkpoint);
  GnnModel model(ModelConfig::from_json(meta["model"], checkpoint));
  load_checkpoint(checkpoint, model, nullptr);
  std::vector<at::Tensor> out;
  for (const at::Tensor& p : model.parameters()) out.push_back(p.detach().clone());
  return out;
}

TEST(Distributed, AveragedGradientsEqualOneProcessOnTheUnionOfTheShards) {
  REQUIRE_DATASET(cora, "cora.npz");
  TempDirectory dir;
  // Cora's split trains on 140 nodes: one step of 140 in one process, or one step of 70 on
  // each of two ranks. Full neighbourhoods and no dropout make both exact. Plain SGD, since
  // Adam's first step (g / |g| per coordinate) would hide a wrongly scaled average.
  const std::string args = "train --dataset " + cora +
                           " --epochs 1 --batch-size 140 --fan-out -1,-1 --dropout 0 --threads 1"
                           " --optimizer sgd --lr 1";
  const CommandResult one = run(args + " --checkpoint " + dir.file("one"));
  ASSERT_EQ(one.status, 0) << one.output;
  const CommandResult two = run("launch -n 2 -- " + args + " --checkpoint " + dir.file("two"));
  ASSERT_EQ(two.status, 0) << two.output;
  const std::vector<at::Tensor> a = parameters_in(dir.file("one"));
  const std::vector<at::Tensor> b = parameters_in(dir.file("two"));
  ASSERT_EQ(a.size(), b.size());
  // The step moved the parameters (from the trainer's seeded initialisation), so the equality
  // below says something.
  torch::manual_seed(0);
  GnnModel init(ModelConfig::from_json(read_checkpoint_meta(dir.file("one"))["model"], "init"));
  double moved = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    moved = std::max(moved, (a[i] - init.parameters()[i]).abs().max().item<double>());
  }
  EXPECT_GT(moved, 1e-3);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(at::allclose(a[i], b[i], 1e-5, 1e-6))
        << "parameter " << i << " differs by " << (a[i] - b[i]).abs().max().item<float>();
  }
}

// Starts `directgnn args` as one rank of two with its output in `log`; returns its pid.
pid_t start_rank(int rank, int port, const std::string& args, const std::string& log) {
  const pid_t pid = fork();
  if (pid == 0) {
    setenv("RANK", std::to_string(rank).c_str(), 1);
    setenv("WORLD_SIZE", "2", 1);
    setenv("MASTER_ADDR", "127.0.0.1", 1);
    setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
    const std::string command = "exec " + e2e::cli_binary() + " " + args + " > " + log + " 2>&1";
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

// Cora in two random parts (`partition --seed SEED`) under `dir`; returns its directory.
std::string partitioned_cora(const std::string& cora, const TempDirectory& dir, int seed = 0) {
  const std::string parts = dir.file("parts");
  const CommandResult p = run("partition " + cora + " " + parts +
                              " --parts 2 --method random --seed " + std::to_string(seed));
  EXPECT_EQ(p.status, 0) << p.output;
  return parts;
}

// mag:0.005 (generated) in two random parts under `dir`; returns the parts' directory.
std::string partitioned_mag(const TempDirectory& dir) {
  const CommandResult g = run("generate mag --scale 0.005 --out " + dir.file("mag"));
  EXPECT_EQ(g.status, 0) << g.output;
  const std::string parts = dir.file("parts");
  const CommandResult p =
      run("partition " + dir.file("mag") + " " + parts + " --parts 2 --method random");
  EXPECT_EQ(p.status, 0) << p.output;
  return parts;
}

// GPU ranks sharing the machine's GPU: the rows exchanged on the CPU and copied to each rank's
// device (auto, with Gloo), or exchanged in GPU memory, each owner's part pinned (the aligned
// gather reads it) or in its GPU's memory; each run learns as the replicated one does.
TEST(Distributed, ShardedFeaturesOnTheGpuTrainAsTheReplicatedRun) {
  if (!gpu::available()) GTEST_SKIP() << "no GPU here (" << gpu::unavailable_reason() << ")";
  REQUIRE_DATASET(cora, "cora.npz");
  TempDirectory dir;
  const std::string parts = partitioned_cora(cora, dir);
  const std::string args = "launch -n 2 -- train --dataset " + parts +
                           " --device cuda --epochs 20 --threads 1 --seed-assignment global";
  const CommandResult replicated =
      run(args + " --shard-features off --metrics " + dir.file("r.jsonl"));
  ASSERT_EQ(replicated.status, 0) << replicated.output;
  const double want = final_record(dir.file("r.jsonl"))["test_acc"].get<double>();
  const std::vector<std::pair<std::string, std::string>> variants{
      {"", "mode sharded/exchange+copy/"},
      {" --exchange-device gpu", "mode sharded/exchange-gpu/"},
      {" --exchange-device gpu --features device", "mode sharded/exchange-gpu/"}};
  for (const auto& [flags, mode] : variants) {
    const CommandResult sharded = run(args + flags + " --metrics " + dir.file("s.jsonl"));
    ASSERT_EQ(sharded.status, 0) << flags << sharded.output;
    EXPECT_NE(sharded.output.find(mode), std::string::npos) << flags << sharded.output;
    EXPECT_NEAR(final_record(dir.file("s.jsonl"))["test_acc"].get<double>(), want, 0.03)
        << flags << sharded.output << replicated.output;
  }
}

// A sharded run stopped by SIGTERM (batches in flight on each rank's worker, finished before
// the state is saved) resumes to the parameters of its straight run.
TEST(Distributed, AShardedRunStoppedAndResumedEndsLikeItsStraightRun) {
  REQUIRE_DATASET(cora, "cora.npz");
  TempDirectory dir;
  const std::string parts = partitioned_cora(cora, dir);
  const std::string args = "launch -n 2 -- train --dataset " + parts +
                           " --epochs 3 --threads 1 --batch-size 8 --prefetch 3";
  const CommandResult straight = run(args + " --metrics " + dir.file("a.jsonl"));
  ASSERT_EQ(straight.status, 0) << straight.output;
  const CommandResult resumed =
      e2e::stopped_and_resumed(args, dir.file("ck"), dir.file("b.jsonl"), dir.file("b.log"));
  ASSERT_EQ(resumed.status, 0) << resumed.output;
  EXPECT_EQ(final_record(dir.file("a.jsonl"))["param_digest"],
            final_record(dir.file("b.jsonl"))["param_digest"])
      << resumed.output;
}

// Starts two ranks of `args`, kills rank `victim` once rank 0 has trained an epoch, and checks
// that the other exits non-zero within 30 s with an error naming itself and what became of the
// victim (`fate`).
void expect_survivor_stops(const std::string& args, const TempDirectory& dir, int victim,
                           const std::string& fate) {
  const int port = 20000 + static_cast<int>((getpid() + 13 * victim) % 20000);
  const pid_t ranks[2] = {start_rank(0, port, args, dir.file("rank0.log")),
                          start_rank(1, port, args, dir.file("rank1.log"))};
  const int survivor = 1 - victim;
  // Let both join and train for a while, then kill the victim without warning.
  for (int i = 0; i < 200; ++i) {
    std::ifstream log(dir.file("rank0.log"));
    const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    if (text.find("Epoch 00002") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  kill(ranks[victim], SIGKILL);
  waitpid(ranks[victim], nullptr, 0);
  const auto killed = std::chrono::steady_clock::now();
  int status = 0;
  pid_t done = 0;
  while ((done = waitpid(ranks[survivor], &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() - killed < std::chrono::seconds(60)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (done == 0) {
    kill(ranks[survivor], SIGKILL);
    waitpid(ranks[survivor], nullptr, 0);
    FAIL() << "rank " << survivor << " still running 60 s after rank " << victim << " died";
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  EXPECT_LE(seconds, 30.0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0);
  const auto read = [&](int rank) {
    std::ifstream log(dir.file("rank" + std::to_string(rank) + ".log"));
    return std::string((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  };
  const std::string text = read(survivor);
  EXPECT_NE(text.find("error: rank " + std::to_string(survivor) + " of 2"), std::string::npos)
      << text;
  EXPECT_NE(text.find(fate), std::string::npos) << text;
  EXPECT_NE(read(0).find("Epoch 00001"), std::string::npos) << "rank 0 never trained:\n" << read(0);
}

const char kKilled[] = "rank 1 stopped responding (killed, crashed or hung)";

TEST(Distributed, KillingOneRankStopsTheOtherWithAClearError) {
  TempDirectory dir;
  expect_survivor_stops("train --epochs 100000 --threads 1 --dist-timeout 20", dir, 1, kKilled);
}

// Rank 0 hosts the store: the survivor says it cannot be reached.
TEST(Distributed, KillingRankZeroStopsTheOtherNamingTheStoresHost) {
  TempDirectory dir;
  expect_survivor_stops("train --epochs 100000 --threads 1 --dist-timeout 10", dir, 0,
                        "rank 0, which hosts the group's store, cannot be reached");
}

// The same while the ranks exchange feature rows (a sharded table, batches prepared ahead on
// the loader's worker): the survivor's exchange or all-reduce fails, never hangs.
TEST(Distributed, KillingOneRankOfAShardedRunStopsTheOther) {
  REQUIRE_DATASET(cora, "cora.npz");
  TempDirectory dir;
  const std::string parts = partitioned_cora(cora, dir);
  expect_survivor_stops(
      "train --dataset " + parts + " --epochs 100000 --threads 1 --dist-timeout 10 --prefetch 2",
      dir, 1, kKilled);
}

// --resume auto as torchrun --max-restarts uses it: the first start finds no state and trains
// anew; a rank killed mid-run stops the other; the same command again continues from the last
// state that --checkpoint-every saved, and ends with the parameters of an uninterrupted run.
TEST(Distributed, ARunRestartedWithResumeAutoContinuesFromItsLastState) {
  REQUIRE_DATASET(cora, "cora.npz");
  TempDirectory dir;
  const std::string common = "train --dataset " + cora +
                             " --epochs 40 --threads 1 --seed 1 --batch-size 16"
                             " --checkpoint-every 5 --dist-timeout 10";
  const CommandResult straight =
      run("launch -n 2 -- " + common + " --metrics " + dir.file("a.jsonl"));
  ASSERT_EQ(straight.status, 0) << straight.output;
  const std::string args = common + " --resume auto --checkpoint " + dir.file("ck") +
                           " --metrics " + dir.file("b.jsonl");
  const int port = 20000 + static_cast<int>((getpid() + 7) % 20000);
  const pid_t rank0 = start_rank(0, port, args, dir.file("rank0.log"));
  const pid_t rank1 = start_rank(1, port, args, dir.file("rank1.log"));
  std::string text;
  for (int i = 0; i < 300 && text.find("Epoch 00003") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::ifstream log(dir.file("rank0.log"));
    text.assign(std::istreambuf_iterator<char>(log), std::istreambuf_iterator<char>());
  }
  kill(rank1, SIGKILL);
  waitpid(rank1, nullptr, 0);
  int status = 0;
  waitpid(rank0, &status, 0);
  std::ifstream log(dir.file("rank0.log"));
  text.assign(std::istreambuf_iterator<char>(log), std::istreambuf_iterator<char>());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0) << "rank 0 finished:\n" << text;
  EXPECT_EQ(text.find("Resuming"), std::string::npos) << text;
  const CommandResult restarted = run("launch -n 2 -- " + args);
  ASSERT_EQ(restarted.status, 0) << restarted.output;
  EXPECT_NE(restarted.output.find("Resuming from " + dir.file("ck") + " at epoch "),
            std::string::npos)
      << restarted.output;
  EXPECT_EQ(final_record(dir.file("a.jsonl"))["param_digest"],
            final_record(dir.file("b.jsonl"))["param_digest"])
      << restarted.output;
  const CommandResult bare = run("train --epochs 1 --resume auto");
  EXPECT_NE(bare.status, 0);
  EXPECT_NE(bare.output.find("--resume auto: give --checkpoint DIR"), std::string::npos)
      << bare.output;
}

TEST(Distributed, MisconfiguredEnvironmentsFailClearly) {
  const CommandResult r = run("launch -n 2");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("give the command after --"), std::string::npos) << r.output;
  const CommandResult bad = run("train --epochs 1 --dist-timeout 0");
  EXPECT_NE(bad.status, 0);
  const CommandResult unknown = run("train --epochs 1 --dist-backend mpi");
  EXPECT_NE(unknown.status, 0);
  EXPECT_NE(unknown.output.find("--dist-backend"), std::string::npos) << unknown.output;
  // CPU ranks cannot use NCCL: every rank says which ranks lack a GPU, and stops.
  const CommandResult nccl =
      run("launch -n 2 -- train --epochs 1 --device cpu --dist-backend nccl");
  EXPECT_NE(nccl.status, 0);
  EXPECT_NE(nccl.output.find("rank(s) 0, 1 have no GPU of their own"), std::string::npos)
      << nccl.output;
}

// Cora cut into two parts, each rank holding one part's feature rows and fetching the rest
// from the other: with the replicated run's seed assignment it draws the same batches and ends
// with the same parameters as the replicated run; with each part's own seeds it still learns.
TEST(Distributed, ShardedFeaturesTrainAsTheReplicatedRunDoes) {
  REQUIRE_DATASET(cora, "cora.npz");
  TempDirectory dir;
  const std::string parts = partitioned_cora(cora, dir, 3);
  const std::string args =
      "launch -n 2 -- train --dataset " + parts + " --threads 1 --seed 1 --metrics ";
  const CommandResult sharded =
      run(args + dir.file("s.jsonl") +
          " --epochs 3 --seed-assignment global --prefetch 2 --remote-cache-gib 0.001");
  ASSERT_EQ(sharded.status, 0) << sharded.output;
  // 0.001 GiB of Cora's 5,732-byte rows: 187 of the other part's rows copied to each rank.
  EXPECT_NE(sharded.output.find("Sharded features: 2 parts (random), seeds by global, a copy of "
                                "187 remote rows here"),
            std::string::npos)
      << sharded.output;
  const CommandResult replicated =
      run(args + dir.file("r.jsonl") + " --epochs 3 --shard-features off");
  ASSERT_EQ(replicated.status, 0) << replicated.output;
  EXPECT_EQ(replicated.output.find("Sharded features"), std::string::npos) << replicated.output;
  const nlohmann::json s = final_record(dir.file("s.jsonl"));
  EXPECT_EQ(s["param_digest"], final_record(dir.file("r.jsonl"))["param_digest"]);
  std::ifstream sharded_lines(dir.file("s.jsonl"));
  std::string line;
  std::getline(sharded_lines, line);
  EXPECT_GT(nlohmann::json::parse(line)["exchange"]["cache_hits"].get<int64_t>(), 0) << line;
  // Each owner serving its part's rows from disk, with a RAM cache of the hottest of them.
  const CommandResult disk = run(args + dir.file("d.jsonl") +
                                 " --epochs 3 --seed-assignment global --features disk"
                                 " --feature-cache-gib 0.001");
  ASSERT_EQ(disk.status, 0) << disk.output;
  EXPECT_NE(disk.output.find("rows (13.9% of this rank's part)"), std::string::npos) << disk.output;
  EXPECT_EQ(final_record(dir.file("d.jsonl"))["param_digest"], s["param_digest"]);
  // Each part's own seeds (the default): half the rows a batch reads are the other rank's.
  const CommandResult own = run(args + dir.file("o.jsonl") + " --epochs 10");
  ASSERT_EQ(own.status, 0) << own.output;
  std::ifstream lines(dir.file("o.jsonl"));
  const nlohmann::json first = nlohmann::json::parse([&] {
    std::string line;
    std::getline(lines, line);
    return line;
  }());
  const double remote = first["exchange"]["remote_row_fraction"].get<double>();
  EXPECT_GT(remote, 0.3) << first.dump();
  EXPECT_LT(remote, 0.7) << first.dump();
  EXPECT_GT(first["exchange"]["bytes_received"].get<int64_t>(), 0) << first.dump();
  EXPECT_GE(final_record(dir.file("o.jsonl"))["test_acc"].get<double>(), 0.70) << own.output;
  // Sharding asked of a dataset without parts says what it needs.
  const CommandResult bad =
      run("launch -n 2 -- train --dataset " + cora + " --epochs 1 --shard-features on");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.output.find("needs a partitioned dataset"), std::string::npos) << bad.output;
  // Rows landing in GPU memory need ranks that train on a GPU.
  const CommandResult cpu = run("launch -n 2 -- train --dataset " + parts +
                                " --epochs 1 --device cpu --exchange-device gpu");
  EXPECT_NE(cpu.status, 0);
  EXPECT_NE(cpu.output.find("--exchange-device: gpu lands the exchanged rows in a GPU's memory"),
            std::string::npos)
      << cpu.output;
}

// A heterogeneous dataset in two parts: each rank holds its part of the paper table and asks
// the other for the rest, type by type. With the replicated run's seed assignment (and its
// sampled evaluation) it ends with the replicated run's parameters, learnable tables included
// (their start sums each part's projection over the ranks), whether the owners serve rows from
// memory or from their part's file through a cache; with each part's own seeds it still learns.
TEST(Distributed, ShardedHeteroTablesTrainAsTheReplicatedRunDoes) {
  TempDirectory dir;
  const std::string parts = partitioned_mag(dir);
  ASSERT_FALSE(::testing::Test::HasFailure());
  const std::string args = "launch -n 2 -- train --dataset " + parts +
                           " --threads 1 --seed 1 --epochs 2 --hidden 16 --node-embeddings 8 "
                           "--metrics ";
  const CommandResult sharded =
      run(args + dir.file("s.jsonl") + " --seed-assignment global --remote-cache-gib 0.0005");
  ASSERT_EQ(sharded.status, 0) << sharded.output;
  EXPECT_NE(sharded.output.find("Sharded features: 2 parts (random) of paper, seeds by global, "
                                "evaluation sampled on every rank; a copy of "),
            std::string::npos)
      << sharded.output;
  const CommandResult replicated =
      run(args + dir.file("r.jsonl") + " --shard-features off --eval-sampled");
  ASSERT_EQ(replicated.status, 0) << replicated.output;
  const nlohmann::json s = final_record(dir.file("s.jsonl"));
  EXPECT_EQ(s["param_digest"], final_record(dir.file("r.jsonl"))["param_digest"]);
  const nlohmann::json first = e2e::read_jsonl(dir.file("s.jsonl")).front();
  EXPECT_GT(first["exchange_types"]["paper"]["cache_hits"].get<int64_t>(), 0) << first.dump();
  EXPECT_EQ(first["exchange"]["bytes_received"],
            first["exchange_types"]["paper"]["bytes_received"]);
  // Owners reading their part's file, through a cache of the rows of their part that every
  // rank's batches read most.
  const CommandResult disk = run(args + dir.file("d.jsonl") +
                                 " --seed-assignment global --features disk --disk-io pread "
                                 "--feature-cache-gib 0.001");
  ASSERT_EQ(disk.status, 0) << disk.output;
  EXPECT_NE(disk.output.find("part-0/features.npy"), std::string::npos) << disk.output;
  EXPECT_NE(disk.output.find("of this rank's part)"), std::string::npos) << disk.output;
  EXPECT_EQ(final_record(dir.file("d.jsonl"))["param_digest"], s["param_digest"]);
  EXPECT_GT(e2e::read_jsonl(dir.file("d.jsonl"))
                .front()["disk_types"]["paper"]["disk_cache_hit_rate"]
                .get<double>(),
            0.0);
  const CommandResult own = run(args + dir.file("o.jsonl") + " --batch-size 128");
  ASSERT_EQ(own.status, 0) << own.output;
  const double remote =
      e2e::read_jsonl(dir.file("o.jsonl")).front()["exchange"]["remote_row_fraction"].get<double>();
  EXPECT_GT(remote, 0.3);
  EXPECT_LT(remote, 0.7);
  EXPECT_GE(final_record(dir.file("o.jsonl"))["test_acc"].get<double>(), 0.5) << own.output;
  const CommandResult ahead = run(args + dir.file("c.jsonl") +
                                  " --features disk --feature-cache-gib 0.001 "
                                  "--feature-cache-policy lookahead");
  EXPECT_NE(ahead.status, 0);
  EXPECT_NE(ahead.output.find("lookahead plans a loader's own batches"), std::string::npos)
      << ahead.output;
}

// Heterogeneous link prediction on a dataset in two parts: with the replicated run's positives
// the sharded run ends with its parameters (learnable tables and a copy of remote rows
// included), and its evaluation, which samples the scored pairs' neighbourhoods through the
// exchanges, finds the replicated run's full-neighbourhood metrics when the fan-outs take every
// neighbour; with each part's own positives (by source node) it learns.
TEST(Distributed, ShardedHeteroTablesTrainLinksAsTheReplicatedRunDoes) {
  TempDirectory dir;
  const std::string parts = partitioned_mag(dir);
  ASSERT_FALSE(::testing::Test::HasFailure());
  const std::string args =
      "launch -n 2 -- train --task link --target-relation author,writes,paper --dataset " + parts +
      " --threads 1 --seed 1 --hidden 16 --batch-size 256 --steps-per-epoch 10 "
      "--node-embeddings 8 --metrics ";
  const std::string whole = " --epochs 2 --fan-out -1,-1";
  const CommandResult sharded = run(args + dir.file("s.jsonl") + whole +
                                    " --seed-assignment global --remote-cache-gib 0.0005");
  ASSERT_EQ(sharded.status, 0) << sharded.output;
  EXPECT_NE(sharded.output.find("Sharded features: 2 parts (random) of paper, seeds by global, "
                                "evaluation sampled on every rank; a copy of "),
            std::string::npos)
      << sharded.output;
  const CommandResult replicated =
      run(args + dir.file("r.jsonl") + whole + " --shard-features off");
  ASSERT_EQ(replicated.status, 0) << replicated.output;
  const nlohmann::json s = final_record(dir.file("s.jsonl")), r = final_record(dir.file("r.jsonl"));
  EXPECT_EQ(s["param_digest"], r["param_digest"]);
  for (const char* metric : {"roc_auc", "ap", "hits"}) {
    EXPECT_NEAR(s["test"][metric].get<double>(), r["test"][metric].get<double>(), 1e-9) << metric;
    EXPECT_NEAR(s["val"][metric].get<double>(), r["val"][metric].get<double>(), 1e-9) << metric;
  }
  EXPECT_GT(e2e::read_jsonl(dir.file("s.jsonl")).front()["exchange"]["cache_hits"].get<int64_t>(),
            0);
  const CommandResult own = run(args + dir.file("o.jsonl") + " --epochs 5");
  ASSERT_EQ(own.status, 0) << own.output;
  EXPECT_NE(own.output.find("seeds by part"), std::string::npos) << own.output;
  EXPECT_GT(final_record(dir.file("o.jsonl"))["val"]["roc_auc"].get<double>(), 0.57) << own.output;
}

// Link prediction on the same parts: with the replicated run's seed assignment the sharded run
// ends with its parameters; with each part's own positives (those whose source it owns) it
// still learns, and one process scoring the saved model finds the metrics the ranks recorded.
TEST(Distributed, ShardedFeaturesTrainLinksAsTheReplicatedRunDoes) {
  REQUIRE_DATASET(cora, "cora.npz");
  TempDirectory dir;
  const std::string parts = partitioned_cora(cora, dir, 3);
  const std::string args = "launch -n 2 -- train --task link --dataset " + parts +
                           " --threads 1 --seed 1 --hidden 64 --fan-out 10,10 --batch-size 128"
                           " --metrics ";
  const CommandResult sharded = run(
      args + dir.file("s.jsonl") + " --epochs 2 --seed-assignment global --remote-cache-gib 0.001");
  ASSERT_EQ(sharded.status, 0) << sharded.output;
  EXPECT_NE(sharded.output.find("Sharded features: 2 parts (random), seeds by global, a copy of "
                                "187 remote rows here (by presample)"),
            std::string::npos)
      << sharded.output;
  EXPECT_NE(sharded.output.find("mode sharded/cpu/cpu"), std::string::npos) << sharded.output;
  const CommandResult replicated =
      run(args + dir.file("r.jsonl") + " --epochs 2 --shard-features off");
  ASSERT_EQ(replicated.status, 0) << replicated.output;
  EXPECT_EQ(final_record(dir.file("s.jsonl"))["param_digest"],
            final_record(dir.file("r.jsonl"))["param_digest"]);
  const CommandResult own = run(args + dir.file("o.jsonl") +
                                " --epochs 10 --eval-every 5 --checkpoint " + dir.file("ck"));
  ASSERT_EQ(own.status, 0) << own.output;
  std::ifstream lines(dir.file("o.jsonl"));
  std::string line;
  std::getline(lines, line);
  const nlohmann::json first = nlohmann::json::parse(line);
  const double remote = first["exchange"]["remote_row_fraction"].get<double>();
  EXPECT_GT(remote, 0.3) << line;
  EXPECT_LT(remote, 0.7) << line;
  EXPECT_GE(final_record(dir.file("o.jsonl"))["test"]["roc_auc"].get<double>(), 0.85) << own.output;
  const CommandResult e = run("eval --checkpoint " + dir.file("ck") + " --dataset " + parts);
  ASSERT_EQ(e.status, 0) << e.output;
  EXPECT_NE(e.output.find("Matches the test roc_auc recorded at training time"), std::string::npos)
      << e.output;
}

// Cora with its structure stored by part too: each rank holds its part's in-edges and asks the
// other rank for the neighbours of its nodes. The owners' keyed draws are the replicated run's,
// so with the global seed assignment the parameters end the same, and its evaluation, layer by
// layer over the parts, finds the same accuracies; with each part's seeds it learns.
TEST(Distributed, ShardedStructureSamplesWhatTheReplicatedRunSamples) {
  REQUIRE_DATASET(cora, "cora.npz");
  TempDirectory dir;
  const std::string parts = dir.file("parts");
  const CommandResult p = run("partition " + cora + " " + parts +
                              " --parts 2 --method random --seed 3 --structure by-part");
  ASSERT_EQ(p.status, 0) << p.output;
  const std::string args =
      "launch -n 2 -- train --dataset " + parts + " --threads 1 --seed 1 --metrics ";
  const CommandResult sharded =
      run(args + dir.file("s.jsonl") + " --epochs 3 --seed-assignment global");
  ASSERT_EQ(sharded.status, 0) << sharded.output;
  EXPECT_NE(sharded.output.find("10556 edges (5196 here)"), std::string::npos) << sharded.output;
  EXPECT_NE(sharded.output.find("Sharded structure: each rank draws its part's"), std::string::npos)
      << sharded.output;
  const CommandResult replicated =
      run(args + dir.file("r.jsonl") + " --epochs 3 --shard-structure off --shard-features off");
  ASSERT_EQ(replicated.status, 0) << replicated.output;
  EXPECT_EQ(replicated.output.find("Sharded"), std::string::npos) << replicated.output;
  EXPECT_EQ(final_record(dir.file("s.jsonl"))["param_digest"],
            final_record(dir.file("r.jsonl"))["param_digest"]);
  // Evaluation layer by layer over the parts is exact: the replicated run's accuracies, epoch
  // by epoch (the same model; sums in another order at most).
  const std::vector<nlohmann::json> s_epochs = e2e::read_jsonl(dir.file("s.jsonl"));
  const std::vector<nlohmann::json> r_epochs = e2e::read_jsonl(dir.file("r.jsonl"));
  ASSERT_EQ(s_epochs.size(), r_epochs.size());
  for (size_t e = 0; e < s_epochs.size(); ++e) {
    for (const char* key : {"val_acc", "test_acc"}) {
      if (!r_epochs[e].contains(key)) continue;
      EXPECT_NEAR(s_epochs[e][key].get<double>(), r_epochs[e][key].get<double>(), 1e-9)
          << key << " of record " << e;
    }
  }
  const CommandResult own = run(args + dir.file("o.jsonl") + " --epochs 10");
  ASSERT_EQ(own.status, 0) << own.output;
  std::ifstream lines(dir.file("o.jsonl"));
  std::string line;
  std::getline(lines, line);
  const double remote =
      nlohmann::json::parse(line)["sampling"]["remote_row_fraction"].get<double>();
  EXPECT_GT(remote, 0.2) << line;
  EXPECT_LT(remote, 0.8) << line;
  EXPECT_GE(final_record(dir.file("o.jsonl"))["test_acc"].get<double>(), 0.70) << own.output;
  const CommandResult bad =
      run("launch -n 2 -- train --dataset " + cora + " --epochs 1 --shard-structure on");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.output.find("--shard-structure: needs a partitioned dataset"), std::string::npos)
      << bad.output;
  const CommandResult link = run("train --task link --dataset " + parts + " --shard-structure on");
  EXPECT_NE(link.status, 0);
  EXPECT_NE(link.output.find("--shard-structure applies to node classification, not to --task "
                             "link (link prediction keeps each rank's graph whole"),
            std::string::npos)
      << link.output;
}

}  // namespace
}  // namespace directgnn
