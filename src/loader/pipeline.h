// The minibatch pipeline: items begin .. end-1 (a training epoch's steps) are produced on
// worker threads ahead of the consumer and handed over, in order, through a bounded buffer,
// so step i+1 is sampled and gathered while step i trains.
//
// - `depth` bounds the items produced or in production but not yet taken: memory stays at
//   `depth` batches. Depth 0 produces each item in next() on the caller's thread.
// - With several workers items may finish out of order; next() still returns them in order.
// - An exception thrown by `produce` is rethrown by next() when the consumer reaches that
//   item; the workers then stop. Destroying the pipeline early (an error, an interrupt) stops
//   and joins every worker: no thread outlives it and nothing blocks forever.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "directgnn/error.h"

namespace directgnn {

template <typename T>
class Pipeline {
 public:
  // `on_worker_start` runs once on each worker thread first (e.g. to size its OpenMP team).
  // `drain`: stopping early still produces every item the workers would have claimed by then
  // (up to `depth` past the consumer), so processes whose producers meet in collectives (a
  // sharded feature table's exchange) stop after the same items.
  Pipeline(int64_t begin, int64_t end, int depth, int workers, std::function<T(int64_t)> produce,
           std::function<void()> on_worker_start = {}, bool drain = false)
      : next_(begin),
        claimed_(begin),
        end_(end),
        depth_(depth),
        drain_(drain),
        produce_(std::move(produce)) {
    DGNN_CHECK_ARG(depth >= 0, "prefetch", "must not be negative, got ", depth);
    DGNN_CHECK(workers >= 1, "the pipeline needs at least one worker, got ", workers);
    if (depth_ == 0) return;
    const int count = std::min<int64_t>(workers, std::max<int64_t>(int64_t{0}, end - begin));
    for (int w = 0; w < count; ++w) {
      threads_.emplace_back([this, on_worker_start] {
        if (on_worker_start) on_worker_start();
        work();
      });
    }
  }

  ~Pipeline() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  bool done() const { return next_ >= end_; }

  // The next item in order; waits for it when it is not ready. Throws what its producer threw.
  T next() {
    DGNN_CHECK(next_ < end_, "pipeline: no items left");
    if (depth_ == 0) return produce_(next_++);
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return ready_.count(next_) != 0; });
    auto node = ready_.extract(next_);
    ++next_;
    lock.unlock();
    changed_.notify_all();  // a slot is free
    Slot& slot = node.mapped();
    if (slot.error) std::rethrow_exception(slot.error);
    return std::move(*slot.value);
  }

 private:
  struct Slot {
    std::optional<T> value;
    std::exception_ptr error;
  };

  void work() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      // An item may be claimed while fewer than `depth` are claimed and not yet taken.
      changed_.wait(lock, [&] {
        return stopping_ || failed_ || claimed_ >= end_ || claimed_ - next_ < depth_;
      });
      if (failed_ || claimed_ >= end_) return;
      if (stopping_ && (!drain_ || claimed_ - next_ >= depth_)) return;
      const int64_t item = claimed_++;
      lock.unlock();
      Slot slot;
      try {
        slot.value.emplace(produce_(item));
      } catch (...) {
        slot.error = std::current_exception();
      }
      lock.lock();
      if (slot.error) failed_ = true;  // no later items: the consumer stops at this one
      ready_.emplace(item, std::move(slot));
      changed_.notify_all();
    }
  }

  int64_t next_;     // the item next() returns next (only the consumer writes it)
  int64_t claimed_;  // items below this are produced, in production, or taken
  const int64_t end_;
  const int depth_;
  const bool drain_;
  std::function<T(int64_t)> produce_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<int64_t, Slot> ready_;
  bool stopping_ = false, failed_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace directgnn
