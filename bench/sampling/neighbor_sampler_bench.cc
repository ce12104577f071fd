// Sampled edges per second of the CPU sampler, GraphSAGE-style fan-out 15,10,5 on a
// 100k-node, ~2M-edge planted-partition graph, per thread count.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>

#include "graph/planted_partition.h"
#include "sampling/neighbor_sampler.h"

namespace directgnn {
namespace {

const Dataset& graph_100k() {
  static const Dataset ds = [] {
    PlantedPartitionOptions o;
    o.num_nodes = 100000;
    o.avg_degree = 20;
    o.feat_dim = 1;
    return make_planted_partition(o);
  }();
  return ds;
}

void BM_SampleFanout15_10_5(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const Dataset& ds = graph_100k();
  at::set_num_threads(threads);
  const NeighborSampler sampler(ds.graph, {15, 10, 5});
  const at::Tensor perm = at::randperm(ds.num_nodes(), at::kLong);
  int64_t edges = 0, step = 0;
  for (auto _ : state) {
    const at::Tensor seeds = perm.narrow(0, (step * 1024) % (ds.num_nodes() - 1024), 1024);
    const MiniBatch batch = sampler.sample(seeds, step++);
    for (const Block& b : batch.blocks) edges += b.num_edges();
    benchmark::DoNotOptimize(batch.input_nodes.data_ptr());
  }
  state.counters["edges/s"] =
      benchmark::Counter(static_cast<double>(edges), benchmark::Counter::kIsRate);
  state.counters["threads"] = threads;
}
BENCHMARK(BM_SampleFanout15_10_5)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace directgnn
