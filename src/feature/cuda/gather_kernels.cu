#include <algorithm>
#include <cub/device/device_radix_sort.cuh>
#include <type_traits>

#include "core/cuda_check.h"
#include "feature/cuda/gather_kernels.h"
#include "feature/gather_plan.h"

namespace directgnn::cuda {
namespace {

namespace gp = gather_plan;

constexpr int kBlockThreads = 256;

// The type one load of V bytes moves: 16 and 8 bytes become vector loads.
template <int V>
using Vec = std::conditional_t<
    V == 16, uint4,
    std::conditional_t<
        V == 8, uint2,
        std::conditional_t<V == 4, uint32_t, std::conditional_t<V == 2, uint16_t, uint8_t>>>>;

__device__ __forceinline__ int64_t out_row(const int64_t* out_rows, int64_t k) {
  return out_rows != nullptr ? out_rows[k] : k;
}

// Each group of plan.lanes threads copies whole rows, striding over the rows of the batch.
template <int V, typename Id>
__global__ void aligned_gather_kernel(const uint8_t* __restrict__ table, int64_t row_bytes,
                                      const Id* __restrict__ ids, int64_t count,
                                      const int64_t* __restrict__ out_rows,
                                      uint8_t* __restrict__ out, gp::AlignedPlan plan) {
  using T = Vec<V>;
  const int64_t thread = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int lane = static_cast<int>(thread % plan.lanes);
  const int64_t groups = static_cast<int64_t>(gridDim.x) * blockDim.x / plan.lanes;
  for (int64_t k = thread / plan.lanes; k < count; k += groups) {
    const uint8_t* row = table + static_cast<int64_t>(ids[k]) * row_bytes;
    const gp::RowWindow w = gp::row_window(reinterpret_cast<uint64_t>(row), row_bytes, plan);
    const uint8_t* window = row - w.lead;
    uint8_t* dst = out + out_row(out_rows, k) * row_bytes - w.lead;
    for (int64_t pass = w.first_pass; pass < w.end_pass; ++pass) {
      const int64_t o = gp::lane_offset(plan, pass, lane);
      if (gp::lane_active(w, o, row_bytes)) {
        *reinterpret_cast<T*>(dst + o) = *reinterpret_cast<const T*>(window + o);
      }
    }
  }
}

template <int E, typename Id>
__global__ void naive_gather_kernel(const uint8_t* __restrict__ table, int64_t row_bytes,
                                    const Id* __restrict__ ids, int64_t count,
                                    const int64_t* __restrict__ out_rows,
                                    uint8_t* __restrict__ out) {
  using T = Vec<E>;
  const int64_t total = count * (row_bytes / E);
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < total;
       t += step) {
    const gp::NaiveElement e = gp::naive_element(t, row_bytes, E);
    const uint8_t* src = table + static_cast<int64_t>(ids[e.row]) * row_bytes + e.byte_in_row;
    uint8_t* dst = out + out_row(out_rows, e.row) * row_bytes + e.byte_in_row;
    *reinterpret_cast<T*>(dst) = *reinterpret_cast<const T*>(src);
  }
}

int64_t grid_for(int64_t threads_needed, int64_t max_threads) {
  int64_t blocks = (threads_needed + kBlockThreads - 1) / kBlockThreads;
  if (max_threads > 0) blocks = std::min(blocks, std::max<int64_t>(1, max_threads / kBlockThreads));
  return std::min<int64_t>(blocks, 1 << 30);
}

template <int V, typename Id>
void launch_aligned_typed(const RowGather& g, gp::AlignedPlan plan, cudaStream_t stream) {
  const int64_t blocks = grid_for(g.count * plan.lanes, g.max_threads);
  aligned_gather_kernel<V, Id><<<static_cast<unsigned>(blocks), kBlockThreads, 0, stream>>>(
      static_cast<const uint8_t*>(g.table), g.row_bytes, static_cast<const Id*>(g.ids), g.count,
      g.out_rows, static_cast<uint8_t*>(g.out), plan);
  check_launch(stream, "aligned_gather_kernel", __FILE__, __LINE__);
}

template <typename Id>
void launch_aligned_id(const RowGather& g, gp::AlignedPlan plan, cudaStream_t stream) {
  switch (plan.vec) {
    case 16:
      return launch_aligned_typed<16, Id>(g, plan, stream);
    case 8:
      return launch_aligned_typed<8, Id>(g, plan, stream);
    case 4:
      return launch_aligned_typed<4, Id>(g, plan, stream);
    case 2:
      return launch_aligned_typed<2, Id>(g, plan, stream);
    default:
      return launch_aligned_typed<1, Id>(g, plan, stream);
  }
}

template <int E, typename Id>
void launch_naive_typed(const RowGather& g, cudaStream_t stream) {
  const int64_t blocks = grid_for(g.count * (g.row_bytes / E), g.max_threads);
  naive_gather_kernel<E, Id><<<static_cast<unsigned>(blocks), kBlockThreads, 0, stream>>>(
      static_cast<const uint8_t*>(g.table), g.row_bytes, static_cast<const Id*>(g.ids), g.count,
      g.out_rows, static_cast<uint8_t*>(g.out));
  check_launch(stream, "naive_gather_kernel", __FILE__, __LINE__);
}

template <typename Id>
void launch_naive_id(const RowGather& g, int elem, cudaStream_t stream) {
  switch (elem) {
    case 8:
      return launch_naive_typed<8, Id>(g, stream);
    case 4:
      return launch_naive_typed<4, Id>(g, stream);
    case 2:
      return launch_naive_typed<2, Id>(g, stream);
    default:
      return launch_naive_typed<1, Id>(g, stream);
  }
}

__global__ void iota_kernel(int64_t* p, int64_t n) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    p[i] = i;
  }
}

