// The GPU gathers' index arithmetic (gather_plan.h), run on the CPU: a lane-by-lane emulation
// of each kernel's loop must reproduce the CPU oracle for every row width and base alignment,
// with every vector access naturally aligned and no byte written outside its output row.
#include "feature/gather_plan.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

namespace directgnn {
namespace {

namespace gp = gather_plan;

uint64_t addr(const void* p) { return reinterpret_cast<uint64_t>(p); }

// What aligned_gather_kernel does, lane by lane. Returns false on a misaligned access.
template <typename Id>
bool emulate_aligned(const uint8_t* table, int64_t row_bytes, const std::vector<Id>& ids,
                     uint8_t* out) {
  const gp::AlignedPlan plan = gp::make_aligned_plan(addr(table), addr(out), row_bytes);
  for (size_t k = 0; k < ids.size(); ++k) {
    const uint8_t* row = table + static_cast<int64_t>(ids[k]) * row_bytes;
    const gp::RowWindow w = gp::row_window(addr(row), row_bytes, plan);
    const uint8_t* window = row - w.lead;
    uint8_t* dst = out + static_cast<int64_t>(k) * row_bytes - w.lead;
    if (w.start % gp::kSegmentBytes != 0) return false;
    for (int64_t pass = w.first_pass; pass < w.end_pass; ++pass) {
      for (int lane = 0; lane < plan.lanes; ++lane) {
        const int64_t o = gp::lane_offset(plan, pass, lane);
        if (!gp::lane_active(w, o, row_bytes)) continue;
        if (addr(window + o) % plan.vec != 0 || addr(dst + o) % plan.vec != 0) return false;
        std::memcpy(dst + o, window + o, static_cast<size_t>(plan.vec));
      }
    }
  }
  return true;
}

// What naive_gather_kernel does, thread by thread.
template <typename Id>
bool emulate_naive(const uint8_t* table, int64_t row_bytes, int elem_size,
                   const std::vector<Id>& ids, uint8_t* out) {
  const int e = gp::naive_elem_bytes(elem_size, addr(table), addr(out), row_bytes);
  const int64_t total = static_cast<int64_t>(ids.size()) * (row_bytes / e);
  for (int64_t t = 0; t < total; ++t) {
    const gp::NaiveElement el = gp::naive_element(t, row_bytes, e);
    const uint8_t* src = table + static_cast<int64_t>(ids[el.row]) * row_bytes + el.byte_in_row;
    uint8_t* dst = out + el.row * row_bytes + el.byte_in_row;
    if (addr(src) % e != 0 || addr(dst) % e != 0) return false;
    std::memcpy(dst, src, static_cast<size_t>(e));
  }
  return true;
}

// A buffer whose data starts `offset` bytes past a 128-byte boundary, with guard bytes after.
struct OffsetBuffer {
  OffsetBuffer(size_t bytes, int offset) : storage(bytes + 512, 0xAB) {
    const uint64_t base = (addr(storage.data()) + 127) / 128 * 128;
    data = storage.data() + (base - addr(storage.data())) + offset;
  }
  std::vector<uint8_t> storage;
  uint8_t* data;
};

std::vector<int64_t> widths_to_test() {
  std::vector<int64_t> w;
  for (int64_t i = 1; i <= 300; ++i) w.push_back(i);
  for (int64_t i : {400, 508, 511, 512, 513, 1000, 1024, 2047, 2408, 4096, 4097, 4099}) {
    w.push_back(i);
  }
  return w;
}

template <typename Id>
void check_all_widths(int table_offset, int out_offset) {
  std::mt19937_64 rng(static_cast<uint64_t>(table_offset * 131 + out_offset));
  const int64_t rows = 37;
  for (const int64_t width : widths_to_test()) {
    OffsetBuffer table(static_cast<size_t>(rows * width), table_offset);
    for (int64_t i = 0; i < rows * width; ++i) table.data[i] = static_cast<uint8_t>(rng());
    std::vector<Id> ids(53);
    for (Id& id : ids) id = static_cast<Id>(rng() % rows);  // duplicates guaranteed
    ids[0] = 0;
    ids[1] = static_cast<Id>(rows - 1);
    std::vector<uint8_t> expected(ids.size() * static_cast<size_t>(width));
    for (size_t k = 0; k < ids.size(); ++k) {
      std::memcpy(expected.data() + k * width, table.data + static_cast<int64_t>(ids[k]) * width,
                  static_cast<size_t>(width));
    }
    for (const bool aligned : {true, false}) {
      OffsetBuffer out(expected.size(), out_offset);
      const bool ok = aligned ? emulate_aligned(table.data, width, ids, out.data)
                              : emulate_naive(table.data, width, 4, ids, out.data);
      ASSERT_TRUE(ok) << (aligned ? "aligned" : "naive") << " misaligned access, width " << width
                      << ", table offset " << table_offset;
      ASSERT_EQ(std::memcmp(out.data, expected.data(), expected.size()), 0)
          << (aligned ? "aligned" : "naive") << " width " << width << ", table offset "
          << table_offset << ", out offset " << out_offset;
      const uint8_t* end = out.data + expected.size();
      for (const uint8_t* p = end; p < out.storage.data() + out.storage.size(); ++p) {
        ASSERT_EQ(*p, 0xAB) << "byte written past the output, width " << width;
      }
      for (const uint8_t* p = out.storage.data(); p < out.data; ++p) {
        ASSERT_EQ(*p, 0xAB) << "byte written before the output, width " << width;
      }
    }
  }
}

class EmulatedKernels : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(EmulatedKernels, MatchTheOracleForEveryWidthWithInt32Ids) {
  check_all_widths<int32_t>(std::get<0>(GetParam()), std::get<1>(GetParam()));
}

TEST_P(EmulatedKernels, MatchTheOracleForEveryWidthWithInt64Ids) {
  check_all_widths<int64_t>(std::get<0>(GetParam()), std::get<1>(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(TableAndOutputOffsets, EmulatedKernels,
                         ::testing::Combine(::testing::Values(0, 4, 8, 64),
                                            ::testing::Values(0, 8)));

TEST(GatherPlan, VectorWidthIsTheGcdOf16AddressesAndRowBytes) {
  EXPECT_EQ(gp::vector_bytes(4096, 0, 512), 16);
  EXPECT_EQ(gp::vector_bytes(4096, 0, 400), 16);
  EXPECT_EQ(gp::vector_bytes(4096 + 4, 0, 512), 4);
  EXPECT_EQ(gp::vector_bytes(4096 + 8, 0, 512), 8);
  EXPECT_EQ(gp::vector_bytes(4096, 2, 512), 2);
  EXPECT_EQ(gp::vector_bytes(4096, 0, 2408), 8);
  EXPECT_EQ(gp::vector_bytes(4096, 0, 4099), 1);
  EXPECT_EQ(gp::vector_bytes(0, 0, 12), 4);
}

TEST(GatherPlan, LanesCoverTheRowUpToAWarp) {
  EXPECT_EQ(gp::make_aligned_plan(0, 0, 512).lanes, 32);   // 32 x 16 B
  EXPECT_EQ(gp::make_aligned_plan(0, 0, 400).lanes, 32);   // 25 loads
  EXPECT_EQ(gp::make_aligned_plan(0, 0, 64).lanes, 4);     // sub-warp: 8 rows per warp
  EXPECT_EQ(gp::make_aligned_plan(0, 0, 4).lanes, 1);      // one 4-byte load per row
  EXPECT_EQ(gp::make_aligned_plan(0, 0, 2408).lanes, 32);  // 8-byte loads, 10 passes
  EXPECT_EQ(gp::make_aligned_plan(0, 0, 2408).vec, 8);
}

TEST(GatherPlan, WindowStartsAt128AndSkipsPassesBeforeTheRow) {
  const gp::AlignedPlan wide = gp::make_aligned_plan(0, 0, 400);
  const gp::RowWindow w = gp::row_window(400, 400, wide);  // row 1 of a 400-byte table
  EXPECT_EQ(w.start, 384u);
  EXPECT_EQ(w.lead, 16);
  EXPECT_EQ(w.first_pass, 0);
  EXPECT_EQ(w.end_pass, 1);  // 16 + 400 bytes fit one 512-byte pass
  EXPECT_FALSE(gp::lane_active(w, gp::lane_offset(wide, 0, 0), 400));
  EXPECT_TRUE(gp::lane_active(w, gp::lane_offset(wide, 0, 1), 400));
  EXPECT_FALSE(gp::lane_active(w, gp::lane_offset(wide, 0, 26), 400));

  const gp::AlignedPlan narrow = gp::make_aligned_plan(0, 0, 64);  // 4 lanes x 16 B
  const gp::RowWindow n = gp::row_window(3 * 64, 64, narrow);
  EXPECT_EQ(n.start, 128u);
  EXPECT_EQ(n.lead, 64);
  EXPECT_EQ(n.first_pass, 1);  // pass 0 would only read bytes before the row
  EXPECT_EQ(n.end_pass, 2);
}

TEST(GatherPlan, NaiveElementsNarrowToWhatAddressesAllow) {
  EXPECT_EQ(gp::naive_elem_bytes(4, 0, 0, 400), 4);
  EXPECT_EQ(gp::naive_elem_bytes(4, 2, 0, 400), 2);
  EXPECT_EQ(gp::naive_elem_bytes(4, 0, 0, 6), 2);
  EXPECT_EQ(gp::naive_elem_bytes(2, 0, 0, 7), 1);
  const gp::NaiveElement e = gp::naive_element(103, 400, 4);
  EXPECT_EQ(e.row, 1);
  EXPECT_EQ(e.byte_in_row, 12);
}

TEST(GatherPlan, SortEndBitCoversTheLargestIdWithinTheIdType) {
  EXPECT_EQ(gp::sort_end_bit(1, 4), 1);
  EXPECT_EQ(gp::sort_end_bit(2, 4), 1);
  EXPECT_EQ(gp::sort_end_bit(3, 4), 2);
  EXPECT_EQ(gp::sort_end_bit(int64_t{1} << 20, 4), 20);
  EXPECT_EQ(gp::sort_end_bit((int64_t{1} << 20) + 1, 8), 21);
  // Tables over 2^32 rows: int32 ids stop at the type's 32 bits, int64 ids go on.
  EXPECT_EQ(gp::sort_end_bit((int64_t{1} << 33) + 5, 4), 32);
  EXPECT_EQ(gp::sort_end_bit((int64_t{1} << 33) + 5, 8), 34);
  EXPECT_EQ(gp::sort_end_bit(INT64_MAX, 8), 63);
}

}  // namespace
}  // namespace directgnn
