// The node feature table and the gather that builds a minibatch's input rows.
//
// Placement of the table:
//   host    plain host memory (possibly a memory-mapped .npy); the CPU reads it.
//   pinned  the same host memory registered in place with cudaHostRegister (mapped, and
//           read-only where the device allows, so a private file mapping is never copied);
//           GPU threads read it over PCIe. Unregistered when the last store copy goes away.
//   device  the whole table copied to GPU memory once.
//   disk    the table stays in its .npy file; each gather reads the rows it needs with
//           explicit positional reads (feature/disk/row_file.h, docs/disk-features.md), never
//           through page faults, from an optional hot-row cache in RAM first. Onto a GPU the rows
//           are read into pinned host memory and copied over in one cudaMemcpyAsync (method
//           cpu-copy).
//
// gather(ids, device, options) returns the rows as a dense [len(ids), F] tensor of the
// table's dtype on `device`. Every id is checked before any row is read. Which code runs:
//   device = CPU:   the CPU gather (parallel row copies), the oracle every GPU method is
//                   tested against; a device-placed table gathers on the GPU and copies back.
//   device = CUDA:  `cpu-copy` (host or pinned table): CPU threads gather into a pinned
//                   staging buffer, then one cudaMemcpyAsync on torch's current stream; two
//                   staging buffers alternate, so the next gather runs while this copy does.
//                   `zero-copy` (pinned or device): one GPU thread per element.
//                   `aligned` (pinned or device): warp-per-row reads aligned to 128 bytes
//                   with 16-byte vector loads where possible (see gather_plan.h).
//                   `auto` picks aligned for pinned and device tables, cpu-copy for host.
// All paths work on row bytes, not dtypes: float32, float16 and bfloat16 tables, int32 and
// int64 ids. GPU work is queued on torch's current stream of the target device.
#pragma once

#include <ATen/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "feature/disk/row_cache.h"
#include "feature/disk/row_file.h"

namespace directgnn {

enum class Placement { kHost, kPinned, kDevice, kDisk };
enum class GatherMethod { kAuto, kCpuCopy, kZeroCopy, kAligned };

Placement parse_placement(const std::string& name);
std::string placement_name(Placement placement);
GatherMethod parse_gather_method(const std::string& name);
std::string gather_method_name(GatherMethod method);
// What `auto` gathers onto a GPU with: aligned where GPU threads can read the table (pinned,
// device), cpu-copy where only the CPU can (host, disk).
GatherMethod default_gather_method(Placement placement);

// A gather its loader planned ahead (a disk table whose cache looks ahead, begin_plan): the
// plan's generation and the batch's step. A generation below 0: not planned.
struct PlannedGather {
  int64_t generation = -1;
  int64_t step = -1;
};

struct GatherOptions {
  GatherMethod method = GatherMethod::kAuto;
  // Sort ids on the GPU first (CUB radix sort) so reads walk memory in order; rows are written
  // back in request order. Applies to zero-copy and aligned.
  bool sort_ids = false;
  // Cap on the GPU threads one gather launches (grid-stride loops do the rest), leaving the
  // remaining SMs to training kernels. 0 = no cap.
  int64_t max_threads = 0;
  PlannedGather planned{};
};

class FeatureStore {
 public:
  // `table` is [N, F] on the CPU. The store keeps a reference (made contiguous if it is not);
  // `pinned` registers that memory in place, `device` copies it to GPU `device_index`. A
  // table already on a GPU takes `device` placement only, and stays where it is (in place, on
  // its own GPU; `device_index` is ignored).
  explicit FeatureStore(at::Tensor table, Placement placement = Placement::kHost,
                        int device_index = 0);

  // A store over `table` as it is, registering and copying nothing (the torch ops' gather):
  // a CUDA table is `device`; a CPU table wholly in pinned, mapped memory (torch's
  // pin_memory, cudaHostRegister, another store) is `pinned` when `detect_pinned` (the ids
  // are on a GPU; otherwise the GPU is not asked); any other CPU table is `host`. The table
  // must be contiguous (a copy per call would cost the whole table). The caller keeps the
  // pinning alive while the store is used.
  static FeatureStore as_is(at::Tensor table, int device_index, bool detect_pinned);

