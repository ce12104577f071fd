// The one per-node pick of both samplers: k of a node's deg neighbours, uniformly without
// replacement, one pick at a time and with no memory. Pick j is position perm(j) of a keyed
// pseudo-random permutation of [0, deg), keyed by (seed, hop, node). The CPU sampler
// (sampling/cpu/) and the GPU sampler's kernel (sampling/cuda/, one warp per node) both call
// this, so for the same seed they draw the same neighbours, and the CPU sampler users run is
// the GPU sampler's oracle.
//
// The permutation is a 6-round Feistel network over [0, 2^w) (the smallest power of two >= deg;
// a left part of floor(w/2) bits and a right part of the rest), walked back into [0, deg) by
// repeating it (cycle walking), then shifted by a uniform offset mod deg. It is a bijection, so
// the first k values are k distinct positions; the offset makes every position equally likely
// for every pick; six rounds make pairs of picks about as even as a random draw's
// (tests/sampling/sampler_test.cc measures both). The domain is under 2 deg, so a pick costs
// under two evaluations on average. Each round adds the other part to a key, multiplies by an
// odd key and keeps the top bits of the product (multiplicative hashing); the keys are drawn
// once per node. Measured against stronger variants (splitmix rounds, 8 to 12 rounds) it is about
// as even and the cheapest: about 11 ns a pick on one core of the CI machine, against 4 ns for
// the Floyd draw the CPU sampler used before, which has no memoryless twin on a GPU.
#pragma once

#include <cstdint>

#include "core/hd.h"
#include "core/random.h"

namespace directgnn::uniform_pick {

class Permutation {
 public:
  static constexpr uint32_t kRounds = 6;

  // A permutation of [0, size) for one node's stream `key`.
  DGNN_HD Permutation(uint64_t size, uint64_t key) : n_(size) {
    uint32_t bits = 0;
    while ((uint64_t{1} << bits) < size) ++bits;
    left_bits_ = bits / 2;
    right_bits_ = bits - left_bits_;
    right_mask_ = (uint64_t{1} << right_bits_) - 1;
    // Three draws per node; the rounds' keys step through Weyl sequences from two of them.
    const uint64_t add = mix64(key), mul = mix64(key + 1);
    for (uint32_t r = 0; r < kRounds; ++r) {
      add_[r] = add + r * 0x9e3779b97f4a7c15ULL;
      mul_[r] = (mul + r * 0xda942042e4dd58b5ULL) | 1;
    }
    offset_ = mul_high64(mix64(key + 2), size);
  }

  // The position picked `j`-th (j < size).
  DGNN_HD uint64_t operator()(uint64_t j) const { return shifted(walk(feistel(j))); }

  // Picks 0 .. count-1 into out (count <= size), four walks at a time so their rounds overlap.
  DGNN_HD void pick(int64_t count, int64_t* out) const {
    int64_t j = 0;
    for (; j + 4 <= count; j += 4) {
      uint64_t x[4];
      for (int i = 0; i < 4; ++i) x[i] = feistel(static_cast<uint64_t>(j + i));
      while (x[0] >= n_ || x[1] >= n_ || x[2] >= n_ || x[3] >= n_) {
        for (int i = 0; i < 4; ++i) x[i] = x[i] >= n_ ? feistel(x[i]) : x[i];
      }
      for (int i = 0; i < 4; ++i) out[j + i] = static_cast<int64_t>(shifted(x[i]));
    }
    for (; j < count; ++j) out[j] = static_cast<int64_t>((*this)(static_cast<uint64_t>(j)));
  }

 private:
  // The top `bits` bits of (x + add) * mul: every bit of x reaches them.
  DGNN_HD uint64_t round(uint64_t x, uint32_t r, uint32_t bits) const {
    return bits == 0 ? 0 : ((x + add_[r]) * mul_[r]) >> (64 - bits);
  }

  DGNN_HD uint64_t feistel(uint64_t x) const {
    uint64_t left = x >> right_bits_, right = x & right_mask_;
    for (uint32_t r = 0; r < kRounds; r += 2) {
      left ^= round(right, r, left_bits_);
      right ^= round(left, r + 1, right_bits_);
    }
    return (left << right_bits_) | right;
  }

  DGNN_HD uint64_t walk(uint64_t x) const {
    while (x >= n_) x = feistel(x);
    return x;
  }

  DGNN_HD uint64_t shifted(uint64_t x) const {
    x += offset_;
    return x >= n_ ? x - n_ : x;
  }

  uint64_t n_ = 0;
  uint32_t left_bits_ = 0, right_bits_ = 0;
  uint64_t right_mask_ = 0;
  uint64_t offset_ = 0;  // uniform in [0, n)
  uint64_t add_[kRounds] = {}, mul_[kRounds] = {};
};

// How many neighbours a node of degree `deg` keeps at `fanout` (-1: all).
DGNN_HD inline int64_t pick_count(int64_t deg, int64_t fanout) {
  return fanout < 0 || deg <= fanout ? deg : fanout;
}

// Whether the node keeps every neighbour, in order (no permutation is needed).
DGNN_HD inline bool keeps_all(int64_t deg, int64_t fanout) { return fanout < 0 || deg <= fanout; }

// The random stream of one node at one hop.
DGNN_HD inline uint64_t node_key(uint64_t seed, uint64_t hop, uint64_t node) {
  return mix64(seed, hop, node);
}

// Edge offset (from the node's first edge) of pick `j` of a node of degree `deg`. Callers that
// pick many neighbours of a node build its Permutation once instead.
DGNN_HD inline int64_t pick_offset(int64_t deg, int64_t fanout, uint64_t key, int64_t j) {
  if (keeps_all(deg, fanout)) return j;  // every neighbour, in order
  return static_cast<int64_t>(
      Permutation(static_cast<uint64_t>(deg), key)(static_cast<uint64_t>(j)));
}

}  // namespace directgnn::uniform_pick
