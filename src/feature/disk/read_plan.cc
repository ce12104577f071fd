#include "feature/disk/read_plan.h"

#include <algorithm>
#include <numeric>

namespace directgnn::disk {
namespace {

int64_t round_down(int64_t x) { return x / kBlockBytes * kBlockBytes; }
int64_t round_up(int64_t x) { return (x + kBlockBytes - 1) / kBlockBytes * kBlockBytes; }

// Adds the row at file bytes [begin, end) to the last extent when their blocks coincide or
// adjoin and the extent stays under the cap; otherwise starts an extent. Returns the row's
// offset in the read buffer.
int64_t place_row(ReadPlan& plan, int64_t begin, int64_t end, int64_t max_extent) {
  const int64_t first = round_down(begin), last = round_up(end);
  if (!plan.extents.empty()) {
    ReadExtent& e = plan.extents.back();
    const int64_t e_end = e.offset + e.length;
    if (first <= e_end && last - e.offset <= std::max(max_extent, e.length)) {
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
      at = place_row(plan, begin, begin + shape.row_bytes, shape.max_extent_bytes);
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
