// Interrupting real `directgnn train` runs: SIGTERM then --resume on a GPU, SIGINT, a second
// signal, and SIGKILL at random moments while checkpoints are being written (SIGTERM then
// --resume on the CPU, for every kind of run, is kinds_test.cc).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <random>
#include <string>
#include <thread>

#include "e2e_util.h"
#include "gpu/runtime.h"
#include "test_util.h"

namespace directgnn {
namespace {

using e2e::Background;

// Waits (up to 3 minutes) until `path` exists, or the process has ended.
bool wait_for_file(const std::string& path, const Background& b) {
  for (int i = 0; i < 18000; ++i) {
    if (std::filesystem::exists(path)) return true;
    if (waitpid(b.pid, nullptr, WNOHANG) != 0) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Whether `dir` holds a temporary of an unfinished write (by process `pid`, when given).
bool has_temporary(const std::string& dir, pid_t pid = -1) {
  const std::string mark = pid < 0 ? ".tmp-" : ".tmp-" + std::to_string(pid) + "-";
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().filename().string().find(mark) != std::string::npos) return true;
  }
  return false;
}

// The SIGTERM-then-resume matrix of every kind on the CPU is kinds_test.cc. On a GPU the same
// stop and resume: index_add's atomics add in another order each run, so the resumed model is
// compared with the straight one by its accuracies, within a tolerance.
TEST(Interrupt, SigtermThenResumeOnTheGpuEndsNearTheSameModel) {
  if (!gpu::available()) GTEST_SKIP() << "no GPU here (" << gpu::unavailable_reason() << ")";
  testing::TempDirectory dir;
  const std::string run = "train --epochs 4 --device cuda --batch-size 32 --eval-every 2 --seed 11";
  const auto straight = e2e::run(run + " --metrics " + dir.file("a.jsonl"));
  ASSERT_EQ(straight.status, 0) << straight.output;
  const auto resumed =
      e2e::stopped_and_resumed(run, dir.file("ck"), dir.file("b.jsonl"), dir.file("b.log"));
  ASSERT_EQ(resumed.status, 0) << resumed.output;
  const auto a = e2e::final_record(dir.file("a.jsonl")), r = e2e::final_record(dir.file("b.jsonl"));
  EXPECT_NEAR(a["test_acc"].get<double>(), r["test_acc"].get<double>(), 0.03);
  EXPECT_NEAR(a["val_acc"].get<double>(), r["val_acc"].get<double>(), 0.03);
  EXPECT_GT(r["test_acc"].get<double>(), 0.5);
}

// SIGINT ends link training at the next step with its state saved, naming the best-validation
// checkpoint written so far, instead of being swallowed.
TEST(Interrupt, SigintStopsLinkTrainingAtTheNextStep) {
  REQUIRE_DATASET(cora, "cora.npz");
  testing::TempDirectory dir;
  const std::string metrics = dir.file("m.jsonl"), ckpt = dir.file("ck");
  const Background b =
      e2e::spawn("train --task link --dataset " + cora + " --epochs 100000 --threads 1 --metrics " +
                     metrics + " --checkpoint " + ckpt,
                 dir.file("b.log"));
  ASSERT_TRUE(e2e::wait_for_lines(metrics, 2, b)) << e2e::read_text(dir.file("b.log"));
  kill(b.pid, SIGINT);
  EXPECT_EQ(e2e::wait_exit(b), 130);
  const std::string log = e2e::read_text(dir.file("b.log"));
  EXPECT_NE(log.find("Interrupted by SIGINT at epoch"), std::string::npos) << log;
  EXPECT_NE(log.find("the best-validation model so far"), std::string::npos) << log;
  EXPECT_NE(log.find("directgnn train --resume " + ckpt), std::string::npos) << log;
  EXPECT_TRUE(std::filesystem::exists(ckpt + "/checkpoint.pt")) << log;
  EXPECT_TRUE(std::filesystem::exists(ckpt + "/state.pt")) << log;
}

TEST(Interrupt, ASecondSignalExitsAtOnce) {
  testing::TempDirectory dir;
  const std::string metrics = dir.file("m.jsonl");
  const Background b =
      e2e::spawn("train --epochs 50 --device cpu --threads 1 --batch-size 32 --seed 11 --metrics " +
                     metrics + " --checkpoint " + dir.file("ck"),
                 dir.file("log"));
  ASSERT_TRUE(e2e::wait_for_lines(metrics, 1, b)) << e2e::read_text(dir.file("log"));
  // Two different signals, so the kernel cannot merge them: the second is handled while the
  // first still is, and exits without saving (130 or 143, whichever handler runs last).
  kill(b.pid, SIGINT);
  kill(b.pid, SIGTERM);
  const int status = e2e::wait_exit(b);
  EXPECT_TRUE(status == 130 || status == 143) << status;
  const std::string log = e2e::read_text(dir.file("log"));
  EXPECT_NE(log.find("second signal, exiting now"), std::string::npos) << log;
  EXPECT_EQ(log.find("Training state saved"), std::string::npos) << log;
  EXPECT_FALSE(std::filesystem::exists(dir.file("ck/state.pt")));
}

// SIGKILL at random moments of a run that writes its state every step (and its best model at
// every improvement): whatever the moment, what is on disk loads, and the run can go on.
TEST(Interrupt, SigkillDuringCheckpointWritesNeverLeavesATornCheckpoint) {
  testing::TempDirectory dir;
  const std::string ckpt = dir.file("ck");
  const std::string fresh =
      "train --device cpu --threads 1 --epochs 1000 --batch-size 64 --hidden 512 "
      "--seed 3 --checkpoint-every 1 --checkpoint " +
      ckpt;
  std::mt19937 rng(12345);
  std::uniform_int_distribution<int> delay_ms(250, 1200);
  int resumed_runs = 0, temporaries_seen = 0, states_found = 0;
  for (int round = 0; round < 20; ++round) {
    const bool has_state = std::filesystem::exists(ckpt + "/state.pt");
    states_found += has_state;
    const std::string args = has_state ? "train --device cpu --threads 1 --resume " + ckpt : fresh;
    const std::string log = dir.file("log" + std::to_string(round));
    const Background b = e2e::spawn(args, log);
    if (round == 0) {
      // The first run lives until its first epoch has written a best model, so the eval
      // below always has one to load, however slowly this machine runs the later rounds.
      ASSERT_TRUE(wait_for_file(ckpt + "/checkpoint.pt", b)) << e2e::read_text(log);
    } else if (round % 2 == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
    } else {
      // Odd rounds aim at a write: kill as soon as this run's temporary file appears.
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (!has_temporary(ckpt, b.pid) && std::chrono::steady_clock::now() < give_up) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    }
    kill(b.pid, SIGKILL);
    const bool mid_write = has_temporary(ckpt, b.pid);
    const int status = e2e::wait_exit(b);
    const std::string text = e2e::read_text(log);
    ASSERT_EQ(status, 128 + SIGKILL) << "round " << round << " ended on its own:\n" << text;
    ASSERT_EQ(text.find("error"), std::string::npos) << "round " << round << ":\n" << text;
    const bool resumed = text.find("Resuming from") != std::string::npos;
    resumed_runs += resumed;
    // A temporary appears only once training runs, after the state has loaded.
    if (has_state && mid_write) {
      EXPECT_TRUE(resumed) << "round " << round << " did not resume its state:\n" << text;
    }
    temporaries_seen += mid_write;
  }
  std::cout << "[ info ] " << states_found << " of 20 runs found a saved state, " << resumed_runs
            << " had loaded it when killed; " << temporaries_seen
            << " kills left a half-written temporary behind\n";
  EXPECT_GE(states_found, 5);
  EXPECT_GE(temporaries_seen, 5) << "the kills did not land inside checkpoint writes";
  // Both files load: the best model through eval; the state once more, and this time the
  // run is stopped gracefully.
  const auto eval = e2e::run("eval --threads 1 --checkpoint " + ckpt);
  EXPECT_EQ(eval.status, 0) << eval.output;
  const Background last =
      e2e::spawn("train --device cpu --threads 1 --resume " + ckpt, dir.file("last"));
  ASSERT_TRUE(e2e::wait_for_lines(dir.file("last"), 4, last)) << e2e::read_text(dir.file("last"));
  kill(last.pid, SIGTERM);
  EXPECT_EQ(e2e::wait_exit(last), 143) << e2e::read_text(dir.file("last"));
}

}  // namespace
}  // namespace directgnn
