// Index arithmetic of the GPU row gathers, shared by the CUDA kernels (cuda/gather_kernels.cu),
// the PCIe request model (pcie_model.cc) and the CPU emulation the tests run. Everything here
// is plain integer arithmetic on addresses, compiled as host code by g++ and as host+device
// code by nvcc, so the CPU tests check the very expressions the kernels execute.
//
// Two gathers of rows out[i] = table[ids[i]] (row_bytes each):
//  - naive ("zero-copy"): one thread per element of `elem_bytes`, flat over the output, so
//    consecutive lanes read consecutive elements and a warp may straddle rows.
//  - aligned: a group of `lanes` threads (a warp, or a sub-warp for narrow rows) copies one row.
//    The group's reads start at the row's address rounded down to a 128-byte boundary; lanes
//    whose bytes fall outside the row are masked. Each lane moves `vec` bytes per load, where
//    vec = gcd(16, table address, output address, row bytes): every load is then naturally
//    aligned and lies wholly inside or wholly outside the row.
#pragma once

#include <cstdint>

#include "core/hd.h"

namespace directgnn::gather_plan {

constexpr int kWarpSize = 32;
constexpr int kSegmentBytes = 128;  // one full PCIe read request / L2 line
constexpr int kMaxVectorBytes = 16;

DGNN_HD inline uint64_t gcd_u64(uint64_t a, uint64_t b) {
  while (b != 0) {
    const uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

// Largest power of two <= 16 that divides every address a load can touch.
DGNN_HD inline int vector_bytes(uint64_t table_addr, uint64_t out_addr, uint64_t row_bytes) {
  uint64_t g = gcd_u64(kMaxVectorBytes, row_bytes);
  g = gcd_u64(g, table_addr);
  g = gcd_u64(g, out_addr);
  return static_cast<int>(g);
}

struct AlignedPlan {
  int vec = 1;    // bytes per load: 1, 2, 4, 8 or 16
  int lanes = 1;  // threads per row: a power of two, 1..32
};

// Lanes per row: enough that one pass of the group covers the row (rounded up to a power of
// two), capped at a warp. Narrow rows get sub-warps so a warp still reads several rows at once.
DGNN_HD inline AlignedPlan make_aligned_plan(uint64_t table_addr, uint64_t out_addr,
                                             uint64_t row_bytes) {
  AlignedPlan p;
  p.vec = vector_bytes(table_addr, out_addr, row_bytes);
  const uint64_t loads = (row_bytes + p.vec - 1) / p.vec;
  int lanes = 1;
  while (lanes < kWarpSize && static_cast<uint64_t>(lanes) < loads) lanes *= 2;
  p.lanes = lanes;
  return p;
}

// Where one row's group reads: `start` is the row address rounded down to 128 bytes, `lead`
// the row's offset inside that window; pass `c` covers window bytes [c*stride, (c+1)*stride)
// with stride = lanes*vec, for c in [first_pass, end_pass). Passes that would be wholly before
// the row (possible when stride < 128) are skipped.
struct RowWindow {
  uint64_t start = 0;
  int64_t lead = 0;
  int64_t first_pass = 0;
  int64_t end_pass = 0;
};

DGNN_HD inline RowWindow row_window(uint64_t row_addr, int64_t row_bytes, AlignedPlan p) {
  RowWindow w;
  w.start = row_addr & ~static_cast<uint64_t>(kSegmentBytes - 1);
  w.lead = static_cast<int64_t>(row_addr - w.start);
  const int64_t stride = static_cast<int64_t>(p.lanes) * p.vec;
  w.first_pass = w.lead / stride;
  w.end_pass = (w.lead + row_bytes + stride - 1) / stride;
  return w;
}

// Window offset lane `lane` loads in pass `pass`, and whether those bytes belong to the row.
DGNN_HD inline int64_t lane_offset(const AlignedPlan& p, int64_t pass, int lane) {
  return (pass * p.lanes + lane) * static_cast<int64_t>(p.vec);
}
DGNN_HD inline bool lane_active(const RowWindow& w, int64_t offset, int64_t row_bytes) {
  return offset >= w.lead && offset < w.lead + row_bytes;
}

// Naive gather: thread `t` of the flat launch copies element `t % elems_per_row` of output
// row `t / elems_per_row`.
struct NaiveElement {
  int64_t row = 0;
  int64_t byte_in_row = 0;
};
DGNN_HD inline NaiveElement naive_element(int64_t t, int64_t row_bytes, int elem_bytes) {
  const int64_t per_row = row_bytes / elem_bytes;
  return NaiveElement{t / per_row, (t % per_row) * elem_bytes};
}

// Element width of the naive gather: the table's element size, narrowed until it divides the
// row and both base addresses (a uint8 view of odd-width rows reads bytes).
DGNN_HD inline int naive_elem_bytes(int elem_size, uint64_t table_addr, uint64_t out_addr,
                                    uint64_t row_bytes) {
  int e = elem_size;
  while (e > 1 && (row_bytes % e != 0 || table_addr % e != 0 || out_addr % e != 0)) e /= 2;
  return e;
}

// Bits a radix sort of ids in [0, num_rows) must look at before the sorted gather: enough for
// the largest id, never more than the id type holds (CUB refuses an end bit past the key's
// width, and an int32 id of a table over 2^32 rows cannot name the rows past 2^31 anyway).
DGNN_HD inline int sort_end_bit(int64_t num_rows, int id_bytes) {
  int bits = 1;
  while (bits < 63 && (int64_t{1} << bits) < num_rows) ++bits;
  const int width = 8 * id_bytes;
  return bits < width ? bits : width;
}

}  // namespace directgnn::gather_plan
