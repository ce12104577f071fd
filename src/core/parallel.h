// Parallel scans shared by the validators.
#pragma once

#include <ATen/Parallel.h>

#include <atomic>
#include <cstdint>
#include <limits>

namespace directgnn {

// The smallest i in [0, n) for which `bad(i)` holds, or -1. Scans in parallel, and a chunk
// stops early once an earlier hit is known, so errors name the first bad entry whatever the
// thread count.
template <typename Pred>
int64_t first_index_where(int64_t n, int64_t grain, Pred bad) {
  constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  std::atomic<int64_t> found{kNone};
  at::parallel_for(0, n, grain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end && i < found.load(std::memory_order_relaxed); ++i) {
      if (bad(i)) {
        int64_t current = found.load();
        while (i < current && !found.compare_exchange_weak(current, i)) {
        }
        return;
      }
    }
  });
  const int64_t value = found.load();
  return value == kNone ? -1 : value;
}

// How many i in [0, n) satisfy `bad(i)`, and the smallest such i (-1 when none); in parallel,
// with the same answer whatever the thread count.
struct Hits {
  int64_t count = 0, first = -1;
};
template <typename Pred>
Hits count_where(int64_t n, int64_t grain, Pred bad) {
  constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  std::atomic<int64_t> count{0}, found{kNone};
  at::parallel_for(0, n, grain, [&](int64_t begin, int64_t end) {
    int64_t local = 0, first = kNone;
    for (int64_t i = begin; i < end; ++i) {
      if (!bad(i)) continue;
      ++local;
      if (first == kNone) first = i;
    }
    count += local;
    int64_t current = found.load();
    while (first < current && !found.compare_exchange_weak(current, first)) {
    }
  });
  const int64_t value = found.load();
  return {count.load(), value == kNone ? -1 : value};
}

}  // namespace directgnn
