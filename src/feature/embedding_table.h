// Learnable node embeddings (DGL's NodeEmbedding, PyG's Embedding(sparse=True) recipes): a
// [rows, dim] float32 table in host memory, read like a feature table and updated only at the
// rows a batch read, from the gradient of those rows, by a sparse optimiser:
//
//   row-wise Adagrad (the default; one float of state per row, as torchrec's RowWiseAdagrad):
//     s[i] += mean_j g[i, j]^2;   w[i] -= lr * g[i] / (sqrt(s[i]) + eps)
//   sparse Adam (PyTorch's SparseAdam: moments per element, touched rows only, one step count):
//     t += 1; m[i] = b1 m[i] + (1 - b1) g[i]; v[i] = b2 v[i] + (1 - b2) g[i]^2;
//     w[i] -= lr * (m[i] / (1 - b1^t)) / (sqrt(v[i] / (1 - b2^t)) + eps)
//
// weight_decay adds weight_decay * w[i] to g[i] first (an L2 penalty on the rows a step reads).
//
// Rows are independent, so the update runs in parallel over rows with the same result for any
// thread count. The table and its state are saved as .npy files (atomically), never inside the
// model's checkpoint payload: a table can be larger than memory is comfortable with.
//
// Where the table lives on a GPU run (the optimiser's state always stays in host memory, where
// the update runs):
//   host    plain host memory; a batch's rows are gathered by CPU threads and copied over.
//   pinned  the same memory registered in place with cudaHostRegister (mapped, writable by the
//           CPU): GPU threads read a batch's rows straight from it (the aligned zero-copy
//           gather, feature/feature_store.h), the CPU updates them in place after the step;
//           the whole table is never on the device.
#pragma once

#include <ATen/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <memory>
#include <string>

namespace directgnn {

class FeatureStore;

enum class SparseOptimizer { kRowAdagrad, kAdam };
// "adagrad" or "adam"; anything else throws naming the parameter.
SparseOptimizer parse_sparse_optimizer(const std::string& name);
const char* sparse_optimizer_name(SparseOptimizer optimizer);

// Where a run's tables live; kAuto: pinned on a GPU run, host on a CPU one.
enum class TablePlacement { kAuto, kHost, kPinned };
// "auto", "host" or "pinned"; anything else throws naming the parameter.
TablePlacement parse_table_placement(const std::string& name);
const char* table_placement_name(TablePlacement placement);

struct EmbeddingOptions {
  int64_t dim = 0;  // 0: no embeddings (where an option struct carries them)
  TablePlacement placement = TablePlacement::kAuto;
  SparseOptimizer optimizer = SparseOptimizer::kRowAdagrad;
  double lr = 0.01;
  double weight_decay = 0;  // L2 on the rows a step updates: g += weight_decay * w
  int64_t init_hops = 8;    // rows start smoothed over this many hops (train/table_init.h)
  double eps = 1e-10;       // Adagrad's; Adam uses 1e-8
  double beta1 = 0.9, beta2 = 0.999;
};

class EmbeddingTable {
 public:
  // `rows` x options.dim, drawn from N(0, 1) scaled by 1/sqrt(dim) with `seed` (a row's values
  // depend only on the seed and the row).
  EmbeddingTable(int64_t rows, const EmbeddingOptions& options, uint64_t seed);

  // Rows `ids` (int32/int64 on any device, in range; checked) as a new float32 CPU tensor.
  at::Tensor gather(const at::Tensor& ids) const;
  // The same on `device`: read by GPU threads from a pinned table, else gathered by the CPU
  // and copied over.
  at::Tensor gather(const at::Tensor& ids, const c10::Device& device) const;

  // Registers the table's memory in place for GPU `device_index` (pinned placement); it stays
  // where it is, and updates and loads keep writing it there. Throws with the size when the
  // driver refuses (the locked-memory limit, say).
  void pin(int device_index);
  bool pinned() const { return pin_ != nullptr; }
  // One optimiser step on rows `ids` with their gradient `grad` [len(ids), dim]. The ids must be
  // distinct (rows are updated in parallel): a batch's input nodes, as the samplers give them.
  void update(const at::Tensor& ids, const at::Tensor& grad);

  const at::Tensor& weight() const { return weight_; }
  int64_t rows() const { return weight_.size(0); }
  int64_t dim() const { return weight_.size(1); }
  const EmbeddingOptions& options() const { return options_; }
  int64_t steps() const { return steps_; }

  // Writes DIR/NAME.npy (the table) and DIR/NAME.state*.npy (the optimiser's state, and the
  // step count as a one-element array), each atomically.
  void save(const std::string& dir, const std::string& name) const;
  // Reads what save wrote into the table's own memory (never a second copy of it, and a pinned
  // table stays pinned), checking shapes first; throws naming the file.
  void load(const std::string& dir, const std::string& name);

 private:
  EmbeddingOptions options_;
  at::Tensor weight_;  // float32 [rows, dim]
  at::Tensor sum_;     // row-wise Adagrad: float32 [rows]
  at::Tensor m_, v_;   // Adam: float32 [rows, dim]
  int64_t steps_ = 0;
  std::shared_ptr<void> pin_;                  // the pinned placement's registration
  std::shared_ptr<const FeatureStore> store_;  // a pinned table's, for the GPU gather
};

}  // namespace directgnn
