// The weighted pick both samplers use: k of a node's deg neighbours without replacement, each
// draw with probability proportional to its edge's weight among those left (Efraimidis and
// Spirakis's A-ES). Edge j (position from the node's first edge) gets the key log(u_j) / w_j, u_j
// uniform in (0, 1) from (node key, j); the picks are the k largest keys, in descending order,
// ties broken by the smaller position. An edge of weight 0 is never drawn (DGL's rule for zero
// probabilities), so a node with fewer than k edges of positive weight keeps just those; but a
// node with deg <= k keeps every neighbour in CSR order, weights or not (pyg-lib's rule).
//
// The CPU sampler sorts the keys; the GPU kernel, one warp per node, finds each next key by a
// warp reduction. For both to pick the same neighbours the key must be the same bits on both, so
// the logarithm is this header's own, from additions, multiplications and divisions rounded to
// nearest: the GPU's intrinsics never fuse, and every host file that includes this header is
// compiled with -ffp-contract=off (src/CMakeLists.txt, tests/CMakeLists.txt), since g++ fuses
// a * b + c wherever the target has FMA. WeightedPick.KeysAreExactBits checks the bits.
#pragma once

#include <cstdint>
#include <cstring>

#include "core/hd.h"
#include "core/random.h"

namespace directgnn::weighted_pick {

DGNN_HD inline double add_rn(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

DGNN_HD inline double mul_rn(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

DGNN_HD inline double div_rn(double a, double b) {
#ifdef __CUDA_ARCH__
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}

// ln(x) for x in (0, 1]: x = m 2^e with m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s) with
// s = (m - 1) / (m + 1), |s| < 0.172, by its odd series to s^23 (error below 1e-17).
DGNN_HD inline double log_unit(double x) {
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  int exponent = static_cast<int>((bits >> 52) & 0x7ff) - 1023;
  bits = (bits & ((uint64_t{1} << 52) - 1)) | (uint64_t{1023} << 52);
  double m;
  memcpy(&m, &bits, sizeof m);
  if (m > 1.4142135623730951) {
    m = mul_rn(m, 0.5);
    exponent += 1;
  }
  const double s = div_rn(add_rn(m, -1.0), add_rn(m, 1.0));
  const double s2 = mul_rn(s, s);
  double series = 1.0 / 23;
  for (int k = 21; k >= 1; k -= 2) series = add_rn(mul_rn(series, s2), 1.0 / k);
  const double ln_m = mul_rn(mul_rn(2.0, s), series);
  return add_rn(mul_rn(static_cast<double>(exponent), 0.6931471805599453), ln_m);
}

// The key of edge j of the node whose stream is `node_key`, for weight w >= 0 (finite).
DGNN_HD inline double key(uint64_t node_key, int64_t j, float w) {
  // u in (0, 1): a 52-bit draw plus a half (exact in a double), never 0 or 1, so log(u) < 0
  // and w = 0 gives -inf.
  const uint64_t draw = mix64(node_key, static_cast<uint64_t>(j)) >> 12;
  const double u = mul_rn(add_rn(static_cast<double>(draw), 0.5), 1.0 / 4503599627370496.0);
  return div_rn(log_unit(u), static_cast<double>(w));
}

// How many neighbours a node keeps: all when deg <= fanout (or fanout is -1), else up to
// `fanout` of its `positive` edges of weight > 0.
DGNN_HD inline int64_t pick_count(int64_t deg, int64_t fanout, int64_t positive) {
  if (fanout < 0 || deg <= fanout) return deg;
  return positive < fanout ? positive : fanout;
}

// Whether (key a at position ja) is picked before (key b at position jb).
DGNN_HD inline bool before(double a, int64_t ja, double b, int64_t jb) {
  return a > b || (a == b && ja < jb);
}

// One lane's share of a warp's weighted pick (the GPU kernel; tests run 32 of them in turn).
// Lane l owns positions l, l + lanes, ...; it keeps the best kSize of its candidates (positive
// weight, after its last pick in pick order), best first, computing each key once per refill
// rather than once per pick. The warp's next pick is the best of the lanes' fronts; the lane
// that owns it pops it, and refills when empty while more remain.
struct LaneTop {
  static constexpr int kSize = 8;
  double key[kSize];
  int64_t pos[kSize];
  int size = 0, head = 0;
  bool more = false;      // candidates beyond the kept ones remain
  bool has_last = false;  // a pick was taken from this lane
  double last_key = 0;    // its key and position
  int64_t last_pos = 0;

  DGNN_HD bool empty() const { return head == size; }

  // Keeps the best kSize of the lane's candidates after its last pick.
  DGNN_HD void fill(uint64_t node_key, const float* w, int64_t deg, int lane, int lanes) {
    size = head = 0;
    int64_t found = 0;
    for (int64_t j = lane; j < deg; j += lanes) {
      if (!(w[j] > 0.0f)) continue;
      const double k = weighted_pick::key(node_key, j, w[j]);
      if (has_last && !before(last_key, last_pos, k, j)) continue;
      ++found;
      if (size == kSize && !before(k, j, key[kSize - 1], pos[kSize - 1])) continue;
      int at = size < kSize ? size++ : kSize - 1;
      for (; at > 0 && before(k, j, key[at - 1], pos[at - 1]); --at) {
        key[at] = key[at - 1];
        pos[at] = pos[at - 1];
      }
      key[at] = k;
      pos[at] = j;
    }
    more = found > kSize;
  }

  // Takes the front (the warp picked it), refilling when the kept ones run out.
  DGNN_HD void pop(uint64_t node_key, const float* w, int64_t deg, int lane, int lanes) {
    has_last = true;
    last_key = key[head];
    last_pos = pos[head];
    ++head;
    if (empty() && more) fill(node_key, w, deg, lane, lanes);
  }
};

}  // namespace directgnn::weighted_pick
