// Node pairs a sample leaves out of its neighbourhoods: link prediction's seed edges, so that a
// batch's positives are not in the messages that score them (GraphBolt's exclude_seed_edges).
// An edge u -> v (u in v's list) is dropped when (u, v) or (v, u) is listed: a pair and its
// reverse alike. Directed pairs drop u -> v only when (u, v) is listed: a relation between two
// node types, whose ids on either side are of different types.
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace directgnn {

class ExcludedPairs {
 public:
  ExcludedPairs() = default;
  // `pairs`: int64 [B, 2] node ids on the CPU.
  explicit ExcludedPairs(const at::Tensor& pairs, bool both_directions = true);

  bool empty() const { return keys_.empty(); }
  // Whether row v can lose an edge (v is an endpoint of a listed pair; directed: its second).
  bool touches(int64_t v) const;
  // Whether the edge u -> v is left out.
  bool contains(int64_t u, int64_t v) const;
  // The pairs as given (int64 [B, 2], CPU): what the GPU twin builds its keys from.
  const at::Tensor& pairs() const { return pairs_; }

 private:
  at::Tensor pairs_;
  std::vector<std::pair<int64_t, int64_t>> keys_;  // (u, v) dropped, sorted
  std::vector<int64_t> nodes_;                     // the rows that lose edges, sorted, unique
};

}  // namespace directgnn
