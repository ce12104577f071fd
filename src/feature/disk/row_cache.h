// A hot-row cache in RAM in front of a disk table (--feature-cache-gib, docs/disk-features.md).
//
// Filled once, before training, with the rows a ranking puts first (loader/feature_cache.h ranks
// them by pre-sampling or by degree), as many as fit in the byte budget. read_rows then
// serves a batch in one call: rows in the cache are copied from RAM, and the rest (the misses)
// are read from the file straight into their places in the batch. The file's counters
// therefore count misses only; the cache counts requests and hits.
#pragma once

#include <ATen/Tensor.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "feature/disk/row_file.h"

namespace directgnn::disk {

// How the rows to cache are chosen: by how often a pre-sampling pass gathers them, or by
// node degree.
enum class CacheRanking { kPresample, kDegree };
CacheRanking parse_cache_ranking(const std::string& name);
std::string cache_ranking_name(CacheRanking ranking);

struct CacheOptions {
  double gib = 0;  // 0: no cache
  CacheRanking ranking = CacheRanking::kPresample;
};

class RowCache {
 public:
  // Reads rows ranked[0 .. k) of `file` into RAM, k = what fits in `bytes` (at most every row
  // of `ranked`; int64 ids, distinct, in range). `progress(done, total)` is told the rows read
  // so far.
  RowCache(const RowFile& file, const at::Tensor& ranked, int64_t bytes,
           const std::function<void(int64_t, int64_t)>& progress = {});

  // Rows `ids` (int32 or int64, CPU, contiguous, range-checked) of `file` (the one the cache
  // was filled from) into `out` ([len(ids), dim], contiguous, the table's dtype).
  void read_rows(const RowFile& file, const at::Tensor& ids, at::Tensor& out) const;

  int64_t rows() const { return rows_.size(0); }
  bool contains(int64_t id) const { return slot_[static_cast<size_t>(id)] >= 0; }

  // Since the cache was filled: rows asked for (repeats counted) and those served from RAM.
  struct Counters {
    int64_t rows_requested = 0, rows_hit = 0;
  };
  Counters counters() const { return {rows_requested_, rows_hit_}; }

 private:
  at::Tensor rows_;            // [cached rows, dim], in increasing id order
  std::vector<int32_t> slot_;  // per table row: its row in rows_, or -1
  mutable std::atomic<int64_t> rows_requested_{0}, rows_hit_{0};
};

}  // namespace directgnn::disk
