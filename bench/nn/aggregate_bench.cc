// Edges per second of the mean aggregation (nn/aggregate.h) over a sampled block, forward and
// backward, and forward alone, 128-wide float32 rows, per thread count: the CPU twin, and the
// device-generic twin on the same CPU tensors (the code a GPU runs).
#include <ATen/ATen.h>

#include "nn/aggregate.h"
#include "nn_bench_util.h"

namespace directgnn {
namespace {

void run(benchmark::State& state, bool generic) {
  bench::use_threads(state);
  const Block& b = bench::outer_block_100k();
  at::Tensor x = at::randn({b.num_src, 128}).set_requires_grad(true);
  const at::Tensor grad = at::randn({b.num_dst, 128});
  for (auto _ : state) {
    const at::Tensor y = generic ? csr_aggregate_generic(b.indptr, b.indices, at::Tensor(), x)
                                 : csr_aggregate(b.indptr, b.indices, at::Tensor(), x);
    y.backward(grad);
    benchmark::DoNotOptimize(x.grad().data_ptr());
    x.mutable_grad().reset();
  }
  bench::report_rate(state, "edges/s", b.num_edges());
}

// The forward pass alone (inference, and the part whose rows are read at random).
void BM_CsrAggregateForward(benchmark::State& state) {
  bench::use_threads(state);
  const Block& b = bench::outer_block_100k();
  const at::Tensor x = at::randn({b.num_src, 128});
  for (auto _ : state) {
    const at::Tensor y = csr_aggregate(b.indptr, b.indices, at::Tensor(), x);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  bench::report_rate(state, "edges/s", b.num_edges());
}

void BM_CsrAggregate(benchmark::State& state) { run(state, false); }
void BM_CsrAggregateGeneric(benchmark::State& state) { run(state, true); }

BENCHMARK(BM_CsrAggregateForward)->Apply(bench::per_thread_count);
BENCHMARK(BM_CsrAggregate)->Apply(bench::per_thread_count);
BENCHMARK(BM_CsrAggregateGeneric)->Apply(bench::per_thread_count);

}  // namespace
}  // namespace directgnn
