// Kernels of the GPU sampler. The pick arithmetic is sampling/uniform_pick.h, which the CPU
// sampler runs too: the CPU tests exercise it, and the CPU sampler is this one's oracle.
#include "core/cuda_check.h"
#include "sampling/cuda/sample_kernels.h"
#include "sampling/uniform_pick.h"

namespace directgnn::cuda {
namespace {

constexpr int kThreads = 256;

int blocks_for(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 65535 * 16 ? (blocks > 0 ? blocks : 1) : 65535 * 16);
}

// The graph may be pinned host memory read over PCIe: every thread reads its node's two
// indptr entries once.
__global__ void pick_counts_kernel(const int64_t* __restrict__ indptr,
                                   const int64_t* __restrict__ frontier, int64_t n, int64_t fanout,
                                   int64_t* __restrict__ counts) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t node = frontier[i];
    counts[i] = uniform_pick::pick_count(indptr[node + 1] - indptr[node], fanout);
  }
}

// One warp per frontier node: lanes take its picks in turn, so a node's reads of `indices`
// come from one warp (neighbouring positions when it keeps every neighbour).
template <typename Id>
__global__ void pick_neighbors_kernel(const int64_t* __restrict__ indptr,
                                      const Id* __restrict__ indices,
                                      const int64_t* __restrict__ frontier, int64_t n,
                                      int64_t fanout, uint64_t seed, uint64_t hop,
                                      const int64_t* __restrict__ offsets,
                                      int64_t* __restrict__ out) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = int64_t{gridDim.x} * (blockDim.x / 32);
  for (int64_t i = (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) / 32; i < n; i += warps) {
    const int64_t node = frontier[i];
    const int64_t first = indptr[node];
    const int64_t deg = indptr[node + 1] - first;
    const int64_t begin = offsets[i], count = offsets[i + 1] - begin;
    if (uniform_pick::keeps_all(deg, fanout)) {
      for (int64_t j = lane; j < count; j += 32) {
        out[begin + j] = static_cast<int64_t>(indices[first + j]);
      }
      continue;
    }
    const uniform_pick::Permutation perm(
        static_cast<uint64_t>(deg), uniform_pick::node_key(seed, hop, static_cast<uint64_t>(node)));
    for (int64_t j = lane; j < count; j += 32) {
      out[begin + j] = static_cast<int64_t>(indices[first + perm(static_cast<uint64_t>(j))]);
    }
  }
}

}  // namespace

void launch_pick_counts(const int64_t* indptr, const int64_t* frontier, int64_t n, int64_t fanout,
                        int64_t* counts, cudaStream_t stream) {
  if (n == 0) return;
  pick_counts_kernel<<<blocks_for(n), kThreads, 0, stream>>>(indptr, frontier, n, fanout, counts);
  check_launch(stream, "pick_counts_kernel", __FILE__, __LINE__);
}

void launch_pick_neighbors(const int64_t* indptr, const void* indices, bool indices_int32,
                           const int64_t* frontier, int64_t n, int64_t fanout, uint64_t seed,
                           uint64_t hop, const int64_t* offsets, int64_t* out,
                           cudaStream_t stream) {
  if (n == 0) return;
  const int blocks = blocks_for(n * 32);
  if (indices_int32) {
    pick_neighbors_kernel<<<blocks, kThreads, 0, stream>>>(
        indptr, static_cast<const int32_t*>(indices), frontier, n, fanout, seed, hop, offsets, out);
  } else {
    pick_neighbors_kernel<<<blocks, kThreads, 0, stream>>>(
        indptr, static_cast<const int64_t*>(indices), frontier, n, fanout, seed, hop, offsets, out);
  }
  check_launch(stream, "pick_neighbors_kernel", __FILE__, __LINE__);
}

}  // namespace directgnn::cuda
