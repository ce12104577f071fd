#include "nn/dropout.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <mutex>

namespace directgnn {
namespace {

constexpr int64_t kGrain = 1 << 15;

// A stateless hash of (seed, index): no dependency from one element to the next, so the
// loop vectorises, and the mask is the same whichever thread draws which element.
inline uint32_t draw24(uint64_t seed, uint64_t i) {
  uint64_t x = (seed + i) * 0x9e3779b97f4a7c15ULL;
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ULL;
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ULL;
  return static_cast<uint32_t>(x >> 40);
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
    for (int64_t i = begin; i < end; ++i) {
      m[i] = draw24(seed, static_cast<uint64_t>(i)) >= threshold ? scale : 0.0f;
    }
  });
  return x * mask;
}

}  // namespace directgnn
