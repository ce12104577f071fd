// The distinct rows of a table touched since the last clear: one bit per row, set from several
// threads at once. The disk placement keeps two (rows gathered, rows read from the file), so an
// epoch's figures can say how many distinct rows it needed and missed, not only how many
// requests it made.
#pragma once

#include <ATen/Tensor.h>

#include <atomic>
#include <cstdint>
#include <memory>

namespace directgnn::disk {

class SeenRows {
 public:
  explicit SeenRows(int64_t rows)
      : words_((rows + 63) / 64), bits_(std::make_unique<std::atomic<uint64_t>[]>(words_)) {
    clear();
  }

  // Marks `ids` (int32 or int64, CPU, contiguous, in range).
  void add(const at::Tensor& ids) {
    if (ids.scalar_type() == at::kInt) {
      add(ids.data_ptr<int32_t>(), ids.numel());
    } else {
      add(ids.data_ptr<int64_t>(), ids.numel());
    }
  }

  template <typename Id>
  void add(const Id* ids, int64_t count) {
    for (int64_t i = 0; i < count; ++i) {
      const auto id = static_cast<uint64_t>(ids[i]);
      const uint64_t bit = uint64_t{1} << (id & 63);
      std::atomic<uint64_t>& word = bits_[id >> 6];
      if ((word.load(std::memory_order_relaxed) & bit) == 0)
        word.fetch_or(bit, std::memory_order_relaxed);
    }
  }

  int64_t count() const {
    int64_t n = 0;
    for (int64_t w = 0; w < words_; ++w)
      n += __builtin_popcountll(bits_[w].load(std::memory_order_relaxed));
    return n;
  }

  void clear() {
    for (int64_t w = 0; w < words_; ++w) bits_[w].store(0, std::memory_order_relaxed);
  }

 private:
  int64_t words_;
  std::unique_ptr<std::atomic<uint64_t>[]> bits_;
};

}  // namespace directgnn::disk
