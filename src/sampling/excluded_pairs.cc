#include "sampling/excluded_pairs.h"

#include <ATen/ATen.h>

#include <algorithm>

namespace directgnn {

ExcludedPairs::ExcludedPairs(const at::Tensor& pairs, bool both_directions) {
  pairs_ = pairs.to(at::kLong).contiguous();
  const at::Tensor& p = pairs_;
  const int64_t* ids = p.data_ptr<int64_t>();
  for (int64_t i = 0; i < p.size(0); ++i) {
    const int64_t u = ids[2 * i], v = ids[2 * i + 1];
    keys_.emplace_back(u, v);
    nodes_.push_back(v);
    if (!both_directions) continue;
    keys_.emplace_back(v, u);
    nodes_.push_back(u);
  }
  std::sort(keys_.begin(), keys_.end());
  keys_.erase(std::unique(keys_.begin(), keys_.end()), keys_.end());
  std::sort(nodes_.begin(), nodes_.end());
  nodes_.erase(std::unique(nodes_.begin(), nodes_.end()), nodes_.end());
}

bool ExcludedPairs::touches(int64_t v) const {
  return std::binary_search(nodes_.begin(), nodes_.end(), v);
}

bool ExcludedPairs::contains(int64_t u, int64_t v) const {
  return std::binary_search(keys_.begin(), keys_.end(), std::make_pair(u, v));
}

}  // namespace directgnn
