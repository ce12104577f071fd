// Elements per second of dropout's mask (nn/dropout.h, the CPU twin) and the scaling multiply,
// on a minibatch's hidden activations (100k rows of 256 floats), per thread count.
#include <ATen/ATen.h>

#include "nn/dropout.h"
#include "nn_bench_util.h"

namespace directgnn {
namespace {

void BM_Dropout(benchmark::State& state) {
  bench::use_threads(state);
  const at::Tensor x = at::randn({100000, 256});
  for (auto _ : state) benchmark::DoNotOptimize(directgnn::dropout(x, 0.5, true).data_ptr());
  bench::report_rate(state, "elements/s", x.numel());
}
BENCHMARK(BM_Dropout)->Apply(bench::per_thread_count);

}  // namespace
}  // namespace directgnn
