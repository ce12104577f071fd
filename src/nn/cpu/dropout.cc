#include "nn/cpu/dropout.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>

#include "nn/dropout_hash.h"

namespace directgnn::cpu {
namespace {

constexpr int64_t kGrain = 1 << 15;

}  // namespace

at::Tensor dropout_mask(const at::Tensor& x, uint64_t seed, double p) {
  using dropout_hash::draw24;
  at::Tensor mask = at::empty(x.sizes(), x.options().requires_grad(false));
  float* m = mask.data_ptr<float>();
  const int64_t n = mask.numel();
  const float scale = static_cast<float>(1.0 / (1.0 - p));
  // Keep an element when its 24-bit uniform draw is >= p.
  const uint32_t threshold = dropout_hash::threshold(p);
  at::parallel_for(0, n, kGrain, [&](int64_t begin, int64_t end) {
    // Split at multiples of 2^32 so the inner loop runs on 32-bit indices.
    for (int64_t lo = begin; lo < end;) {
      const int64_t hi = std::min(end, ((lo >> 32) + 1) << 32);
      const uint32_t key = dropout_hash::slice_key(seed, static_cast<uint64_t>(lo >> 32));
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
  return mask;
}

}  // namespace directgnn::cpu
