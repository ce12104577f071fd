// Helpers of the end-to-end tests: run the real `directgnn` binary and read what it wrote.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
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

inline nlohmann::json final_record(const std::string& metrics_path) {
  std::ifstream in(metrics_path);
  std::string line, last;
  while (std::getline(in, line)) last = line;
  const nlohmann::json record = nlohmann::json::parse(last);
  EXPECT_EQ(record["event"], "final");
  return record;
}

}  // namespace directgnn::e2e
