// A hot-row cache in RAM in front of a disk table (--feature-cache-gib, docs/disk-features.md).
//
// Filled once, before training, with the rows a ranking puts first (loader/feature_cache.h ranks
// them by pre-sampling or by degree), as many as fit in the byte budget. read_rows then
// serves a batch in one call: rows in the cache are copied from RAM, and the rest (the misses)
// are read from the file straight into their places in the batch. The file's counters
// therefore count misses only; the cache counts requests and hits.
//
// Its policy says what happens then. kStatic keeps the filled rows for good. kSieve (Zhang et
// al., NSDI 2024, the policy of DGL GraphBolt's disk feature store) lets the rows a batch
// missed replace cached ones: the cache is a queue from the oldest row to the newest, each row
// with a visited bit set by a hit; a hand walks from the oldest towards the newest, clearing
// set bits, and evicts the first row whose bit is clear; a missed row enters as the newest. The
// filled rows enter in rank order, the top one last (newest). kLookahead is told each batch's
// rows before it is gathered (plan), a window of batches ahead, and keeps the rows used soonest
// (lookahead_window.h). Whatever the policy, every row read is the file's: a policy changes
// what is read from disk, never a value.
#pragma once

#include <ATen/Tensor.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "feature/disk/lookahead_window.h"
#include "feature/disk/row_file.h"

namespace directgnn::disk {

// How the rows to cache are chosen: by how often a pre-sampling pass gathers them, or by
// node degree.
enum class CacheRanking { kPresample, kDegree };
CacheRanking parse_cache_ranking(const std::string& name);
std::string cache_ranking_name(CacheRanking ranking);

// What the cache does with rows a batch misses: nothing (static), keep them (sieve), or keep
// them when they are used again sooner than a cached row (lookahead). kAuto, the default, is
// lookahead where the loader plans its batches (resolve_cache_policy), static elsewhere: the
// fastest at 25% of the table in issue 44's benchmark (docs/benchmarks.md).
enum class CachePolicy { kAuto, kStatic, kSieve, kLookahead };
CachePolicy parse_cache_policy(const std::string& name);
std::string cache_policy_name(CachePolicy policy);
// kAuto as a loader runs it: kLookahead when it `plans` its batches, else kStatic.
CachePolicy resolve_cache_policy(CachePolicy policy, bool plans);

constexpr int kDefaultLookaheadBatches = 8;

struct CacheOptions {
  double gib = 0;  // 0: no cache
  CacheRanking ranking = CacheRanking::kPresample;
  CachePolicy policy = CachePolicy::kAuto;
  // kLookahead: the batches planned ahead of the one gathered (0: kDefaultLookaheadBatches,
  // as the node loader resolves it).
  int lookahead_batches = 0;
};

class RowCache {
 public:
  // Reads rows ranked[0 .. k) of `file` into RAM, k = what fits in `bytes` (at most every row
  // of `ranked`; int64 ids, distinct, in range). `progress(done, total)` is told the rows read
  // so far. kAuto keeps the rows as kStatic does.
  RowCache(const RowFile& file, const at::Tensor& ranked, int64_t bytes,
           const std::function<void(int64_t, int64_t)>& progress = {},
           CachePolicy policy = CachePolicy::kStatic);

  // Rows `ids` (int32 or int64, CPU, contiguous, range-checked) of `file` (the one the cache
  // was filled from) into `out` ([len(ids), dim], contiguous, the table's dtype). Safe from
  // several threads at once; with kSieve the cache's rows change as it goes.
  void read_rows(const RowFile& file, const at::Tensor& ids, at::Tensor& out) const;

  // kLookahead. Each epoch (each pass of a loader) begins a plan: the batches planned before
  // are forgotten, and the generation returned names the plan. Then, in step order, each
  // batch's ids are planned (a window ahead of the gathers), and read_planned serves the
  // oldest planned batch: the ids must be the ones planned for it. A call of an older
  // generation (a loader abandoned mid-epoch) fails and changes nothing.
  int64_t begin_plan() const;
  void plan(int64_t generation, int64_t step, const at::Tensor& ids) const;
  void read_planned(const RowFile& file, const at::Tensor& ids, at::Tensor& out, int64_t generation,
                    int64_t step) const;

  int64_t rows() const { return rows_.size(0); }
  CachePolicy policy() const { return policy_; }
  bool contains(int64_t id) const;

  // Since the cache was filled: rows asked for (repeats counted) and those served from RAM.
  struct Counters {
    int64_t rows_requested = 0, rows_hit = 0;
  };
  Counters counters() const { return {rows_requested_, rows_hit_}; }

 private:
  // kSieve: the rows of `ids` at `miss_rows` of `out`, just read from the file, enter the
  // cache (each once), evicting as the policy says. Called with mutex_ held.
  template <typename Id>
  void admit(const Id* ids, const std::vector<int64_t>& miss_rows, const at::Tensor& out) const;
  // kLookahead: the front batch, served into `out` (`miss_rows` of it read from the file),
  // moves on; the rows it missed that are used again soonest take slots.
  void admit_planned(const at::Tensor& ids, const std::vector<int64_t>& miss_rows,
                     const at::Tensor& out) const;
  // Copies the cached rows of `ids` into `out`; returns the positions that missed. With the
  // lock held where slots may change.
  std::vector<int64_t> copy_hits(const at::Tensor& ids, at::Tensor& out) const;
  void check_generation(int64_t generation) const;
  int32_t evict() const;  // the slot the hand frees, unlinked from the queue
  void push_newest(int32_t slot) const;
  void unlink(int32_t slot) const;

  CachePolicy policy_ = CachePolicy::kStatic;
  mutable at::Tensor rows_;            // [cached rows, dim]; kStatic: in increasing id order
  mutable std::vector<int32_t> slot_;  // per table row: its row in rows_, or -1
  mutable std::atomic<int64_t> rows_requested_{0}, rows_hit_{0};
  // kSieve's queue over the slots (-1: none), each slot's row id and visited bit, the hand.
  mutable std::mutex mutex_;
  mutable std::vector<int64_t> owner_;
  mutable std::vector<uint8_t> visited_;
  mutable std::vector<int32_t> newer_, older_;
  mutable int32_t newest_ = -1, oldest_ = -1, hand_ = -1;
  // kLookahead's plan, its generation, and whether its front batch is being served.
  mutable std::unique_ptr<LookaheadWindow> window_;
  mutable int64_t generation_ = 0;
  mutable bool serving_ = false;
};

}  // namespace directgnn::disk
