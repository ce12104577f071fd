// Wall-clock timing of a stage: seconds since a steady_clock time point.
#pragma once

#include <chrono>

namespace directgnn {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace directgnn
