// A progress line for long work: redrawn in place on a terminal (stderr) and erased when
// done; silent when stderr is not a terminal, so logs and CI output stay clean.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace directgnn {

class Progress {
 public:
  // A negative total draws nothing (e.g. on ranks other than the one that reports).
  Progress(std::string label, int64_t total);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void update(int64_t done);
  void finish();

 private:
  std::string label_;
  int64_t total_;
  bool enabled_;
  bool finished_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace directgnn
