#include "feature/disk/read_plan.h"

#include <algorithm>
#include <numeric>

namespace directgnn::disk {
namespace {

int64_t round_down(int64_t x, int64_t to) { return x / to * to; }
int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// Adds the row at file bytes [begin, end) to the last extent when their 4 KiB blocks coincide
// or adjoin and the extent stays under the cap; otherwise starts an extent. Extents are rounded
// to `align`. Returns the row's offset in the read buffer.
int64_t place_row(ReadPlan& plan, int64_t begin, int64_t end, const PlanShape& shape) {
  const int64_t first = round_down(begin, shape.align), last = round_up(end, shape.align);
  if (!plan.extents.empty()) {
    ReadExtent& e = plan.extents.back();
    const int64_t e_end = e.offset + e.length;
    // Merging rows of nearby blocks saves read calls, which cost more than copying the gap
    // (docs/benchmarks.md: merging only rows 512 bytes apart asked 4.5x fewer bytes and was
    // no faster).
    const bool near = round_down(begin, kBlockBytes) <= round_up(e_end, kBlockBytes);
    if (near && last - e.offset <= std::max(shape.max_extent_bytes, e.length)) {
      e.length = std::max(e_end, last) - e.offset;
      e.needed = std::max(e.needed, end - e.offset);
      plan.buffer_bytes = e.buffer_offset + e.length;
      return e.buffer_offset + (begin - e.offset);
    }
  }
  ReadExtent e;
  e.offset = first;
  e.length = last - first;
  e.needed = end - first;
  e.buffer_offset = plan.buffer_bytes;
  plan.extents.push_back(e);
  plan.buffer_bytes += e.length;
  return e.buffer_offset + (begin - first);
}

template <typename Id>
ReadPlan plan_impl(const Id* ids, int64_t count, const PlanShape& shape) {
  std::vector<int64_t> order(static_cast<size_t>(count));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::sort(order.begin(), order.end(),
            [ids](int64_t a, int64_t b) { return ids[a] < ids[b] || (ids[a] == ids[b] && a < b); });
  ReadPlan plan;
  plan.source.resize(static_cast<size_t>(count));
  int64_t previous = -1, at = 0;
  for (const int64_t i : order) {
    const auto id = static_cast<int64_t>(ids[i]);
    if (id != previous) {
      const int64_t begin = shape.data_offset + id * shape.row_bytes;
      at = place_row(plan, begin, begin + shape.row_bytes, shape);
      previous = id;
      ++plan.unique_rows;
    }
    plan.source[static_cast<size_t>(i)] = at;
  }
  return plan;
}

}  // namespace

ReadPlan plan_reads(const int32_t* ids, int64_t count, const PlanShape& shape) {
  return plan_impl(ids, count, shape);
}

ReadPlan plan_reads(const int64_t* ids, int64_t count, const PlanShape& shape) {
  return plan_impl(ids, count, shape);
}

}  // namespace directgnn::disk
