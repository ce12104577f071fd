// What the nn benchmarks share: the block they aggregate over (the outermost block of a
// minibatch of 1024 seeds, fan-out 15,10,5, on the 100k-node planted-partition graph of the CPU
// benchmarks), their registration (1 and 2 threads, milliseconds of wall time) and their rate.
#pragma once

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>

#include "graph/planted_partition.h"
#include "sampling/sampler.h"

namespace directgnn::bench {

inline const Block& outer_block_100k() {
  static const Block block = [] {
    PlantedPartitionOptions o;
    o.num_nodes = 100000;
    o.avg_degree = 20;
    o.feat_dim = 1;
    static const Dataset ds = make_planted_partition(o);
    const Sampler sampler(ds.graph, {{15, 10, 5}});
    return sampler.sample(at::randperm(ds.num_nodes(), at::kLong).narrow(0, 0, 1024), 7).blocks[0];
  }();
  return block;
}

// Runs a benchmark at 1 and 2 threads (its range(0); see use_threads), timed by the wall clock.
inline void per_thread_count(benchmark::internal::Benchmark* b) {
  b->ArgName("threads")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
}

inline void use_threads(const benchmark::State& state) {
  at::set_num_threads(static_cast<int>(state.range(0)));
}

// `per_iteration` things done in each iteration, reported per second as counter `name`.
inline void report_rate(benchmark::State& state, const char* name, int64_t per_iteration) {
  state.counters[name] = benchmark::Counter(static_cast<double>(per_iteration * state.iterations()),
                                            benchmark::Counter::kIsRate);
}

}  // namespace directgnn::bench
