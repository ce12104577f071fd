// The minibatch data path as one object: seeds -> neighbour sampler (CPU or GPU) -> feature
// gather -> labels, prepared ahead of the training step by worker threads (train/pipeline.h)
// and, on a GPU, on their own side streams. The C++ trainer and the Python loader both use it.
//
//   MinibatchLoader loader(dataset, options);
//   MinibatchLoader::Epoch epoch = loader.epoch(shuffled_seeds, seed_of_step);
//   while (!epoch.done()) { Minibatch b = epoch.next(); ... model(b.batch.blocks, b.x) ... }
//
// Every option is typed and resolved (no "auto"): train/run_setup.h turns a user's choices
// into LoaderOptions.
#pragma once

#include <ATen/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "feature/feature_store.h"
#include "gpu/device.h"
#include "io/dataset.h"
#include "sampling/block.h"
#include "sampling/device_sampler.h"
#include "sampling/neighbor_sampler.h"

namespace directgnn {

template <typename T>
class Pipeline;

struct LoaderOptions {
  std::vector<int64_t> fanouts;  // per hop, seed hop first; -1 = every neighbour
  int64_t batch_size = 1024;
  // Where minibatches are delivered. On a GPU, sampling and gathering run on side streams.
  c10::Device device{c10::kCPU};
  Placement features = Placement::kHost;
  GatherOptions gather;       // method kAuto: aligned from pinned or device tables, else cpu-copy
  disk::RowFileOptions disk;  // how a `disk` table is read
  bool gpu_sampler = false;
  GraphPlacement graph = GraphPlacement::kPinned;  // what the GPU sampler reads
  SampleMode sample_mode = SampleMode::kFreshPerLayer;
  // Minibatches prepared ahead of the one being used (0: each in next(), on the caller's
  // thread), by this many worker threads, each with an OpenMP team of `worker_threads` (0:
  // the process's thread count when the epoch starts, core/threads.h).
  int prefetch = 2;
  // CPU, `host` float32 table only: Minibatch::x holds just block 0's destination rows, and
  // block 0 reads its other sources from the table in place (Minibatch::source_table, by
  // global id), so those rows are not copied first. For layers that only aggregate their
  // sources (SAGE, GCN); the sums are the same.
  bool sources_in_place = false;
  int workers = 1;
  int worker_threads = 0;
};

// One prepared minibatch. On a GPU every tensor is on the loader's device, ready for the
// current stream of whoever called next().
struct Minibatch {
  at::Tensor seeds;   // int64 [B], global ids (on the CPU)
  at::Tensor labels;  // int64 [B], on the device
  at::Tensor x;       // [input nodes, F] input features, on the device
  // With LoaderOptions::sources_in_place: the feature table, x only block 0's destination
  // rows, and block 0's indices and src_degree are by global id.
  at::Tensor source_table;
  MiniBatch batch;                    // blocks and input node ids
  double sample_s = 0, gather_s = 0;  // time the worker spent (GPU: until its stream finished)
  gpu::Ticket ticket;                 // the side stream's work (GPU only)

  std::vector<at::Tensor> tensors() const;
};

// Whether a loader with `options` may read block 0's sources in place from `dataset`'s table:
// on the CPU, from a `host` table that is a contiguous float32 matrix.
bool can_read_sources_in_place(const Dataset& dataset, const LoaderOptions& options);

class MinibatchLoader {
 public:
  // `dataset` must outlive the loader: the graph, table and labels are used in place.
  MinibatchLoader(const Dataset& dataset, LoaderOptions options);
  ~MinibatchLoader();
  MinibatchLoader(const MinibatchLoader&) = delete;
  MinibatchLoader& operator=(const MinibatchLoader&) = delete;

  // One pass over `seeds` (int64, in this order) in minibatches of batch_size, from minibatch
  // `first_step` on; minibatch i samples with the random seed `sample_seed(i)`.
  class Epoch {
   public:
    Epoch(Epoch&&) noexcept;
    Epoch& operator=(Epoch&&) noexcept;
    ~Epoch();
    bool done() const;
    // The next minibatch, in order; waits for it. On a GPU, the caller's current stream is
    // made to wait for the side stream that made it (no host synchronisation).
    Minibatch next();

   private:
    friend class MinibatchLoader;
    Epoch(const MinibatchLoader& loader, at::Tensor seeds,
          std::function<uint64_t(int64_t)> sample_seed, int64_t first_step);
    std::unique_ptr<Pipeline<Minibatch>> pipeline_;
    bool gpu_ = false;
  };
  Epoch epoch(at::Tensor seeds, std::function<uint64_t(int64_t)> sample_seed,
              int64_t first_step = 0) const;

  // Minibatches in one pass over `num_seeds` seeds.
  int64_t steps(int64_t num_seeds) const;
  // Prepares minibatch `seeds` now, on the calling thread.
  Minibatch prepare(const at::Tensor& seeds, uint64_t sample_seed) const;
  // Only samples minibatch `seeds`, with the CPU sampler, on the calling thread.
  MiniBatch sample(const at::Tensor& seeds, uint64_t sample_seed) const;
  // A `disk` table: keeps the rows `ranked` puts first in RAM (FeatureStore::cache_hot_rows).
  // Not while an epoch runs.
  void cache_hot_rows(const at::Tensor& ranked, int64_t bytes,
                      const std::function<void(int64_t, int64_t)>& progress = {});

  const LoaderOptions& options() const { return options_; }
  const FeatureStore& store() const { return store_; }
  // features/gather/sampler as run, e.g. "pinned/aligned/gpu" or "host/cpu/cpu".
  std::string mode() const;

 private:
  Minibatch prepare_on_gpu(const at::Tensor& seeds, uint64_t sample_seed) const;

  const Dataset& dataset_;
  LoaderOptions options_;
  NeighborSampler sampler_;
  std::unique_ptr<DeviceSampler> device_sampler_;
  FeatureStore store_;
  at::Tensor labels_;  // on the device
};

}  // namespace directgnn
