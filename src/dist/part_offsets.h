// The P+1 offsets of a partition book over P ranks (graph/partition.h): part k owns the ids
// [offsets[k], offsets[k+1]). What the exchanges over its parts share (dist/feature_exchange.h,
// dist/hop_exchange.h): the offsets' checks, the owner of an id, and an all-to-all's counts
// read back as a list.
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <vector>

namespace directgnn {

class PartOffsets {
 public:
  // Throws, naming `what`, unless there are parts + 1 offsets and they never decrease.
  PartOffsets(std::vector<int64_t> offsets, int parts, const char* what);
  // The owner (part) of each of `ids` (int64): the number of parts after the first that start
  // at or before it.
  at::Tensor owners(const at::Tensor& ids) const;
  int64_t operator[](size_t k) const { return offsets_[k]; }
  int64_t back() const { return offsets_.back(); }
  int64_t size(int part) const { return offsets_[part + 1] - offsets_[part]; }

 private:
  std::vector<int64_t> offsets_;
  at::Tensor inner_;  // int64 [P-1]: the parts' first ids but the first
};

// The entries of a 1-D int64 tensor (an all-to-all's counts), as a list.
std::vector<int64_t> to_vector(const at::Tensor& counts);

}  // namespace directgnn
