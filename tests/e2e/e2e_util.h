// Helpers of the end-to-end tests: run the real `directgnn` binary and read what it wrote.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

namespace directgnn::e2e {

struct CommandResult {
  int status;
  std::string output;  // stdout and stderr together
};

inline CommandResult run(const std::string& args) {
  const std::string command = std::string(DIRECTGNN_BINARY) + " " + args + " 2>&1";
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
    const std::string command =
        "exec " + std::string(DIRECTGNN_BINARY) + " " + args + " >" + log + " 2>&1";
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

inline nlohmann::json final_record(const std::string& metrics_path) {
  std::ifstream in(metrics_path);
  std::string line, last;
  while (std::getline(in, line)) last = line;
  const nlohmann::json record = nlohmann::json::parse(last);
  EXPECT_EQ(record["event"], "final");
  return record;
}

}  // namespace directgnn::e2e
