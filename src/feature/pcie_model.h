// A model of the PCIe read requests a GPU gather from pinned host memory issues, computed on
// the CPU with the kernels' own index arithmetic (gather_plan.h).
//
// For every warp-wide load instruction, the active lanes' bytes are grouped by 128-byte
// segment; each touched segment costs one request, the smallest naturally aligned 32, 64 or
// 128-byte block that holds all the bytes the instruction touches in it. Useful bytes are
// the row bytes the lanes asked for. On the wire each request also carries a transaction-layer
// header (kRequestOverheadBytes, the completion TLP header, framing and CRC of PCIe 4/5), so
// many small requests cost more than their payload says.
#pragma once

#include <cstdint>
#include <vector>

#include "feature/feature_store.h"

namespace directgnn {

constexpr int kRequestOverheadBytes = 24;

struct RequestCounts {
  int64_t requests_32 = 0;
  int64_t requests_64 = 0;
  int64_t requests_128 = 0;
  int64_t useful_bytes = 0;
  int64_t warp_loads = 0;  // warp-wide load instructions that touched memory

  int64_t requests() const { return requests_32 + requests_64 + requests_128; }
  int64_t requested_bytes() const {
    return 32 * requests_32 + 64 * requests_64 + 128 * requests_128;
  }
  // Useful over requested payload bytes.
  double payload_efficiency() const;
  // Useful over payload plus per-request overhead: the share of the link that carries rows.
  double wire_efficiency() const;
};

struct RequestModelInput {
  std::vector<int64_t> ids;
  int64_t row_bytes = 0;
  uint64_t table_addr = 0;  // address of row 0
  uint64_t out_addr = 0;    // address of the output's row 0 (torch's allocations: 512-aligned)
  int elem_size = 4;        // the table dtype's element size (zero-copy reads elements)
  bool sort_ids = false;
};

// Requests issued by `method` (kZeroCopy or kAligned) for one gather.
RequestCounts model_requests(GatherMethod method, const RequestModelInput& input);

}  // namespace directgnn
