#include "feature/disk/lookahead_window.h"

#include <algorithm>
#include <utility>

#include "directgnn/error.h"

namespace directgnn::disk {

LookaheadWindow::LookaheadWindow(int64_t table_rows,
                                 const std::vector<int32_t>& slots_in_eviction_order)
    : next_use_(static_cast<size_t>(table_rows), kNever),
      last_planned_(static_cast<size_t>(table_rows), -1) {
  const size_t slots = slots_in_eviction_order.size();
  key_.assign(slots, -1);
  prev_.assign(slots, -1);
  next_.assign(slots, -1);
  for (const int32_t slot : slots_in_eviction_order) place(slot, kNever);
}

void LookaheadWindow::unlink(int32_t slot) {
  const auto i = static_cast<size_t>(slot);
  auto bucket = buckets_.find(key_[i]);
  if (bucket == buckets_.end()) return;  // not placed yet
  Bucket& b = bucket->second;
  if (prev_[i] >= 0) {
    next_[static_cast<size_t>(prev_[i])] = next_[i];
  } else {
    b.head = next_[i];
  }
  if (next_[i] >= 0) {
    prev_[static_cast<size_t>(next_[i])] = prev_[i];
  } else {
    b.tail = prev_[i];
  }
  if (b.head < 0) buckets_.erase(bucket);
  prev_[i] = next_[i] = key_[i] = -1;
}

void LookaheadWindow::place(int32_t slot, int32_t next) {
  const auto i = static_cast<size_t>(slot);
  if (key_[i] == next) return;  // keeps its place among the rows next used then
  unlink(slot);
  Bucket& b = buckets_[next];
  key_[i] = next;
  prev_[i] = b.tail;
  if (b.tail >= 0) {
    next_[static_cast<size_t>(b.tail)] = slot;
  } else {
    b.head = slot;
  }
  b.tail = slot;
}

int32_t LookaheadWindow::evict_for(int32_t next) {
  if (buckets_.empty()) return -1;
  auto furthest = std::prev(buckets_.end());
  if (furthest->first <= next) return -1;
  const int32_t slot = furthest->second.head;
  unlink(slot);
  return slot;
}

void LookaheadWindow::reset() {
  batches_.clear();
  std::fill(next_use_.begin(), next_use_.end(), kNever);
  std::fill(last_planned_.begin(), last_planned_.end(), -1);
  for (size_t s = 0; s < key_.size(); ++s) place(static_cast<int32_t>(s), kNever);
}

void LookaheadWindow::plan(int64_t step, std::vector<int64_t> rows, int64_t requests,
                           const std::vector<int32_t>& slot_of) {
  DGNN_CHECK(batches_.empty() || step == batches_.back().step + 1,
             "feature cache look-ahead: batch ", step, " planned after batch ",
             batches_.back().step, "; batches are planned in step order");
  DGNN_CHECK(step < kNever, "feature cache look-ahead: step ", step, " is past its range");
  const int64_t first = batches_.empty() ? step : batches_.front().step;
  const auto s32 = static_cast<int32_t>(step);
  for (const int64_t row : rows) {
    const auto r = static_cast<size_t>(row);
    const int32_t before = last_planned_[r];
    if (before >= first) {
      // Used by a pending batch: this is its use after that one.
      Batch& b = batches_[static_cast<size_t>(before - first)];
      const auto at = std::lower_bound(b.rows.begin(), b.rows.end(), row) - b.rows.begin();
      b.after[static_cast<size_t>(at)] = s32;
    } else {
      next_use_[r] = s32;
      if (slot_of[r] >= 0) place(slot_of[r], s32);
    }
    last_planned_[r] = s32;
  }
  Batch batch;
  batch.step = step;
  batch.requests = requests;
  batch.after.assign(rows.size(), kNever);
  batch.rows = std::move(rows);
  batches_.push_back(std::move(batch));
}

std::vector<std::pair<int32_t, int64_t>> LookaheadWindow::serve(
    const std::vector<int32_t>& slot_of) {
  DGNN_CHECK(!batches_.empty(), "feature cache look-ahead: no batch is planned");
  const Batch& b = batches_.front();
  std::vector<std::pair<int32_t, int64_t>> missed;
  for (size_t i = 0; i < b.rows.size(); ++i) {
    const auto r = static_cast<size_t>(b.rows[i]);
    const int32_t next = b.after[i];
    next_use_[r] = next;
    if (next == kNever && last_planned_[r] == static_cast<int32_t>(b.step)) last_planned_[r] = -1;
    if (slot_of[r] >= 0) {
      place(slot_of[r], next);
    } else if (next != kNever) {
      missed.emplace_back(next, b.rows[i]);
    }
  }
  std::sort(missed.begin(), missed.end());
  batches_.pop_front();
  return missed;
}

}  // namespace directgnn::disk
