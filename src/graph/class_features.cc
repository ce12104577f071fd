#include "graph/class_features.h"

#include <ATen/Parallel.h>

#include <cmath>

#include "core/random.h"

namespace directgnn {
namespace {

float gaussian(SplitRng& rng) {
  // Box-Muller; 1 - u keeps the logarithm finite.
  const double u = 1.0 - rng.uniform(), v = rng.uniform();
  return static_cast<float>(std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * M_PI * v));
}

}  // namespace

ClassFeatures::ClassFeatures(int64_t num_classes, int64_t dim, double signal, uint64_t seed)
    : dim_(dim), seed_(seed), means_(static_cast<size_t>(num_classes * dim)) {
  SplitRng rng(mix64(seed, 3));
  for (float& m : means_) m = static_cast<float>(signal) * gaussian(rng);
}

void ClassFeatures::fill(const int64_t* labels, int64_t begin, int64_t end, float* out) const {
  at::parallel_for(begin, end, 1024, [&](int64_t lo, int64_t hi) {
    for (int64_t v = lo; v < hi; ++v) {
      SplitRng r(mix64(seed_, 4, v));
      const float* mu = means_.data() + labels[v] * dim_;
      float* row = out + (v - begin) * dim_;
      for (int64_t f = 0; f < dim_; ++f) row[f] = mu[f] + gaussian(r);
    }
  });
}

}  // namespace directgnn
