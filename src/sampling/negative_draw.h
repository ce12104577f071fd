// The draw of one negative, shared by the CPU link sampler (sampling/link_sampler.cc) and its
// GPU twin (sampling/cuda/negative_kernels.cu), so both give the same negatives for a seed.
//
// Negative `index` of a batch draws from its own stream SplitRng(mix64(seed, kTag, index)): a
// source (unless given, as triplet's positive source) then a destination, each uniform over
// the nodes or by degree^0.75 (the first node whose cumulative weight exceeds a uniform draw
// times the total). With exact negatives a self-pair or an edge of the graph in either
// direction is drawn again, up to kExactTries times.
#pragma once

#include <cstdint>

#include "core/hd.h"
#include "core/random.h"

namespace directgnn::negative_draw {

constexpr int kExactTries = 1000;    // draws for one exact negative before giving up
constexpr uint64_t kTag = 0x6e6567;  // "neg": the negatives' stream, apart from picks

// What a draw reads: host addresses on the CPU, device addresses in a kernel.
struct Source {
  int64_t num_nodes = 0;
  const double* cumulative = nullptr;  // degree^0.75 summed over the nodes; null: uniform
  // Exact negatives: the graph with every row sorted (indices int32 or int64); indptr null: off.
  const int64_t* indptr = nullptr;
  const int32_t* ids32 = nullptr;
  const int64_t* ids64 = nullptr;
};

// The first i in [0, n) with cumulative[i] > target (n - 1 when none is).
DGNN_HD inline int64_t first_above(const double* cumulative, int64_t n, double target) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (cumulative[mid] > target) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo < n ? lo : n - 1;
}

DGNN_HD inline int64_t draw_node(const Source& s, SplitRng& rng) {
  if (s.cumulative == nullptr) {
    return static_cast<int64_t>(rng.below(static_cast<uint64_t>(s.num_nodes)));
  }
  const double target = rng.uniform() * s.cumulative[s.num_nodes - 1];
  return first_above(s.cumulative, s.num_nodes, target);
}

// Whether `value` is in the sorted row ids[begin, end).
template <typename T>
DGNN_HD bool in_sorted_row(const T* ids, int64_t begin, int64_t end, int64_t value) {
  while (begin < end) {
    const int64_t mid = begin + (end - begin) / 2;
    const auto here = static_cast<int64_t>(ids[mid]);
    if (here == value) return true;
    if (here < value) {
      begin = mid + 1;
    } else {
      end = mid;
    }
  }
  return false;
}

// Whether src -> dst is an edge (src in dst's row).
DGNN_HD inline bool has_edge(const Source& s, int64_t src, int64_t dst) {
  const int64_t begin = s.indptr[dst], end = s.indptr[dst + 1];
  return s.ids32 != nullptr ? in_sorted_row(s.ids32, begin, end, src)
                            : in_sorted_row(s.ids64, begin, end, src);
}

// Negative `index`: a pair (src < 0: both ends drawn) or a destination for `src`; false when
// exact negatives found no non-edge in kExactTries draws.
DGNN_HD inline bool draw(const Source& s, uint64_t seed, uint64_t index, int64_t src,
                         int64_t* out_src, int64_t* out_dst) {
  SplitRng rng(mix64(seed, kTag, index));
  for (int tries = 0; tries < kExactTries; ++tries) {
    *out_src = src >= 0 ? src : draw_node(s, rng);
    *out_dst = draw_node(s, rng);
    if (s.indptr == nullptr) return true;
    if (*out_src != *out_dst && !has_edge(s, *out_src, *out_dst) &&
        !has_edge(s, *out_dst, *out_src)) {
      return true;
    }
  }
  return false;
}

}  // namespace directgnn::negative_draw
