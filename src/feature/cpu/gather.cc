#include "feature/cpu/gather.h"

#include <ATen/Parallel.h>

#include <cstring>

namespace directgnn::cpu {
namespace {

template <typename Id>
void gather_impl(const uint8_t* table, int64_t row_bytes, const Id* ids, int64_t count,
                 uint8_t* out) {
  // ~64 KiB of rows per task keeps scheduling overhead small for narrow rows.
  const int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(row_bytes, 1));
  at::parallel_for(0, count, grain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      std::memcpy(out + i * row_bytes, table + static_cast<int64_t>(ids[i]) * row_bytes,
                  static_cast<size_t>(row_bytes));
    }
  });
}

}  // namespace

void gather_rows(const uint8_t* table, int64_t row_bytes, const int32_t* ids, int64_t count,
                 uint8_t* out) {
  gather_impl(table, row_bytes, ids, count, out);
}

void gather_rows(const uint8_t* table, int64_t row_bytes, const int64_t* ids, int64_t count,
                 uint8_t* out) {
  gather_impl(table, row_bytes, ids, count, out);
}

}  // namespace directgnn::cpu
