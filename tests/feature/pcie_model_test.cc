// The PCIe request model against cases counted by hand (segment by segment, request sizes
// from the bytes each warp instruction touches in each 128-byte segment).
#include "feature/pcie_model.h"

#include <gtest/gtest.h>

#include <random>

#include "test_util.h"

namespace directgnn {
namespace {

constexpr uint64_t kBase = 1 << 20;  // a page-aligned table

RequestModelInput input(std::vector<int64_t> ids, int64_t row_bytes, uint64_t base = kBase) {
  RequestModelInput in;
  in.ids = std::move(ids);
  in.row_bytes = row_bytes;
  in.table_addr = base;
  in.elem_size = 4;
  return in;
}

void expect_counts(const RequestCounts& c, int64_t r128, int64_t r64, int64_t r32, int64_t useful,
                   int64_t warp_loads) {
  EXPECT_EQ(c.requests_128, r128);
  EXPECT_EQ(c.requests_64, r64);
  EXPECT_EQ(c.requests_32, r32);
  EXPECT_EQ(c.useful_bytes, useful);
  EXPECT_EQ(c.warp_loads, warp_loads);
}

TEST(PcieModel, Aligned512ByteRowIsFourFullRequests) {
  // 32 lanes x 16 B from a 128-aligned row: one instruction, segments 0..3 whole.
  const RequestCounts c = model_requests(GatherMethod::kAligned, input({0}, 512));
  expect_counts(c, 4, 0, 0, 512, 1);
  EXPECT_DOUBLE_EQ(c.payload_efficiency(), 1.0);
  EXPECT_DOUBLE_EQ(c.wire_efficiency(), 512.0 / (512 + 4 * kRequestOverheadBytes));
}

TEST(PcieModel, Aligned400ByteRowsEndInA32ByteRequest) {
  // Row 0: bytes 0..399 = segments 0..2 whole + 16 bytes of segment 3 (one 32-byte sector).
  expect_counts(model_requests(GatherMethod::kAligned, input({0}, 400)), 3, 0, 1, 400, 1);
  // Row 1 starts 16 bytes into segment 3: bytes 16..127 of it need the whole 128, then
  // segments 4 and 5 whole, then 32 bytes of segment 6.
  expect_counts(model_requests(GatherMethod::kAligned, input({1}, 400)), 3, 0, 1, 400, 1);
}

TEST(PcieModel, ZeroCopyWarpsStraddleRowsAndSegments) {
  // 100 four-byte elements per row, 200 threads = 7 warps, rows at 0 and 2000:
  //   warps 0-2: row 0 bytes 0..383, one full segment each;
  //   warp 3: row 0 bytes 384..399 (32-byte request) + row 5 bytes 2000..2111
  //           (64 in segment 15, 64 in segment 16);
  //   warps 4, 5: two 64-byte halves each; warp 6: 32 bytes 2368..2399 (one sector).
  const RequestCounts c = model_requests(GatherMethod::kZeroCopy, input({0, 5}, 400));
  expect_counts(c, 3, 6, 2, 800, 7);
  EXPECT_EQ(c.requested_bytes(), 3 * 128 + 6 * 64 + 2 * 32);
}

TEST(PcieModel, SortingIdsReordersRows) {
  RequestModelInput in = input({5, 0}, 400);
  in.sort_ids = true;
  expect_counts(model_requests(GatherMethod::kZeroCopy, in), 3, 6, 2, 800, 7);
}

TEST(PcieModel, NarrowRowsShareAWarp) {
  // 64-byte rows: 4 lanes x 16 B per row, 8 rows per warp; rows 0 and 3 are read by one
  // instruction, each as a 64-byte request.
  expect_counts(model_requests(GatherMethod::kAligned, input({0, 3}, 64)), 0, 2, 0, 128, 1);
}

TEST(PcieModel, MisalignedBaseCostsZeroCopyTwiceTheRequests) {
  // Table 64 bytes past a segment: every zero-copy warp's 128 bytes span two segments.
  const RequestCounts naive = model_requests(GatherMethod::kZeroCopy, input({0}, 512, kBase + 64));
  expect_counts(naive, 0, 8, 0, 512, 4);
  // Aligned starts at the segment: a 64-byte head, three full segments, a 64-byte tail.
  const RequestCounts aligned = model_requests(GatherMethod::kAligned, input({0}, 512, kBase + 64));
  expect_counts(aligned, 3, 2, 0, 512, 2);
  EXPECT_GT(aligned.wire_efficiency(), naive.wire_efficiency());
}

TEST(PcieModel, OddWidthsFallBackToByteLoads) {
  // 3-byte rows 0 and 100: byte loads, 4 lanes per row (3 active), both rows in one warp
  // instruction, each inside one 32-byte sector.
  const RequestCounts c = model_requests(GatherMethod::kAligned, input({0, 100}, 3));
  expect_counts(c, 0, 0, 2, 6, 1);
}

TEST(PcieModel, AlignedIsNeverWorseThanZeroCopyAbove128Bytes) {
  std::mt19937_64 rng(7);
  for (const uint64_t offset : {0, 4, 8, 64}) {
    for (const int64_t width : {132, 256, 400, 512, 1000, 1024, 2408}) {
      std::vector<int64_t> ids(2000);
      for (int64_t& id : ids) id = static_cast<int64_t>(rng() % 1000000);
      const RequestModelInput in = input(ids, width, kBase + offset);
      const RequestCounts a = model_requests(GatherMethod::kAligned, in);
      const RequestCounts z = model_requests(GatherMethod::kZeroCopy, in);
      EXPECT_EQ(a.useful_bytes, z.useful_bytes);
      EXPECT_GE(a.wire_efficiency(), z.wire_efficiency())
          << "width " << width << ", offset " << offset;
    }
  }
}

TEST(PcieModel, RefusesWhatItCannotModel) {
  EXPECT_ERROR_CONTAINS(model_requests(GatherMethod::kCpuCopy, input({0}, 8)),
                        "issues no warp loads");
  EXPECT_ERROR_CONTAINS(model_requests(GatherMethod::kAligned, input({0}, 0)),
                        "row_bytes must be positive");
}

}  // namespace
}  // namespace directgnn
