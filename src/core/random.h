// Counter-based random streams: every random draw derives from (seed, position), so results
// do not depend on which thread computes what.
#pragma once

#include <cstdint>

#include "core/hd.h"

namespace directgnn {

// splitmix64: a counter-based mixer, so that random streams derive from (seed, position)
// and do not depend on which thread computes what.
DGNN_HD inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
DGNN_HD inline uint64_t mix64(uint64_t a, uint64_t b) { return mix64(a ^ mix64(b)); }
DGNN_HD inline uint64_t mix64(uint64_t a, uint64_t b, uint64_t c) { return mix64(mix64(a, b), c); }

// The high 64 bits of a * b.
DGNN_HD inline uint64_t mul_high64(uint64_t a, uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __umul64hi(a, b);
#else
  return static_cast<uint64_t>((static_cast<unsigned __int128>(a) * b) >> 64);
#endif
}

// Small fast generator for per-item streams (xorshift64*), seeded through mix64. The same
// stream on the CPU and in CUDA kernels.
class SplitRng {
 public:
  DGNN_HD explicit SplitRng(uint64_t seed) : state_(mix64(seed) | 1) {}
  DGNN_HD uint64_t next() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return state_ * 0x2545f4914f6cdd1dULL;
  }
  // Uniform in [0, n) (Lemire's multiply-shift; bias below 2^-32 for n < 2^32).
  DGNN_HD uint64_t below(uint64_t n) { return mul_high64(next(), n); }
  // Uniform in [0, 1).
  DGNN_HD double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

// Shuffles values[0, n) in place: Fisher-Yates with SplitRng(seed), serial, so the order
// depends on the seed alone.
inline void seeded_shuffle(int64_t* values, int64_t n, uint64_t seed) {
  SplitRng rng(seed);
  for (int64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<int64_t>(rng.below(static_cast<uint64_t>(i + 1)));
    const int64_t t = values[i];
    values[i] = values[j];
    values[j] = t;
  }
}

}  // namespace directgnn
