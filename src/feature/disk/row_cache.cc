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
  if (name == "auto") return CachePolicy::kAuto;
  if (name == "static") return CachePolicy::kStatic;
  if (name == "sieve") return CachePolicy::kSieve;
  if (name == "lookahead") return CachePolicy::kLookahead;
  fail_argument("feature_cache_policy", "'", name,
                "' is not a cache policy (use auto, static: the filled rows stay, sieve: missed "
                "rows replace cached ones by SIEVE, or lookahead: by their next use in the "
                "batches sampled ahead)");
}

std::string cache_policy_name(CachePolicy policy) {
  switch (policy) {
    case CachePolicy::kSieve:
      return "sieve";
    case CachePolicy::kLookahead:
      return "lookahead";
    case CachePolicy::kAuto:
      return "auto";
    default:
      return "static";
  }
}

CachePolicy resolve_cache_policy(CachePolicy policy, bool plans) {
  if (policy != CachePolicy::kAuto) return policy;
  return plans ? CachePolicy::kLookahead : CachePolicy::kStatic;
}

RowCache::RowCache(const RowFile& file, const at::Tensor& ranked, int64_t bytes,
                   const std::function<void(int64_t, int64_t)>& progress, CachePolicy policy)
    : policy_(resolve_cache_policy(policy, /*plans=*/false)) {
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
  if (policy_ == CachePolicy::kStatic) return;
  owner_.assign(id, id + fit);
  const int64_t* rank = ranked.data_ptr<int64_t>();
  if (policy_ == CachePolicy::kLookahead) {
    // The lowest-ranked row is the first to go.
    std::vector<int32_t> order;
    for (int64_t r = fit - 1; r >= 0; --r) order.push_back(slot_[static_cast<size_t>(rank[r])]);
    window_ = std::make_unique<LookaheadWindow>(file.num_rows(), order);
    return;
  }
  visited_.assign(static_cast<size_t>(fit), 0);
  newer_.assign(static_cast<size_t>(fit), -1);
  older_.assign(static_cast<size_t>(fit), -1);
  // The top-ranked row enters last: the newest, the last the hand reaches.
  for (int64_t r = fit - 1; r >= 0; --r) push_newest(slot_[static_cast<size_t>(rank[r])]);
}

bool RowCache::contains(int64_t id) const {
  std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
  if (policy_ != CachePolicy::kStatic) lock.lock();
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

std::vector<int64_t> RowCache::copy_hits(const at::Tensor& ids, at::Tensor& out) const {
  const int64_t count = ids.numel();
  std::vector<int32_t> where(static_cast<size_t>(count));
  if (ids.scalar_type() == at::kInt) {
    look_up(ids.data_ptr<int32_t>(), count, slot_, where.data());
  } else {
    look_up(ids.data_ptr<int64_t>(), count, slot_, where.data());
  }
  const bool sieve = policy_ == CachePolicy::kSieve;
  std::vector<int64_t> miss_rows;
  for (int64_t i = 0; i < count; ++i) {
    const int32_t s = where[static_cast<size_t>(i)];
    if (s < 0) {
      miss_rows.push_back(i);
    } else if (sieve) {
      visited_[static_cast<size_t>(s)] = 1;
    }
  }
  rows_requested_ += count;
  rows_hit_ += count - static_cast<int64_t>(miss_rows.size());
  const int64_t row_bytes = rows_.size(1) * rows_.element_size();
  const auto* cached = static_cast<const uint8_t*>(rows_.data_ptr());
  auto* dst = static_cast<uint8_t*>(out.data_ptr());
  at::parallel_for(0, count, std::max<int64_t>(1, 65536 / row_bytes), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const int32_t s = where[static_cast<size_t>(i)];
      if (s >= 0) std::memcpy(dst + i * row_bytes, cached + s * row_bytes, row_bytes);
    }
  });
  return miss_rows;
}

namespace {

void read_misses(const RowFile& file, const at::Tensor& ids, std::vector<int64_t>& miss_rows,
                 at::Tensor& out) {
  const auto misses = static_cast<int64_t>(miss_rows.size());
  if (misses == 0) return;
  const at::Tensor rows_of_misses = at::from_blob(miss_rows.data(), {misses}, at::kLong);
  const at::Tensor miss_ids = ids.to(at::kLong).index_select(0, rows_of_misses);
  file.read_rows(miss_ids, out, miss_rows.data());
}

}  // namespace

