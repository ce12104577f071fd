#include "core/progress.h"

#include <unistd.h>

#include <cstdio>

namespace directgnn {

Progress::Progress(std::string label, int64_t total)
    : label_(std::move(label)),
      total_(total),
      enabled_(total >= 0 && isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

Progress::~Progress() { finish(); }

void Progress::update(int64_t done) {
  if (!enabled_ || finished_) return;
  const auto now = std::chrono::steady_clock::now();
  if (done < total_ && now - last_draw_ < std::chrono::milliseconds(200)) return;
  last_draw_ = now;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  const double fraction =
      total_ > 0 ? static_cast<double>(done) / static_cast<double>(total_) : 1.0;
  std::fprintf(stderr, "\r%s: %5.1f%% (%lld/%lld) %.1fs", label_.c_str(), 100.0 * fraction,
               static_cast<long long>(done), static_cast<long long>(total_), seconds);
  std::fflush(stderr);
}

void Progress::finish() {
  if (!enabled_ || finished_) return;
  finished_ = true;
  // Erase the line: what follows (an epoch summary, a result) takes its place.
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
}

}  // namespace directgnn
