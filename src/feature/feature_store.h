// The node feature table and the gather that builds a minibatch's input rows.
//
// Placement today: `host` (the table lives in host memory, possibly a memory-mapped .npy).
// gather(ids) checks every id before any row is read, then copies the rows in parallel on
// the CPU: this is the oracle later GPU methods are tested against. The copy works on row
// bytes, not dtypes, so float32, float16 and bfloat16 tables take the same path.
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <string>

namespace directgnn {

enum class Placement { kHost };

Placement parse_placement(const std::string& name);
std::string placement_name(Placement placement);

class FeatureStore {
 public:
  // `table` is [N, F], contiguous, on the CPU. The store keeps a reference, never a copy.
  explicit FeatureStore(at::Tensor table, Placement placement = Placement::kHost);

  // Rows `ids` (int32 or int64, 1-D, CPU) as a dense [len(ids), F] tensor of the table's dtype.
  at::Tensor gather(const at::Tensor& ids) const;
  // The same into `out` ([len(ids), F], table dtype, contiguous), reusing its memory.
  void gather_into(const at::Tensor& ids, at::Tensor& out) const;

  const at::Tensor& table() const { return table_; }
  int64_t num_rows() const { return table_.size(0); }
  int64_t dim() const { return table_.size(1); }
  int64_t row_bytes() const { return table_.size(1) * table_.element_size(); }
  Placement placement() const { return placement_; }

 private:
  at::Tensor table_;
  Placement placement_;
};

// Throws naming the first id outside [0, num_rows).
void check_ids_in_range(const at::Tensor& ids, int64_t num_rows);

}  // namespace directgnn