  // The `disk` placement: rows of `path` (a .npy file) read on demand. `table` is the same
  // file's array as loaded (a memory mapping, never read here: it gives shape and dtype, which
  // must match the file's header). The file's size is checked now (row_file.h).
  static FeatureStore on_disk(at::Tensor table, const std::string& path,
                              const disk::RowFileOptions& options, int device_index = 0);

  // Rows `ids` (int32 or int64, 1-D, CPU or CUDA) as a dense tensor on the CPU.
  at::Tensor gather(const at::Tensor& ids) const;
  // The same on `device`, by the method the options choose (see the top of this file).
  at::Tensor gather(const at::Tensor& ids, const c10::Device& device,
                    const GatherOptions& options = {}) const;
  // CPU gather into `out` ([len(ids), F], table dtype, contiguous, CPU), reusing its memory.
  void gather_into(const at::Tensor& ids, at::Tensor& out) const;

  const at::Tensor& table() const { return table_; }
  int64_t num_rows() const { return table_.size(0); }
  int64_t dim() const { return table_.size(1); }
  int64_t row_bytes() const { return table_.size(1) * table_.element_size(); }
  Placement placement() const { return placement_; }
  // The placement's name, and for `disk` how rows are read, e.g. "disk (io_uring, buffered, ...)".
  std::string description() const;
  // The reader of a `disk` table (nullptr for other placements).
  const disk::RowFile* row_file() const { return disk_.get(); }
  // A `disk` table only: keeps the rows `ranked` puts first in RAM, as many as fit in `bytes`
  // (row_cache.h); later gathers serve those from RAM, and with kSieve the rows they miss
  // replace cached ones. Replaces an earlier cache.
  void cache_hot_rows(const at::Tensor& ranked, int64_t bytes,
                      const std::function<void(int64_t, int64_t)>& progress = {},
                      disk::CachePolicy policy = disk::CachePolicy::kStatic);
  // The hot-row cache of a `disk` table, or nullptr.
  const disk::RowCache* row_cache() const { return cache_.get(); }
  // A disk table's distinct rows gathered since the last clear (0 for other placements).
  int64_t distinct_rows_gathered() const { return gathered_ != nullptr ? gathered_->count() : 0; }
  // Starts the distinct counts of gathered rows and of rows read from the file afresh.
  void clear_distinct_rows() const;
  // A disk table whose cache looks ahead (disk::CachePolicy::kLookahead) is told each batch's
  // rows before they are gathered: begin_plan() starts an epoch's plan and returns its
  // generation (-1: this store plans nothing), plan_gather tells it batch `step`'s ids (in step
  // order), and a gather of those ids with GatherOptions::planned serves the batch.
  int64_t begin_plan() const;
  void plan_gather(int64_t generation, int64_t step, const at::Tensor& ids) const;
  int device_index() const { return device_index_; }

 private:
  at::Tensor table_;
  Placement placement_ = Placement::kHost;
  int device_index_ = 0;
  std::shared_ptr<void> pin_;                    // owns the cudaHostRegister registration
  std::shared_ptr<const disk::RowFile> disk_;    // disk placement
  std::shared_ptr<const disk::RowCache> cache_;  // disk placement, --feature-cache-gib
  std::shared_ptr<disk::SeenRows> gathered_;     // disk placement: rows gathered
  at::Tensor device_table_;                      // device placement
  // The address GPU threads read row 0 from (pinned: the device mapping; device: GPU memory);
  // nullptr for host placement.
  const void* device_rows_ = nullptr;

  FeatureStore() = default;
  at::Tensor gather_disk_to_gpu(const at::Tensor& ids, int index,
                                const GatherOptions& options) const;
  void read_disk_rows(const at::Tensor& ids, at::Tensor& out,
                      const PlannedGather& planned = {}) const;
  void gather_into(const at::Tensor& ids, at::Tensor& out, const PlannedGather& planned) const;
};

// Throws naming the first id outside [0, num_rows). CPU ids are scanned in parallel; CUDA ids
// are reduced on their device (one synchronisation).
void check_ids_in_range(const at::Tensor& ids, int64_t num_rows);

}  // namespace directgnn
