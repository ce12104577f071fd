#include "feature/pcie_model.h"

#include <algorithm>
#include <array>

#include "directgnn/error.h"
#include "feature/gather_plan.h"

namespace directgnn {
namespace {

namespace gp = gather_plan;

// Collects the bytes one warp instruction touches, segment by segment, and turns each touched
// segment into one request.
class WarpLoad {
 public:
  void touch(uint64_t addr, int64_t bytes) {
    const uint64_t segment = addr / gp::kSegmentBytes;
    const int lo = static_cast<int>(addr % gp::kSegmentBytes);
    const int hi = lo + static_cast<int>(bytes);  // accesses never cross a segment
    useful_ += bytes;
    for (int i = 0; i < used_; ++i) {
      if (segments_[i].id == segment) {
        segments_[i].lo = std::min(segments_[i].lo, lo);
        segments_[i].hi = std::max(segments_[i].hi, hi);
        return;
      }
    }
    segments_[used_++] = Segment{segment, lo, hi};
  }

  void flush(RequestCounts& counts) {
    if (used_ == 0) return;
    ++counts.warp_loads;
    counts.useful_bytes += useful_;
    for (int i = 0; i < used_; ++i) {
      const Segment& s = segments_[i];
      if (s.lo / 32 == (s.hi - 1) / 32) {
        ++counts.requests_32;
      } else if (s.lo / 64 == (s.hi - 1) / 64) {
        ++counts.requests_64;
      } else {
        ++counts.requests_128;
      }
    }
    used_ = 0;
    useful_ = 0;
  }

 private:
  struct Segment {
    uint64_t id;
    int lo, hi;
  };
  std::array<Segment, gp::kWarpSize> segments_{};
  int used_ = 0;
  int64_t useful_ = 0;
};

void model_naive(const RequestModelInput& in, const std::vector<int64_t>& ids,
                 RequestCounts& counts) {
  const int e = gp::naive_elem_bytes(in.elem_size, in.table_addr, in.out_addr,
                                     static_cast<uint64_t>(in.row_bytes));
  const int64_t total = static_cast<int64_t>(ids.size()) * (in.row_bytes / e);
  WarpLoad load;
  for (int64_t warp_start = 0; warp_start < total; warp_start += gp::kWarpSize) {
    const int64_t end = std::min<int64_t>(total, warp_start + gp::kWarpSize);
    for (int64_t t = warp_start; t < end; ++t) {
      const gp::NaiveElement el = gp::naive_element(t, in.row_bytes, e);
      load.touch(in.table_addr + static_cast<uint64_t>(ids[el.row] * in.row_bytes + el.byte_in_row),
                 e);
    }
    load.flush(counts);
  }
}

void model_aligned(const RequestModelInput& in, const std::vector<int64_t>& ids,
                   RequestCounts& counts) {
  const gp::AlignedPlan plan =
      gp::make_aligned_plan(in.table_addr, in.out_addr, static_cast<uint64_t>(in.row_bytes));
  const int groups = gp::kWarpSize / plan.lanes;
  const auto count = static_cast<int64_t>(ids.size());
  std::vector<gp::RowWindow> windows(static_cast<size_t>(groups));
  WarpLoad load;
  for (int64_t first = 0; first < count; first += groups) {
    const int rows = static_cast<int>(std::min<int64_t>(groups, count - first));
    int64_t iterations = 0;
    for (int g = 0; g < rows; ++g) {
      const uint64_t row_addr =
          in.table_addr + static_cast<uint64_t>(ids[first + g] * in.row_bytes);
      windows[g] = gp::row_window(row_addr, in.row_bytes, plan);
      iterations = std::max(iterations, windows[g].end_pass - windows[g].first_pass);
    }
    // The groups of a warp run their pass loops in lockstep: iteration i is pass
    // first_pass + i of each group that still has one.
    for (int64_t i = 0; i < iterations; ++i) {
      for (int g = 0; g < rows; ++g) {
        const gp::RowWindow& w = windows[g];
        const int64_t pass = w.first_pass + i;
        if (pass >= w.end_pass) continue;
        for (int lane = 0; lane < plan.lanes; ++lane) {
          const int64_t o = gp::lane_offset(plan, pass, lane);
          if (gp::lane_active(w, o, in.row_bytes)) {
            load.touch(w.start + static_cast<uint64_t>(o), plan.vec);
          }
        }
      }
      load.flush(counts);
    }
  }
}

}  // namespace

double RequestCounts::payload_efficiency() const {
  const int64_t r = requested_bytes();
  return r == 0 ? 0.0 : static_cast<double>(useful_bytes) / static_cast<double>(r);
}

double RequestCounts::wire_efficiency() const {
  const int64_t wire = requested_bytes() + kRequestOverheadBytes * requests();
  return wire == 0 ? 0.0 : static_cast<double>(useful_bytes) / static_cast<double>(wire);
}

RequestCounts model_requests(GatherMethod method, const RequestModelInput& input) {
  DGNN_CHECK(input.row_bytes > 0, "request model: row_bytes must be positive");
  DGNN_CHECK(
      input.elem_size == 1 || input.elem_size == 2 || input.elem_size == 4 || input.elem_size == 8,
      "request model: elem_size must be 1, 2, 4 or 8");
  std::vector<int64_t> ids = input.ids;
  if (input.sort_ids) std::sort(ids.begin(), ids.end());
  RequestCounts counts;
  switch (method) {
    case GatherMethod::kZeroCopy:
      model_naive(input, ids, counts);
      break;
    case GatherMethod::kAligned:
      model_aligned(input, ids, counts);
      break;
    default:
      fail("request model: method '", gather_method_name(method),
           "' issues no warp loads (use zero-copy or aligned)");
  }
  return counts;
}

}  // namespace directgnn