void RowCache::read_rows(const RowFile& file, const at::Tensor& ids, at::Tensor& out) const {
  // A dynamic policy changes slots as it goes: look up and copy the hits under the lock.
  const bool dynamic = policy_ != CachePolicy::kStatic && rows_.size(0) > 0;
  std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
  if (dynamic) lock.lock();
  std::vector<int64_t> miss_rows = copy_hits(ids, out);
  if (dynamic) lock.unlock();
  read_misses(file, ids, miss_rows, out);
  // A look-ahead cache admits rows only for the batches it planned.
  if (policy_ != CachePolicy::kSieve || miss_rows.empty() || rows_.size(0) == 0) return;
  lock.lock();
  if (ids.scalar_type() == at::kInt) {
    admit(ids.data_ptr<int32_t>(), miss_rows, out);
  } else {
    admit(ids.data_ptr<int64_t>(), miss_rows, out);
  }
}

void RowCache::check_generation(int64_t generation) const {
  DGNN_CHECK(generation == generation_,
             "feature cache look-ahead: this loader's epoch was "
             "replaced by a newer one (plan ",
             generation, ", now ", generation_, "); take batches from the newest epoch");
}

int64_t RowCache::begin_plan() const {
  DGNN_CHECK(policy_ == CachePolicy::kLookahead,
             "feature cache: only the lookahead policy plans batches ahead");
  std::lock_guard<std::mutex> lock(mutex_);
  if (window_ != nullptr) window_->reset();
  serving_ = false;
  return ++generation_;
}

void RowCache::plan(int64_t generation, int64_t step, const at::Tensor& ids) const {
  at::Tensor rows = std::get<0>(at::_unique(ids.to(at::kLong), /*sorted=*/true));
  std::vector<int64_t> distinct(rows.data_ptr<int64_t>(), rows.data_ptr<int64_t>() + rows.numel());
  std::lock_guard<std::mutex> lock(mutex_);
  check_generation(generation);
  if (window_ != nullptr) window_->plan(step, std::move(distinct), ids.numel(), slot_);
}

void RowCache::read_planned(const RowFile& file, const at::Tensor& ids, at::Tensor& out,
                            int64_t generation, int64_t step) const {
  std::unique_lock<std::mutex> lock(mutex_);
  check_generation(generation);
  if (window_ == nullptr) {  // an empty cache: nothing to keep
    lock.unlock();
    return read_rows(file, ids, out);
  }
  DGNN_CHECK(window_->pending() && window_->front_step() == step && !serving_,
             "feature cache look-ahead: batch ", step, " is gathered out of the order planned (",
             window_->pending() ? "next planned: " + std::to_string(window_->front_step())
                                : std::string("none planned"),
             ")");
  DGNN_CHECK(window_->front_requests() == ids.numel(), "feature cache look-ahead: batch ", step,
             " was planned with ", window_->front_requests(), " ids but gathers ", ids.numel());
  serving_ = true;
  std::vector<int64_t> miss_rows = copy_hits(ids, out);
  lock.unlock();
  try {
    read_misses(file, ids, miss_rows, out);
  } catch (...) {
    lock.lock();
    if (generation == generation_) serving_ = false;
    throw;
  }
  lock.lock();
  if (generation != generation_) return;  // a new plan began meanwhile: this one is gone
  serving_ = false;
  admit_planned(ids, miss_rows, out);
}

void RowCache::admit_planned(const at::Tensor& ids, const std::vector<int64_t>& miss_rows,
                             const at::Tensor& out) const {
  const std::vector<std::pair<int32_t, int64_t>> missed = window_->serve(slot_);
  if (missed.empty()) return;
  // Where each missed row landed in `out` (its first request).
  const at::Tensor long_ids = ids.to(at::kLong);
  const int64_t* id = long_ids.data_ptr<int64_t>();
  std::vector<std::pair<int64_t, int64_t>> landed;
  landed.reserve(miss_rows.size());
  for (const int64_t i : miss_rows) landed.emplace_back(id[i], i);
  std::sort(landed.begin(), landed.end());
  const auto row_bytes = static_cast<size_t>(rows_.size(1) * rows_.element_size());
  auto* cached = static_cast<uint8_t*>(rows_.data_ptr());
  const auto* read = static_cast<const uint8_t*>(out.data_ptr());
  for (const auto& [next, row] : missed) {
    const int32_t s = window_->evict_for(next);
    if (s < 0) break;  // every cached row is used sooner than this and the rows after it
    const auto at = std::lower_bound(landed.begin(), landed.end(), std::make_pair(row, int64_t{0}));
    DGNN_CHECK(at != landed.end() && at->first == row, "feature cache look-ahead: planned row ",
               row, " was not gathered");
    slot_[static_cast<size_t>(owner_[static_cast<size_t>(s)])] = -1;
    owner_[static_cast<size_t>(s)] = row;
    slot_[static_cast<size_t>(row)] = s;
    window_->place(s, next);
    std::memcpy(cached + static_cast<size_t>(s) * row_bytes,
                read + static_cast<size_t>(at->second) * row_bytes, row_bytes);
  }
}

}  // namespace directgnn::disk
