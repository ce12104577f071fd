// Sampled edges per second of the CPU sampler, GraphSAGE-style fan-out 15,10,5 on a
// 100k-node, ~2M-edge planted-partition graph, per thread count (first argument) and
// SampleMode (second: 0 draws every layer anew, as DGL; 1 draws each node once, as PyG).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>

#include "graph/planted_partition.h"
#include "sampling/sampler.h"

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
  const auto mode = state.range(1) == 0 ? SampleMode::kFreshPerLayer : SampleMode::kOncePerNode;
  const Sampler sampler(ds.graph, {{15, 10, 5}, mode});
  const at::Tensor perm = at::randperm(ds.num_nodes(), at::kLong);
  int64_t edges = 0, step = 0;
  for (auto _ : state) {
    const at::Tensor seeds = perm.narrow(0, (step * 1024) % (ds.num_nodes() - 1024), 1024);
    const MiniBatch batch = sampler.sample(seeds, step++);
    for (const int64_t drawn : batch.hop_edges) edges += drawn;
    benchmark::DoNotOptimize(batch.input_nodes.data_ptr());
  }
  state.counters["edges/s"] =
      benchmark::Counter(static_cast<double>(edges), benchmark::Counter::kIsRate);
  state.counters["threads"] = threads;
}
BENCHMARK(BM_SampleFanout15_10_5)
    ->ArgsProduct({{1, 2}, {0, 1}})
    ->ArgNames({"threads", "pyg"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace directgnn
