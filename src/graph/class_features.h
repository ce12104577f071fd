// Node features that make a classification task learnable: the mean of the node's class
// (signal x unit Gaussian per coordinate, fixed by the seed) plus unit Gaussian noise from the
// node's own random stream. Any range of rows can be produced on its own, in any order and
// on any number of threads, with the same result: generators write huge tables in chunks.
#pragma once

#include <cstdint>
#include <vector>

namespace directgnn {

class ClassFeatures {
 public:
  ClassFeatures(int64_t num_classes, int64_t dim, double signal, uint64_t seed);

  // Rows [begin, end) into `out` (row-major [end - begin, dim]); `labels` is indexed by node
  // id and must hold classes in [0, num_classes).
  void fill(const int64_t* labels, int64_t begin, int64_t end, float* out) const;

  int64_t dim() const { return dim_; }

 private:
  int64_t dim_;
  uint64_t seed_;
  std::vector<float> means_;  // [num_classes, dim]
};

}  // namespace directgnn
