#include "nn/dropout.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <mutex>

#include "core/random.h"

namespace directgnn {
namespace {

constexpr int64_t kGrain = 1 << 15;

// A stateless hash of (seed, index): no dependency from one element to the next, so the
// loop vectorises (32-bit multiplies; murmur3's finaliser), and the mask is the same
// whichever thread draws which element. `key` folds the seed with the index's high word.
inline uint32_t draw24(uint32_t key, uint32_t low) {
  uint32_t h = low * 0x9e3779b9u + key;
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h >> 8;
}

uint64_t next_seed() {
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  return gen.get<at::CPUGeneratorImpl>()->random64();
}

}  // namespace

at::Tensor dropout(const at::Tensor& x, double p, bool training) {
  if (!training || p <= 0) return x;
  const uint64_t seed = next_seed();
  at::Tensor mask = at::empty(x.sizes(), x.options().requires_grad(false));
  float* m = mask.data_ptr<float>();
  const int64_t n = mask.numel();
  const float scale = static_cast<float>(1.0 / (1.0 - p));
  // Keep an element when its 24-bit uniform draw is >= p.
  const auto threshold = static_cast<uint32_t>(p * static_cast<double>(1u << 24));
  at::parallel_for(0, n, kGrain, [&](int64_t begin, int64_t end) {
    // Split at multiples of 2^32 so the inner loop runs on 32-bit indices.
    for (int64_t lo = begin; lo < end;) {
      const int64_t hi = std::min(end, ((lo >> 32) + 1) << 32);
      const auto key = static_cast<uint32_t>(mix64(seed, static_cast<uint64_t>(lo >> 32)));
      const auto base = static_cast<uint32_t>(lo);
      // Locals, not captured references: the compiler must see they cannot alias `out`.
      float* out = m + lo;
      const float keep = scale;
      const uint32_t cut = threshold;
      const int64_t len = hi - lo;
      for (int64_t i = 0; i < len; ++i) {
        out[i] = draw24(key, base + static_cast<uint32_t>(i)) >= cut ? keep : 0.0f;
      }
      lo = hi;
    }
  });
  return x * mask;
}

}  // namespace directgnn
