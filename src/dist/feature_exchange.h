// A feature table sharded over ranks by a partition book (graph/partition.h): rank r holds
// rows offsets[r] .. offsets[r+1]-1, and a gather of any global ids fetches the rows it does
// not hold from their owners with two all-to-alls (the ids grouped by owner, then the rows
// back), the owners serving them from their own FeatureStore (WholeGraph's design, on c10d).
//
// Every gather is a collective: all ranks call gather() the same number of times, in the same
// order (an empty request still takes part). One thread at a time per exchange; the exchange
// runs on a group of its own (ProcessGroup::subgroup), so it never meets the training step's
// collectives.
//
// Where the ids and rows cross (on_device): on the CPU by default, the group Gloo's; or on a
// GPU rank's device, where each owner gathers its rows straight into GPU memory (for a pinned
// table the aligned zero-copy kernel reads them from host memory; a device table is read in
// place) and the rows travel GPU to GPU over NCCL when the group is NCCL's (Gloo copies CUDA
// tensors through host memory itself).
#pragma once

#include <ATen/Tensor.h>
#include <c10/core/Device.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "dist/part_offsets.h"
#include "dist/process_group.h"
#include "feature/feature_store.h"

namespace directgnn {

// What the exchanges of a run moved, since the last clear.
struct ExchangeCounts {
  int64_t gathers = 0;
  int64_t rows = 0;                            // rows asked for
  int64_t remote_rows = 0;                     // of those, rows held by other ranks
  int64_t cache_hits = 0;                      // of those, rows served from the replicated cache
  int64_t bytes_sent = 0, bytes_received = 0;  // ids and rows, this rank's side
  double seconds = 0;                          // in the exchanges (waiting for peers included)

  // Adds another table's counts over the same batches (a heterogeneous graph's types): rows,
  // bytes and seconds add up; the gathers are the batches, the most either counted.
  void add_table(const ExchangeCounts& o) {
    gathers = std::max(gathers, o.gathers);
    rows += o.rows;
    remote_rows += o.remote_rows;
    cache_hits += o.cache_hits;
    bytes_sent += o.bytes_sent;
    bytes_received += o.bytes_received;
    seconds += o.seconds;
  }
};

class FeatureExchange {
 public:
  // `offsets`: P+1 ascending row offsets, P = the group's size; `local` holds this rank's rows
  // (local row i is global row offsets[rank] + i). `group` is used by this exchange only.
  FeatureExchange(std::vector<int64_t> offsets, FeatureStore local,
                  std::unique_ptr<ProcessGroup> group);
  // The same serving this rank's rows from `table`, a store in any placement (host, pinned,
  // disk with its cache) that the caller keeps alive longer than the exchange: global row
  // offsets[rank] + i is its row first_row + i (first_row 0 for a table of this part's rows
  // only, offsets[rank] for a whole table).
  FeatureExchange(std::vector<int64_t> offsets, const FeatureStore& table, int64_t first_row,
                  std::unique_ptr<ProcessGroup> group);

  // Serves this rank's rows from `local` (its part's rows only) from now on, in place of the
  // table it served, which may have had another width; drops the cache of remote rows. Not a
  // collective, but every rank swaps before the next gather (layer-wise inference serves each
  // layer's outputs so).
  void serve(FeatureStore local);

  // Ids and rows cross on `device` from now on (see the top of this file), each owner
  // gathering its rows onto it by `options`' method (auto: aligned for a pinned or device
  // table, a CPU gather and one copy for a host or disk one). The group must take tensors of
  // that device (an NCCL group a CUDA one). A collective (one empty gather, which makes an
  // NCCL group's communicator here): every rank alike, before the cache is filled.
  void on_device(const c10::Device& device, const GatherOptions& options = {});
  const c10::Device& device() const { return wire_; }

  // Rows of `ids` (int64, 1-D, CPU, each in [0, offsets[P])) as a dense [len(ids), F] tensor
  // of the table's dtype on `device`, in request order. A collective (see above).
  at::Tensor gather(const at::Tensor& ids, const c10::Device& device = c10::Device(c10::kCPU));

  // Keeps a copy of the first `max_rows` rows of `ranked` (global ids, hottest first, e.g. by
  // degree) that other ranks own, on the exchange's device; later gathers serve those here,
  // never asking their owner. A collective (one gather fetches them). Replaces an earlier cache.
  void cache_remote_rows(const at::Tensor& ranked, int64_t max_rows);
  int64_t cached_rows() const { return cache_ids_.defined() ? cache_ids_.numel() : 0; }

  // The owner (rank) of each id: a search in the P+1 offsets.
  at::Tensor owners(const at::Tensor& ids) const;
  int64_t num_rows() const { return offsets_.back(); }
  int64_t dim() const { return local_->dim(); }
  // The store this rank's rows are served from, and where its part begins there.
  const FeatureStore& local() const { return *local_; }
  int64_t first_row() const { return first_row_; }
  // The global ids this rank owns: [first, end).
  std::pair<int64_t, int64_t> own_range() const {
    const auto r = static_cast<size_t>(group_->rank());
    return {offsets_[r], offsets_[r + 1]};
  }
  ExchangeCounts counts() const;
  void clear_counts();

 private:
  void check_shape();
  // Rows of `ids` through the two all-to-alls; `remote` counts those other ranks own.
  at::Tensor exchange(const at::Tensor& ids, int64_t& remote);

  PartOffsets offsets_;
  std::optional<FeatureStore> owned_;  // the first constructor's store
  const FeatureStore* local_ = nullptr;
  int64_t first_row_ = 0;
  c10::Device wire_{c10::kCPU};  // where ids and rows cross (on_device)
  GatherOptions serve_options_;  // how the owner gathers its rows onto wire_
  std::unique_ptr<ProcessGroup> group_;
  // Sorted remote ids (CPU) and their rows (on wire_), from cache_remote_rows (its ids defined
  // once it ran, empty where this rank keeps no rows).
  at::Tensor cache_ids_, cache_rows_;
  std::mutex mutex_;  // one gather at a time
  mutable std::mutex counts_mutex_;
  ExchangeCounts counts_;
};

}  // namespace directgnn
