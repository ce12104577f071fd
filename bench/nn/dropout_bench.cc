// Elements per second of dropout's mask (nn/dropout.h, the CPU twin) and the scaling multiply,
// on a minibatch's hidden activations (100k rows of 256 floats), per thread count.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>

#include "nn/dropout.h"

namespace directgnn {
namespace {

void BM_Dropout(benchmark::State& state) {
  at::set_num_threads(static_cast<int>(state.range(0)));
  const at::Tensor x = at::randn({100000, 256});
  for (auto _ : state) benchmark::DoNotOptimize(directgnn::dropout(x, 0.5, true).data_ptr());
  state.counters["elements/s"] = benchmark::Counter(
      static_cast<double>(x.numel() * state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Dropout)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace directgnn