template <typename Id>
size_t sort_workspace_typed(int64_t count) {
  size_t bytes = 0;
  DGNN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
      nullptr, bytes, static_cast<const Id*>(nullptr), static_cast<Id*>(nullptr),
      static_cast<const int64_t*>(nullptr), static_cast<int64_t*>(nullptr),
      static_cast<int>(count)));
  return bytes;
}

}  // namespace

void launch_aligned_gather(const RowGather& g, cudaStream_t stream) {
  if (g.count == 0 || g.row_bytes == 0) return;
  const gp::AlignedPlan plan = gp::make_aligned_plan(
      reinterpret_cast<uint64_t>(g.table), reinterpret_cast<uint64_t>(g.out), g.row_bytes);
  if (g.ids_int64) {
    launch_aligned_id<int64_t>(g, plan, stream);
  } else {
    launch_aligned_id<int32_t>(g, plan, stream);
  }
}

void launch_naive_gather(const RowGather& g, int elem_size, cudaStream_t stream) {
  if (g.count == 0 || g.row_bytes == 0) return;
  const int elem = gp::naive_elem_bytes(elem_size, reinterpret_cast<uint64_t>(g.table),
                                        reinterpret_cast<uint64_t>(g.out), g.row_bytes);
  if (g.ids_int64) {
    launch_naive_id<int64_t>(g, elem, stream);
  } else {
    launch_naive_id<int32_t>(g, elem, stream);
  }
}

size_t sort_ids_workspace_bytes(int64_t count, bool ids_int64) {
  DGNN_CHECK(count < (int64_t{1} << 31), "sorted gather: ", count,
             " ids exceed one radix sort's limit of 2^31; split the batch");
  return ids_int64 ? sort_workspace_typed<int64_t>(count) : sort_workspace_typed<int32_t>(count);
}

void sort_ids(const void* ids, bool ids_int64, int64_t count, int end_bit, void* sorted_ids,
              int64_t* positions_scratch, int64_t* positions_out, void* workspace,
              size_t workspace_bytes, cudaStream_t stream) {
  if (count == 0) return;
  const int64_t blocks = grid_for(count, 0);
  iota_kernel<<<static_cast<unsigned>(blocks), kBlockThreads, 0, stream>>>(positions_scratch,
                                                                           count);
  check_launch(stream, "iota_kernel", __FILE__, __LINE__);
  size_t bytes = workspace_bytes;
  if (ids_int64) {
    DGNN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
        workspace, bytes, static_cast<const int64_t*>(ids), static_cast<int64_t*>(sorted_ids),
        positions_scratch, positions_out, static_cast<int>(count), 0, end_bit, stream));
  } else {
    DGNN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
        workspace, bytes, static_cast<const int32_t*>(ids), static_cast<int32_t*>(sorted_ids),
        positions_scratch, positions_out, static_cast<int>(count), 0, end_bit, stream));
  }
  check_launch(stream, "cub::DeviceRadixSort::SortPairs", __FILE__, __LINE__);
}

}  // namespace directgnn::cuda
