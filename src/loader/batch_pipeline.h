// An epoch of batches as a Pipeline (loader/pipeline.h): step i prepares rows
// [i * batch, (i + 1) * batch) of a seed tensor (seed nodes, or seed edges as [E, 2]) with the
// random seed sample_seed(i). The four loaders (nodes, links, and their heterogeneous twins)
// differ only in what `prepare` makes of a batch's rows.
#pragma once

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "core/threads.h"
#include "loader/pipeline.h"

namespace directgnn {

// How the batches are prepared ahead: `prefetch` batches in flight (0: on the caller's thread
// in next()), by `workers` threads, each with an OpenMP team of `worker_threads` (0: the
// process's thread count).
struct PipelineShape {
  int prefetch = 0;
  int workers = 1;
  int worker_threads = 0;
  bool drain = false;  // Pipeline's `drain`: stopping early finishes the items claimable
};

namespace detail {

// Rows [step * batch, (step + 1) * batch) of `rows`, the last batch short.
inline at::Tensor rows_of_step(const at::Tensor& rows, int64_t batch, int64_t step) {
  const int64_t lo = step * batch;
  return rows.narrow(0, lo, std::min(batch, rows.size(0) - lo));
}

// The pipeline of steps first_step .. end_step - 1, each worker sizing its OpenMP team first.
template <typename T, typename Produce>
std::unique_ptr<Pipeline<T>> start_pipeline(int64_t first_step, int64_t end_step,
                                            PipelineShape shape, int workers, Produce produce) {
  const int threads = shape.worker_threads > 0 ? shape.worker_threads : num_threads();
  return std::make_unique<Pipeline<T>>(
      first_step, end_step, shape.prefetch, workers, std::move(produce),
      [threads] { set_thread_team(threads); }, shape.drain);
}

}  // namespace detail

// Steps first_step .. end_step - 1 of the batches of `rows`; `prepare(rows_of_batch, seed)`
// makes a batch of type T.
template <typename T, typename Prepare>
std::unique_ptr<Pipeline<T>> batch_pipeline(at::Tensor rows, int64_t batch, int64_t first_step,
                                            int64_t end_step, PipelineShape shape,
                                            std::function<uint64_t(int64_t)> sample_seed,
                                            Prepare prepare) {
  auto produce = [rows = std::move(rows), batch, sample_seed = std::move(sample_seed),
                  prepare = std::move(prepare)](int64_t step) {
    return prepare(detail::rows_of_step(rows, batch, step), sample_seed(step));
  };
  return detail::start_pipeline<T>(first_step, end_step, shape, shape.workers, std::move(produce));
}

// The same with a look-ahead cache (FeatureStore::begin_plan): batch i is sampled, and its rows
// planned with `plan(i, sampled)`, before batch i - `window` is gathered, so the cache knows
// the next `window` batches' rows whenever it serves one. `finish(sampled, i)` gathers batch i.
// One worker, so batches are served in the order planned; sampling the same keyed streams in
// another order draws the same batches.
template <typename T, typename Sampled, typename Sample, typename Plan, typename Finish>
std::unique_ptr<Pipeline<T>> lookahead_pipeline(at::Tensor rows, int64_t batch, int64_t first_step,
                                                int64_t end_step, PipelineShape shape,
                                                std::function<uint64_t(int64_t)> sample_seed,
                                                int64_t window, Sample sample, Plan plan,
                                                Finish finish) {
  struct Ahead {
    std::mutex mutex;
    int64_t next = 0;  // the next step to sample
    std::map<int64_t, Sampled> sampled;
  };
  auto ahead = std::make_shared<Ahead>();
  ahead->next = first_step;
  auto produce = [=, rows = std::move(rows), sample_seed = std::move(sample_seed)](int64_t step) {
    Sampled mine;
    {
      std::lock_guard<std::mutex> lock(ahead->mutex);
      for (; ahead->next < end_step && ahead->next <= step + window; ++ahead->next) {
        const int64_t s = ahead->next;
        Sampled x = sample(detail::rows_of_step(rows, batch, s), sample_seed(s));
        plan(s, x);
        ahead->sampled.emplace(s, std::move(x));
      }
      auto node = ahead->sampled.extract(step);
      DGNN_CHECK(!node.empty(), "look-ahead loader: batch ", step, " was not sampled ahead");
      mine = std::move(node.mapped());
    }
    return finish(std::move(mine), step);
  };
  return detail::start_pipeline<T>(first_step, end_step, shape, /*workers=*/1, std::move(produce));
}

}  // namespace directgnn
