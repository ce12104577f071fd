// Plain-CUDA row gathers over raw pointers and a caller's stream; no torch types, so they
// compile with nvcc on any machine (GPU or not). The tensor glue is cuda/gather.cc.
//
// Contract for every launcher: `table` is a device-accessible address of row 0 (GPU memory,
// or the device mapping of pinned host memory); `ids` and `out_rows` live in GPU memory; ids
// were range-checked by the caller (the kernels trust them). out[out_rows ? out_rows[k] : k]
// receives table[ids[k]]. Nothing is launched when count == 0. Errors throw directgnn::Error.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace directgnn::cuda {

struct RowGather {
  const void* table = nullptr;
  int64_t row_bytes = 0;
  const void* ids = nullptr;
  bool ids_int64 = true;
  int64_t count = 0;
  const int64_t* out_rows = nullptr;  // optional permutation (sorted gathers)
  void* out = nullptr;
  int64_t max_threads = 0;  // cap on the launch's threads (grid-stride loops); 0 = no cap
};

// Warp-per-row (sub-warp for narrow rows) 128-byte aligned gather; see gather_plan.h.
void launch_aligned_gather(const RowGather& g, cudaStream_t stream);

// One thread per element of `elem_size` bytes (narrowed to what the addresses allow).
void launch_naive_gather(const RowGather& g, int elem_size, cudaStream_t stream);

// Sorting ids before the gather (CUB radix sort of (id, position) pairs over the low `end_bit`
// bits): the caller provides buffers of `count` elements and a workspace of the given size.
size_t sort_ids_workspace_bytes(int64_t count, bool ids_int64);
void sort_ids(const void* ids, bool ids_int64, int64_t count, int end_bit, void* sorted_ids,
              int64_t* positions_scratch, int64_t* positions_out, void* workspace,
              size_t workspace_bytes, cudaStream_t stream);

}  // namespace directgnn::cuda
