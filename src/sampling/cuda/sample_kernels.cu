// Kernels of the GPU sampler. The pick arithmetic is sampling/uniform_pick.h and
// sampling/weighted_pick.h, which the CPU sampler runs too: the CPU tests exercise it, and the
// CPU sampler is this one's oracle.
#include <cmath>

#include "core/cuda_check.h"
#include "sampling/cuda/sample_kernels.h"
#include "sampling/uniform_pick.h"
#include "sampling/weighted_pick.h"

namespace directgnn::cuda {
namespace {

constexpr int kThreads = 256;
constexpr unsigned kFullMask = 0xffffffffu;

int blocks_for(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 65535 * 16 ? (blocks > 0 ? blocks : 1) : 65535 * 16);
}

// The graph may be pinned host memory read over PCIe: every thread reads its node's two
// indptr entries once.
__global__ void pick_counts_kernel(const int64_t* __restrict__ indptr, HopView hop,
                                   int64_t* __restrict__ counts) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < hop.n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t node = hop.frontier[i];
    counts[i] = uniform_pick::pick_count(indptr[node + 1] - indptr[node], hop.fanout);
  }
}

__device__ int64_t warp_sum(int64_t x) {
  for (int offset = 16; offset > 0; offset /= 2) x += __shfl_xor_sync(kFullMask, x, offset);
  return x;
}

// Weighted counts, one warp per node: a node that keeps none of its neighbours counts its
// positive weights, which the lanes read side by side.
__global__ void weighted_counts_kernel(GraphView graph, HopView hop, int64_t* __restrict__ counts) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = int64_t{gridDim.x} * (blockDim.x / 32);
  for (int64_t i = (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) / 32; i < hop.n; i += warps) {
    const int64_t node = hop.frontier[i];
    const int64_t first = graph.indptr[node], deg = graph.indptr[node + 1] - first;
    int64_t positive = 0;
    if (!uniform_pick::keeps_all(deg, hop.fanout)) {
      for (int64_t j = lane; j < deg; j += 32) positive += graph.weights[first + j] > 0.0f;
      positive = warp_sum(positive);
    }
    if (lane == 0) counts[i] = weighted_pick::pick_count(deg, hop.fanout, positive);
  }
}

// The best of two candidates (key, position) in pick order; position -1 is no candidate.
struct Candidate {
  double key;
  int64_t j;
};

__device__ Candidate better(Candidate a, Candidate b) {
  if (a.j < 0) return b;
  if (b.j < 0) return a;
  return weighted_pick::before(a.key, a.j, b.key, b.j) ? a : b;
}

// A node's weighted picks, by one warp: each lane keeps its best candidates
// (weighted_pick::LaneTop, each key computed once per refill), and pick r is the best of the
// lanes' fronts, found by a warp reduction; the lane that owns it (position j belongs to lane
// j % 32) moves on to its next.
template <typename Id>
__device__ void weighted_picks(const GraphView& graph, const Id* indices, int64_t first,
                               int64_t deg, uint64_t key, int64_t count, int64_t* out,
                               int64_t* edges) {
  const int lane = threadIdx.x % 32;
  const float* w = graph.weights + first;
  weighted_pick::LaneTop mine;
  mine.fill(key, w, deg, lane, 32);
  for (int64_t r = 0; r < count; ++r) {
    Candidate best{0.0, -1};
    if (!mine.empty()) best = {mine.key[mine.head], mine.pos[mine.head]};
    for (int offset = 16; offset > 0; offset /= 2) {
      const Candidate other{__shfl_xor_sync(kFullMask, best.key, offset),
                            __shfl_xor_sync(kFullMask, best.j, offset)};
      best = better(best, other);
    }
    if (lane == 0) {
      out[r] = static_cast<int64_t>(indices[first + best.j]);
      if (edges != nullptr) edges[r] = first + best.j;
    }
    if (best.j % 32 == lane) mine.pop(key, w, deg, lane, 32);
  }
}

// One warp per frontier node: lanes take its picks in turn, so a node's reads of `indices`
// come from one warp (neighbouring positions when it keeps every neighbour).
template <typename Id>
__global__ void pick_neighbors_kernel(GraphView graph, const Id* __restrict__ indices, HopView hop,
                                      const int64_t* __restrict__ offsets,
                                      int64_t* __restrict__ out, int64_t* __restrict__ edges) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = int64_t{gridDim.x} * (blockDim.x / 32);
  for (int64_t i = (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) / 32; i < hop.n; i += warps) {
    const int64_t node = hop.frontier[i];
    const int64_t first = graph.indptr[node];
    const int64_t deg = graph.indptr[node + 1] - first;
    const int64_t begin = offsets[i], count = offsets[i + 1] - begin;
    int64_t* node_edges = edges == nullptr ? nullptr : edges + begin;
    const uint64_t key = uniform_pick::node_key(hop.seed, hop.hop, static_cast<uint64_t>(node));
    if (uniform_pick::keeps_all(deg, hop.fanout)) {
      for (int64_t j = lane; j < count; j += 32) {
        out[begin + j] = static_cast<int64_t>(indices[first + j]);
        if (node_edges != nullptr) node_edges[j] = first + j;
      }
    } else if (graph.weights != nullptr) {
      weighted_picks(graph, indices, first, deg, key, count, out + begin, node_edges);
    } else {
      const uniform_pick::Permutation perm(static_cast<uint64_t>(deg), key);
      for (int64_t j = lane; j < count; j += 32) {
        const auto position = static_cast<int64_t>(perm(static_cast<uint64_t>(j)));
        out[begin + j] = static_cast<int64_t>(indices[first + position]);
        if (node_edges != nullptr) node_edges[j] = first + position;
      }
    }
  }
}

}  // namespace

void launch_pick_counts(const GraphView& graph, const HopView& hop, int64_t* counts,
                        cudaStream_t stream) {
  if (hop.n == 0) return;
  if (graph.weights != nullptr) {
    weighted_counts_kernel<<<blocks_for(hop.n * 32), kThreads, 0, stream>>>(graph, hop, counts);
    check_launch(stream, "weighted_counts_kernel", __FILE__, __LINE__);
    return;
  }
  pick_counts_kernel<<<blocks_for(hop.n), kThreads, 0, stream>>>(graph.indptr, hop, counts);
  check_launch(stream, "pick_counts_kernel", __FILE__, __LINE__);
}

void launch_pick_neighbors(const GraphView& graph, const HopView& hop, const int64_t* offsets,
                           int64_t* out, int64_t* edges, cudaStream_t stream) {
  if (hop.n == 0) return;
  const int blocks = blocks_for(hop.n * 32);
  if (graph.indices_int32) {
    pick_neighbors_kernel<<<blocks, kThreads, 0, stream>>>(
        graph, static_cast<const int32_t*>(graph.indices), hop, offsets, out, edges);
  } else {
    pick_neighbors_kernel<<<blocks, kThreads, 0, stream>>>(
        graph, static_cast<const int64_t*>(graph.indices), hop, offsets, out, edges);
  }
  check_launch(stream, "pick_neighbors_kernel", __FILE__, __LINE__);
}

}  // namespace directgnn::cuda
