#include "feature/disk/row_cache.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "directgnn/error.h"

namespace directgnn::disk {
namespace {

constexpr int64_t kFillChunkBytes = int64_t{64} << 20;

// Per request: the cache row holding it, or -1 (a miss).
template <typename Id>
void look_up(const Id* ids, int64_t count, const std::vector<int32_t>& slot, int32_t* where) {
  at::parallel_for(0, count, 4096, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) where[i] = slot[static_cast<size_t>(ids[i])];
  });
}

}  // namespace

CacheRanking parse_cache_ranking(const std::string& name) {
  if (name == "presample") return CacheRanking::kPresample;
  if (name == "degree") return CacheRanking::kDegree;
  fail_argument("feature_cache_rank", "'", name,
                "' is not a ranking (use presample: rows a pre-sampling pass gathers most, or "
                "degree)");
}

std::string cache_ranking_name(CacheRanking ranking) {
  return ranking == CacheRanking::kDegree ? "degree" : "presample";
}

CachePolicy parse_cache_policy(const std::string& name) {
  if (name == "static") return CachePolicy::kStatic;
  if (name == "sieve") return CachePolicy::kSieve;
  fail_argument("feature_cache_policy", "'", name,
                "' is not a cache policy (use static: the filled rows stay, or sieve: missed "
                "rows replace cached ones by SIEVE)");
}

std::string cache_policy_name(CachePolicy policy) {
  return policy == CachePolicy::kSieve ? "sieve" : "static";
}

RowCache::RowCache(const RowFile& file, const at::Tensor& ranked, int64_t bytes,
                   const std::function<void(int64_t, int64_t)>& progress, CachePolicy policy)
    : policy_(policy) {
  DGNN_CHECK_ARG(bytes >= 0, "feature_cache_gib", "must not be negative");
  DGNN_CHECK(ranked.dim() == 1 && ranked.scalar_type() == at::kLong && ranked.is_cpu(),
             "feature cache: the ranking must be a 1-D int64 CPU tensor");
  DGNN_CHECK(file.row_bytes() > 0, file.path(), ": rows of 0 bytes need no cache");
  const int64_t fit = std::min(bytes / file.row_bytes(), ranked.numel());
  DGNN_CHECK_ARG(fit <= std::numeric_limits<int32_t>::max(), "feature_cache_gib", fit,
                 " rows are more than one cache holds (2^31 - 1); give a smaller cache");
  // Cached rows are read and kept in file order: the fill then reads the file front to back.
  const at::Tensor ids = std::get<0>(ranked.narrow(0, 0, fit).sort());
  rows_ = at::empty({fit, file.dim()}, at::TensorOptions().dtype(file.dtype()));
  slot_.assign(static_cast<size_t>(file.num_rows()), -1);
  const int64_t* id = ids.data_ptr<int64_t>();
  for (int64_t i = 0; i < fit; ++i) {
    DGNN_CHECK(id[i] >= 0 && id[i] < file.num_rows() && slot_[static_cast<size_t>(id[i])] < 0,
               "feature cache: the ranking holds id ", id[i], " twice or outside the table's rows");
    slot_[static_cast<size_t>(id[i])] = static_cast<int32_t>(i);
  }
  // Scattered hot rows cost whole blocks each (two where a row straddles), so a chunk is sized
  // by the blocks it may read, not by its rows' bytes: the read buffer stays near 64 MiB.
  const int64_t chunk =
      std::max<int64_t>(1, kFillChunkBytes / std::max(file.row_bytes(), 2 * kBlockBytes));
  for (int64_t start = 0; start < fit; start += chunk) {
    const int64_t n = std::min(chunk, fit - start);
    at::Tensor part = rows_.narrow(0, start, n);
    file.read_rows(ids.narrow(0, start, n), part);
    if (progress) progress(start + n, fit);
  }
  // The rows are in RAM now; their copies in the page cache would hold as much again.
  if (fit > 0) file.drop_page_cache();
  if (policy_ != CachePolicy::kSieve) return;
  owner_.assign(id, id + fit);
  visited_.assign(static_cast<size_t>(fit), 0);
  newer_.assign(static_cast<size_t>(fit), -1);
  older_.assign(static_cast<size_t>(fit), -1);
  // The top-ranked row enters last: the newest, the last the hand reaches.
  const int64_t* rank = ranked.data_ptr<int64_t>();
  for (int64_t r = fit - 1; r >= 0; --r) push_newest(slot_[static_cast<size_t>(rank[r])]);
}

bool RowCache::contains(int64_t id) const {
  std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
  if (policy_ == CachePolicy::kSieve) lock.lock();
  return slot_[static_cast<size_t>(id)] >= 0;
}

