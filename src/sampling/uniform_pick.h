// Picking k of a node's deg neighbours uniformly without replacement, one pick at a time and
// with no memory: pick j is position perm(j) of a keyed pseudo-random permutation of
// [0, deg). The GPU sampler's kernel (one thread per pick) and its CPU twin both call this,
// so the CPU tests check the very arithmetic the GPU runs.
//
// The permutation is a 4-round Feistel network over [0, 4^h) (the smallest power of four
// >= deg), walked back into [0, deg) by repeating it (cycle walking): a bijection, so the
// first k values are k distinct positions. The domain is under 4 deg, so a pick costs under
// four rounds of walking on average.
#pragma once

#include <cstdint>

#include "core/hd.h"
#include "core/random.h"

namespace directgnn::uniform_pick {

struct Permutation {
  uint64_t n = 0;     // domain size (deg)
  uint64_t key = 0;   // per node and hop
  uint32_t half = 0;  // bits in each half of the Feistel domain
  uint64_t mask = 0;

  DGNN_HD Permutation(uint64_t size, uint64_t k) : n(size), key(k) {
    uint32_t bits = 0;
    while ((uint64_t{1} << bits) < size) ++bits;
    half = (bits + 1) / 2;
    if (half == 0) half = 1;
    mask = (uint64_t{1} << half) - 1;
  }

  DGNN_HD uint64_t round_function(uint64_t r, uint32_t round) const {
    return mix64(key + round, r) & mask;
  }

  DGNN_HD uint64_t feistel(uint64_t x) const {
    uint64_t left = x >> half, right = x & mask;
    for (uint32_t round = 0; round < 4; ++round) {
      const uint64_t next = left ^ round_function(right, round);
      left = right;
      right = next;
    }
    return (left << half) | right;
  }

  // The position picked `j`-th (j < n).
  DGNN_HD uint64_t operator()(uint64_t j) const {
    uint64_t x = feistel(j);
    while (x >= n) x = feistel(x);
    return x;
  }
};

// How many neighbours a node of degree `deg` keeps at fan-out `fanout` (-1: all).
DGNN_HD inline int64_t pick_count(int64_t deg, int64_t fanout) {
  return fanout < 0 || deg <= fanout ? deg : fanout;
}

// The random stream of one node at one hop.
DGNN_HD inline uint64_t node_key(uint64_t seed, uint64_t hop, uint64_t node) {
  return mix64(seed, hop, node);
}

// Edge offset (from the node's first edge) of pick `j` of a node of degree `deg`.
DGNN_HD inline int64_t pick_offset(int64_t deg, int64_t fanout, uint64_t key, int64_t j) {
  if (fanout < 0 || deg <= fanout) return j;  // every neighbour, in order
  return static_cast<int64_t>(
      Permutation(static_cast<uint64_t>(deg), key)(static_cast<uint64_t>(j)));
}

}  // namespace directgnn::uniform_pick
