// Edges per second of GAT's message passing (nn/attention.h) over a sampled block, forward and
// backward, 8 heads of 8 channels, per thread count: the edge softmax, and the multi-head
// aggregation's CPU twin against its device-generic twin on the same CPU tensors.
#include <ATen/ATen.h>

#include "nn/attention.h"
#include "nn_bench_util.h"

namespace directgnn {
namespace {

constexpr int64_t kHeads = 8, kChannels = 8;

void run(benchmark::State& state, bool generic) {
  bench::use_threads(state);
  const Block& b = bench::outer_block_100k();
  at::Tensor h = at::randn({b.num_src, kHeads * kChannels}).set_requires_grad(true);
  at::Tensor score = at::randn({b.num_src, kHeads}).set_requires_grad(true);
  const at::Tensor score_dst = at::randn({b.num_dst, kHeads});
  const at::Tensor grad = at::randn({b.num_dst, kHeads * kChannels});
  for (auto _ : state) {
    const EdgeAttention a =
        edge_softmax(b.indptr, b.indices, score, score.narrow(0, 0, b.num_dst), score_dst, 0.2);
    const at::Tensor y = generic ? multi_head_aggregate_generic(b.indptr, b.indices, a.edges, h)
                                 : multi_head_aggregate(b.indptr, b.indices, a.edges, h);
    y.backward(grad);
    benchmark::DoNotOptimize(h.grad().data_ptr());
    h.mutable_grad().reset();
    score.mutable_grad().reset();
  }
  bench::report_rate(state, "edges/s", b.num_edges());
}

void BM_Attention(benchmark::State& state) { run(state, false); }
void BM_AttentionGeneric(benchmark::State& state) { run(state, true); }

BENCHMARK(BM_Attention)->Apply(bench::per_thread_count);
BENCHMARK(BM_AttentionGeneric)->Apply(bench::per_thread_count);

}  // namespace
}  // namespace directgnn
