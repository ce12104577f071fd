// What the look-ahead cache knows of the future (--feature-cache-policy lookahead,
// docs/disk-features.md). The loader plans each minibatch's rows a window of batches before
// they are gathered, so each row's next use within the window is known. The cache's slots are
// ordered by their rows' next use: serving a batch moves its rows on to their next planned use,
// and a row a batch missed takes the slot whose row is used furthest ahead, when that is later
// than its own next use (Belady's rule; a row with no planned use never evicts one). Rows no
// planned batch uses are evicted first, the one idle longest first.
//
// Not thread-safe: the row cache calls it under its lock. Batches are planned in step order
// (consecutive steps of one epoch) and served in that order.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <vector>

namespace directgnn::disk {

class LookaheadWindow {
 public:
  static constexpr int32_t kNever = std::numeric_limits<int32_t>::max();

  // The cache's slots (each holding a row), listed from the first to evict.
  LookaheadWindow(int64_t table_rows, const std::vector<int32_t>& slots_in_eviction_order);

  // Forgets every planned batch: no row has a known next use. The slots keep their rows.
  void reset();
  // Plans batch `step` (the step after the last one planned, or any when none is pending):
  // `rows` are its distinct rows, sorted, `requests` the ids its gather will ask for (repeats
  // counted). `slot_of[row]` is the row's slot in the cache, or -1.
  void plan(int64_t step, std::vector<int64_t> rows, int64_t requests,
            const std::vector<int32_t>& slot_of);

  bool pending() const { return !batches_.empty(); }
  int64_t front_step() const { return batches_.front().step; }
  int64_t front_requests() const { return batches_.front().requests; }

  // The front batch has been served: its rows move on to their next planned use. Returns the
  // rows of it that are not cached, with their next use (kNever left out), soonest first, and
  // drops the batch.
  std::vector<std::pair<int32_t, int64_t>> serve(const std::vector<int32_t>& slot_of);

  // The slot to give a row whose next use is `next`, emptied (its row to forget), or -1 when
  // every cached row is used sooner (the row bypasses the cache).
  int32_t evict_for(int32_t next);
  // Slot `slot` now holds a row next used at `next`.
  void place(int32_t slot, int32_t next);

  int32_t next_use(int64_t row) const { return next_use_[static_cast<size_t>(row)]; }

 private:
  struct Batch {
    int64_t step = 0;
    int64_t requests = 0;        // ids the gather will ask for, repeats counted (a check)
    std::vector<int64_t> rows;   // distinct, sorted
    std::vector<int32_t> after;  // per row: the next planned step using it, or kNever
  };
  struct Bucket {
    int32_t head = -1, tail = -1;  // slots next used at one step, oldest placed first
  };
  void unlink(int32_t slot);

  std::vector<int32_t> next_use_;           // per table row: its next planned use, or kNever
  std::vector<int32_t> last_planned_;       // per table row: the last pending step using it, or -1
  std::deque<Batch> batches_;               // planned, not yet served, in step order
  std::map<int32_t, Bucket> buckets_;       // by next use; the last is the furthest (kNever first)
  std::vector<int32_t> key_, prev_, next_;  // per slot: its bucket, its neighbours there
};

}  // namespace directgnn::disk
