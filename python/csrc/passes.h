// The passes of a loader that are running at once, by id: each Python iterator is one pass
// (an Epoch of MinibatchLoader or LinkLoader, with its own workers). The table may be used
// from several threads; each pass by one thread at a time.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

namespace directgnn::ops {

template <typename Epoch>
class Passes {
 public:
  ~Passes() { clear(); }

  int64_t add(Epoch epoch) {
    auto pass = std::make_shared<Epoch>(std::move(epoch));
    std::lock_guard<std::mutex> lock(mutex_);
    passes_.emplace(next_, std::move(pass));
    return next_++;
  }

  // The pass, or nullptr when it ended or never was.
  std::shared_ptr<Epoch> get(int64_t id) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = passes_.find(id);
    return it == passes_.end() ? nullptr : it->second;
  }

  bool has_next(int64_t id) const {
    const auto pass = get(id);
    return pass != nullptr && !pass->done();
  }

  // Ends pass `id` (its workers are joined, outside the lock); an unknown id is ignored.
  void finish(int64_t id) {
    std::shared_ptr<Epoch> pass;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto it = passes_.find(id);
      if (it == passes_.end()) return;
      pass = std::move(it->second);
      passes_.erase(it);
    }
    pass.reset();
  }

  void clear() {
    std::map<int64_t, std::shared_ptr<Epoch>> ended;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ended.swap(passes_);
    }
  }

 private:
  mutable std::mutex mutex_;
  std::map<int64_t, std::shared_ptr<Epoch>> passes_;
  int64_t next_ = 0;
};

}  // namespace directgnn::ops
