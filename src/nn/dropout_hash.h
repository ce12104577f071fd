// The dropout mask's random draws, shared by the CPU loop and the CUDA kernel so both keep
// exactly the same elements for the same seed.
#pragma once

#include <cstdint>

#include "core/hd.h"
#include "core/random.h"

namespace directgnn::dropout_hash {

// A stateless hash of (key, index) to 24 uniform bits (murmur3's finaliser): no dependency
// from one element to the next, and the same mask whichever thread draws which element.
DGNN_HD inline uint32_t draw24(uint32_t key, uint32_t low) {
  uint32_t h = low * 0x9e3779b9u + key;
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h >> 8;
}

// The key of the 2^32-element slice `high` of the mask.
DGNN_HD inline uint32_t slice_key(uint64_t seed, uint64_t high) {
  return static_cast<uint32_t>(mix64(seed, high));
}

// Elements are kept when their draw is >= this.
inline uint32_t threshold(double p) { return static_cast<uint32_t>(p * double(1u << 24)); }

}  // namespace directgnn::dropout_hash
