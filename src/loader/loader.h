// The minibatch data path as one object: seeds -> neighbour sampler (CPU or GPU) -> feature
// gather -> labels, prepared ahead of the training step by worker threads (loader/pipeline.h)
// and, on a GPU, on their own side streams. The C++ trainer and the Python loader both use it.
//
//   MinibatchLoader loader(dataset, resolve_loader(options, dataset));
//   MinibatchLoader::Epoch epoch = loader.epoch(shuffled_seeds, seed_of_step);
//   while (!epoch.done()) { Minibatch b = epoch.next(); ... model(b.batch.blocks, b.x) ... }
//
// A front end resolves the user's typed choices (LoaderOptions) once into LoaderSettings
// (loader/options.h), which the loader runs.
#pragma once

#include <ATen/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dist/feature_exchange.h"
#include "feature/feature_store.h"
#include "gpu/runtime.h"
#include "io/dataset.h"
#include "loader/options.h"
#include "sampling/block.h"
#include "sampling/sampler.h"

namespace directgnn {

template <typename T>
class Pipeline;

// One prepared minibatch. On a GPU every tensor is on the loader's device, ready for the
// current stream of whoever called next().
struct Minibatch {
  at::Tensor seeds;   // int64 [B], global ids (on the CPU)
  at::Tensor labels;  // int64 [B], on the device
  at::Tensor x;       // [input nodes, F] input features, on the device
  // With LoaderSettings::sources_in_place: the feature table, x only block 0's destination
  // rows, and block 0's indices and src_degree are by global id.
  at::Tensor source_table;
  MiniBatch batch;                    // blocks and input node ids
  double sample_s = 0, gather_s = 0;  // time the worker spent (GPU: until its stream finished)
  gpu::Ticket ticket;                 // the side stream's work (GPU only)

  std::vector<at::Tensor> tensors() const;
};

class MinibatchLoader {
 public:
  // `dataset` must outlive the loader: the graph, table and labels are used in place.
  // `settings` come from resolve_loader (loader/options.h). `hops`: a partitioned structure's
  // draws (sampling/sampler.h): each hop is a collective, so batches are prepared by one worker,
  // in order, and an early stop finishes those begun, as with an exchange (use_exchange).
  MinibatchLoader(const Dataset& dataset, LoaderSettings settings,
                  std::shared_ptr<HopSource> hops = nullptr);
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
  // Only samples minibatch `seeds`, on the calling thread (and on the GPU with the GPU sampler).
  MiniBatch sample(const at::Tensor& seeds, uint64_t sample_seed) const;
  const LoaderSettings& settings() const { return settings_; }
  const FeatureStore& store() const { return store_; }
  // The table, to fill a disk table's cache (loader/feature_cache.h). Not while an epoch runs.
  FeatureStore& mutable_store() { return store_; }
  // features/gather/sampler as run, e.g. "pinned/aligned/gpu" or "host/cpu/cpu".
  std::string mode() const;
  // A feature table sharded over ranks: every batch's rows come from `exchange` (a collective
  // per batch, so batches are prepared by one worker, in order, and an early stop finishes the
  // batches already begun). The rows come on the exchange's device (the CPU, or a GPU rank's
  // own), then to the loader's; set before the first epoch.
  void use_exchange(std::shared_ptr<FeatureExchange> exchange);

 private:
  // A batch sampled, not yet gathered (a look-ahead cache plans its rows meanwhile).
  struct Sampled {
    at::Tensor seeds;
    MiniBatch batch;
    double sample_s = 0;
  };
  Sampled sample_timed(const at::Tensor& seeds, uint64_t sample_seed) const;
  // The ids whose rows a batch gathers.
  at::Tensor gathered_ids(const MiniBatch& batch) const;
  Minibatch finish(Sampled sampled, const PlannedGather& planned) const;
  Minibatch prepare_on_gpu(const at::Tensor& seeds, uint64_t sample_seed) const;

  const Dataset& dataset_;
  LoaderSettings settings_;
  Sampler sampler_;  // on the device with the GPU sampler, else on the CPU
  FeatureStore store_;
  std::shared_ptr<FeatureExchange> exchange_;
  bool collective_sampling_ = false;  // hops drawn by their owners
  at::Tensor labels_;                 // on the device
};

// The checks every loader makes of settings made by hand: batch size, prefetch depth, workers,
// and a GPU sampler only where batches go to a GPU. Throws naming the setting.
void check_batch_settings(const LoaderSettings& settings);
// Loaders that do not plan their batches ahead yet refuse a look-ahead cache, naming `what`
// they load (e.g. "link prediction").
void refuse_lookahead_cache(const LoaderSettings& settings, const std::string& what);
// The loader's feature store: `disk` reads the dataset's features.npy (throws when it was not
// loaded from a directory), the other placements use the table in place.
FeatureStore make_feature_store(const Dataset& dataset, const LoaderSettings& settings);
// Copies a CPU sampler's blocks to `device` (kOncePerNode blocks stay views of the outermost).
void blocks_to(MiniBatch& batch, c10::Device device, SampleMode mode);
// features/gather/sampler as a loader with these settings and store runs them.
std::string loader_mode(const LoaderSettings& settings, const FeatureStore& store);
// The same for a sharded table's exchange: "sharded/cpu/cpu", "sharded/exchange+copy/gpu"
// (rows exchanged on the CPU, then copied) or "sharded/exchange-gpu/gpu" (on the GPU).
std::string sharded_loader_mode(const LoaderSettings& settings, const FeatureExchange& exchange);
// Throws unless a loader with `settings` over a table of `num_rows` x `store`'s width can use
// `exchange` (one worker, no table read in place, no cache plan, the same shape).
void check_exchange(const LoaderSettings& settings, const FeatureStore& store, int64_t num_rows,
                    const FeatureExchange& exchange);
// `settings` as check_exchange wants them: one worker prepares batches in step order, the next
// batch's exchange overlapping this one's step unless the depth was given (`prefetch_given`),
// and a disk cache plans nothing ahead.
LoaderSettings sharded_settings(LoaderSettings settings, bool prefetch_given);
// The exchange that serves rank `rank`'s rows of `ds`'s partitioned table from `table` (the
// loader's store, kept alive by the caller: the whole table, or this part's rows when `ds`
// holds only its part's) and fetches the others' over `group`.
std::shared_ptr<FeatureExchange> part_exchange(const Dataset& ds, int rank,
                                               const FeatureStore& table,
                                               std::unique_ptr<ProcessGroup> group);

}  // namespace directgnn
