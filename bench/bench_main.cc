#include <benchmark/benchmark.h>

#include "core/threads.h"

int main(int argc, char** argv) {
  directgnn::configure_allocator();
  directgnn::configure_threads(0);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
