// Which byte ranges of a feature file one gather reads, and where each requested row lands.
//
// The requested rows are sorted by file offset, repeated ids are read once, and rows whose
// 4 KiB blocks coincide or adjoin are merged into one extent. For O_DIRECT (align 4 KiB) an
// extent is whole blocks; for buffered reads (align 1) it runs from its first row's first byte
// to its last row's last, so a row smaller than a block asks the page cache for its own bytes
// only (a 256-byte row: 256 bytes, not 4 KiB). Extents are read into one buffer, back to back;
// `source[i]` is where request i's row starts in that buffer, so rows are copied out in
// request order.
#pragma once

#include <cstdint>
#include <vector>

namespace directgnn::disk {

constexpr int64_t kBlockBytes = 4096;

struct ReadExtent {
  int64_t offset = 0;         // in the file; a multiple of PlanShape::align
  int64_t length = 0;         // a multiple of PlanShape::align (may run past the end of the file)
  int64_t needed = 0;         // bytes from `offset` up to the end of its last row (<= length)
  int64_t buffer_offset = 0;  // where the extent goes in the read buffer
};

struct ReadPlan {
  std::vector<ReadExtent> extents;
  std::vector<int64_t> source;  // per request: its row's byte offset in the read buffer
  int64_t buffer_bytes = 0;     // sum of the extents' lengths
  int64_t unique_rows = 0;
};

struct PlanShape {
  int64_t data_offset = 0;  // file offset of row 0
  int64_t row_bytes = 0;
  // An extent grows no longer than this (it splits there), so a long run of adjoining rows
  // still spreads over several reads in flight.
  int64_t max_extent_bytes = int64_t{1} << 20;
  // Extents start and end on multiples of this: kBlockBytes for O_DIRECT, 1 for buffered reads.
  int64_t align = kBlockBytes;
};

// `ids` are valid row numbers (checked by the caller), in any order, repeats allowed.
ReadPlan plan_reads(const int32_t* ids, int64_t count, const PlanShape& shape);
ReadPlan plan_reads(const int64_t* ids, int64_t count, const PlanShape& shape);

}  // namespace directgnn::disk
