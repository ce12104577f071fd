// Pieces shared by the CPU sparse kernels over sampled blocks (cpu/aggregate.cc,
// cpu/attention.cc).
#pragma once

#include <ATen/Parallel.h>
#include <ATen/Tensor.h>

#include <algorithm>
#include <cstdint>

#include "core/threads.h"

namespace directgnn::cpu {

// Calls fn with a typed pointer to `indices` (int32 or int64).
template <typename Fn>
void dispatch_ids(const at::Tensor& indices, Fn&& fn) {
  if (indices.scalar_type() == at::kInt) {
    fn(indices.data_ptr<int32_t>());
  } else {
    fn(indices.data_ptr<int64_t>());
  }
}

// Splits columns [0, f) into one share per thread, each a run of whole cache lines (16
// floats), and calls fn(c0, c1) for every non-empty share in parallel. A scatter over edges
// whose threads own disjoint columns needs no atomics, and each sum runs in edge order
// whatever the thread count.
template <typename Fn>
void for_each_column_share(int64_t f, Fn&& fn) {
  const int64_t lines = (f + 15) / 16;
  const int64_t threads = std::min<int64_t>(num_threads(), lines);
  at::parallel_for(0, threads, 1, [&](int64_t t_begin, int64_t t_end) {
    for (int64_t t = t_begin; t < t_end; ++t) {
      const int64_t c0 = std::min(f, lines * t / threads * 16);
      const int64_t c1 = std::min(f, lines * (t + 1) / threads * 16);
      if (c1 > c0) fn(c0, c1);
    }
  });
}

}  // namespace directgnn::cpu
