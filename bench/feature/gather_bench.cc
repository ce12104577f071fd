// Useful bytes per second of the CPU feature gather (the conventional path's first pass),
// random ids into a 1 GiB table (bigger than any cache), row widths 64 B to 2 KiB.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>

#include "feature/feature_store.h"

namespace directgnn {
namespace {

void BM_CpuGather(benchmark::State& state) {
  const int64_t row_bytes = state.range(0);
  const int threads = static_cast<int>(state.range(1));
  at::set_num_threads(threads);
  const int64_t rows = (int64_t{1} << 30) / row_bytes;
  const at::Tensor table = at::ones({rows, row_bytes / 4}, at::kFloat);
  const FeatureStore store(table);
  const int64_t count = 100000;
  at::Tensor out = at::empty({count, row_bytes / 4}, at::kFloat);
  int64_t bytes = 0, step = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const at::Tensor ids = at::randint(0, rows, {count}, at::kLong);
    state.ResumeTiming();
    store.gather_into(ids, out);
    bytes += count * row_bytes;
    ++step;
  }
  state.counters["GB/s"] =
      benchmark::Counter(static_cast<double>(bytes) / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_CpuGather)
    ->ArgsProduct({{64, 256, 512, 1024, 2048}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// One small gather as the torch operator's C++ side runs it (a store over the table as it
// is, then the gather): the baseline bench/python/overhead.py compares the Python call with.
void BM_GatherCall(benchmark::State& state) {
  at::set_num_threads(1);
  const at::Tensor table = at::ones({100000, 128}, at::kFloat);
  const at::Tensor ids = at::randint(0, 100000, {state.range(0)}, at::kLong);
  for (auto _ : state) {
    const FeatureStore store = FeatureStore::as_is(table, 0, false);
    benchmark::DoNotOptimize(store.gather(ids, c10::Device(c10::kCPU)));
  }
}
BENCHMARK(BM_GatherCall)->Arg(1)->Arg(64)->Arg(1024)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace directgnn
