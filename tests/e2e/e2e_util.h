// Helpers of the end-to-end tests: run the real `directgnn` binary and read what it wrote.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace directgnn::e2e {

struct CommandResult {
  int status;
  std::string output;  // stdout and stderr together
};

// The `directgnn` binary under test: $DIRECTGNN_CLI where set (a test binary carried to another
// machine with the CLI beside it, bench/gpu/), else the one built with these tests.
inline std::string cli_binary() {
  const char* env = std::getenv("DIRECTGNN_CLI");
  return env != nullptr && *env != '\0' ? std::string(env) : std::string(DIRECTGNN_BINARY);
}

// `directgnn ARGS`, or `env ENV directgnn ARGS` when `env` is given (env(1)'s arguments:
// "-u NAME", "NAME=VALUE").
inline CommandResult run(const std::string& args, const std::string& env = "") {
  const std::string command =
      (env.empty() ? "" : "env " + env + " ") + cli_binary() + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  std::string output;
  std::array<char, 4096> buffer;
  while (size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) output.append(buffer.data(), n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), output};
}

// A directgnn process running in the background, its output going to `log`.
struct Background {
  pid_t pid = -1;
  std::string log;
};

inline Background spawn(const std::string& args, const std::string& log) {
  Background b;
  b.log = log;
  b.pid = fork();
  if (b.pid == 0) {
    const std::string command = "exec " + cli_binary() + " " + args + " >" + log + " 2>&1";
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return b;
}

// Waits for the process; its exit code, or 128 + the signal that killed it.
inline int wait_exit(const Background& b) {
  int status = 0;
  waitpid(b.pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Waits until `path` holds at least `lines` lines (or the process has ended, or 60 s passed).
inline bool wait_for_lines(const std::string& path, int lines, const Background& b) {
  for (int i = 0; i < 6000; ++i) {
    const std::string text = read_text(path);
    if (std::count(text.begin(), text.end(), '\n') >= lines) return true;
    if (waitpid(b.pid, nullptr, WNOHANG) != 0) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Runs `args` (which write their metrics to `metrics`) in the background and sends SIGTERM once
// the first epoch's record is there. The exit status: 143 when stopped, 0 when the run had
// already ended (its status is then reaped by the wait and reads 0).
inline int sigterm_after_first_epoch(const std::string& args, const std::string& metrics,
                                     const std::string& log) {
  const Background b = spawn(args, log);
  wait_for_lines(metrics, 1, b);
  kill(b.pid, SIGTERM);
  return wait_exit(b);
}

// Runs `args` with --checkpoint `ck` and --metrics `metrics`, stops it by SIGTERM after its
// first epoch, then gives the same command again with --resume `ck`, as people rerun a job. The
// resumed run's result; its output follows the stopped run's log, which must say where the
// state was saved and how to resume. A run that ended before the signal is not resumed.
inline CommandResult stopped_and_resumed(const std::string& args, const std::string& ck,
                                         const std::string& metrics, const std::string& log) {
  const std::string command = args + " --checkpoint " + ck + " --metrics " + metrics;
  const int status = sigterm_after_first_epoch(command, metrics, log);
  const std::string stopped = read_text(log);
  EXPECT_TRUE(status == 143 || status == 0) << stopped;
  if (status == 0) return {0, stopped + "(the run ended before the signal: nothing to resume)"};
  EXPECT_NE(stopped.find("Interrupted by SIGTERM"), std::string::npos) << stopped;
  EXPECT_NE(stopped.find("Training state saved in"), std::string::npos) << stopped;
  EXPECT_NE(stopped.find("directgnn train --resume " + ck), std::string::npos) << stopped;
  CommandResult resumed = run(command + " --resume " + ck);
  EXPECT_NE(resumed.output.find("Resuming from " + ck), std::string::npos) << resumed.output;
  resumed.output = stopped + resumed.output;
  return resumed;
}

inline std::vector<nlohmann::json> read_jsonl(const std::string& path) {
  std::ifstream in(path);
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

inline nlohmann::json final_record(const std::string& metrics_path) {
  std::ifstream in(metrics_path);
  std::string line, last;
  while (std::getline(in, line)) last = line;
  const nlohmann::json record = nlohmann::json::parse(last);
  EXPECT_EQ(record["event"], "final");
  return record;
}

}  // namespace directgnn::e2e