void RowCache::push_newest(int32_t s) const {
  const auto i = static_cast<size_t>(s);
  older_[i] = newest_;
  newer_[i] = -1;
  if (newest_ >= 0) {
    newer_[static_cast<size_t>(newest_)] = s;
  } else {
    oldest_ = s;
  }
  newest_ = s;
}

void RowCache::unlink(int32_t s) const {
  const auto i = static_cast<size_t>(s);
  const int32_t older = older_[i], newer = newer_[i];
  if (older >= 0) {
    newer_[static_cast<size_t>(older)] = newer;
  } else {
    oldest_ = newer;
  }
  if (newer >= 0) {
    older_[static_cast<size_t>(newer)] = older;
  } else {
    newest_ = older;
  }
  older_[i] = newer_[i] = -1;
}

int32_t RowCache::evict() const {
  int32_t o = hand_ >= 0 ? hand_ : oldest_;
  while (visited_[static_cast<size_t>(o)] != 0) {
    visited_[static_cast<size_t>(o)] = 0;
    o = newer_[static_cast<size_t>(o)] >= 0 ? newer_[static_cast<size_t>(o)] : oldest_;
  }
  hand_ = newer_[static_cast<size_t>(o)];
  unlink(o);
  return o;
}

template <typename Id>
void RowCache::admit(const Id* ids, const std::vector<int64_t>& miss_rows,
                     const at::Tensor& out) const {
  const auto row_bytes = static_cast<size_t>(rows_.size(1) * rows_.element_size());
  auto* cached = static_cast<uint8_t*>(rows_.data_ptr());
  const auto* read = static_cast<const uint8_t*>(out.data_ptr());
  for (const int64_t i : miss_rows) {
    const auto id = static_cast<int64_t>(ids[i]);
    if (slot_[static_cast<size_t>(id)] >= 0) continue;  // a repeat, or another thread's
    const int32_t s = evict();
    slot_[static_cast<size_t>(owner_[static_cast<size_t>(s)])] = -1;
    owner_[static_cast<size_t>(s)] = id;
    slot_[static_cast<size_t>(id)] = s;
    push_newest(s);
    std::memcpy(cached + static_cast<size_t>(s) * row_bytes,
                read + static_cast<size_t>(i) * row_bytes, row_bytes);
  }
}

void RowCache::read_rows(const RowFile& file, const at::Tensor& ids, at::Tensor& out) const {
  const int64_t count = ids.numel();
  const bool sieve = policy_ == CachePolicy::kSieve && rows_.size(0) > 0;
  // kSieve: the look-up, the hits' bits and copies under the lock, as misses may replace rows.
  std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
  if (sieve) lock.lock();
  std::vector<int32_t> where(static_cast<size_t>(count));
  if (ids.scalar_type() == at::kInt) {
    look_up(ids.data_ptr<int32_t>(), count, slot_, where.data());
  } else {
    look_up(ids.data_ptr<int64_t>(), count, slot_, where.data());
  }
  std::vector<int64_t> miss_rows;
  for (int64_t i = 0; i < count; ++i) {
    const int32_t s = where[static_cast<size_t>(i)];
    if (s < 0) {
      miss_rows.push_back(i);
    } else if (sieve) {
      visited_[static_cast<size_t>(s)] = 1;
    }
  }
  const auto misses = static_cast<int64_t>(miss_rows.size());
  rows_requested_ += count;
  rows_hit_ += count - misses;
  const int64_t row_bytes = file.row_bytes();
  const auto* cached = static_cast<const uint8_t*>(rows_.data_ptr());
  auto* dst = static_cast<uint8_t*>(out.data_ptr());
  at::parallel_for(0, count, std::max<int64_t>(1, 65536 / row_bytes), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const int32_t s = where[static_cast<size_t>(i)];
      if (s >= 0) std::memcpy(dst + i * row_bytes, cached + s * row_bytes, row_bytes);
    }
  });
  if (sieve) lock.unlock();
  if (misses == 0) return;
  const at::Tensor rows_of_misses = at::from_blob(miss_rows.data(), {misses}, at::kLong);
  const at::Tensor miss_ids = ids.to(at::kLong).index_select(0, rows_of_misses);
  file.read_rows(miss_ids, out, miss_rows.data());
  if (!sieve) return;
  lock.lock();
  if (ids.scalar_type() == at::kInt) {
    admit(ids.data_ptr<int32_t>(), miss_rows, out);
  } else {
    admit(ids.data_ptr<int64_t>(), miss_rows, out);
  }
}

}  // namespace directgnn::disk
