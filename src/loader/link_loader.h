// Link prediction's data path as one object, the twin of MinibatchLoader (loader/loader.h):
// positive seed edges -> link sampler (negatives, exclusion, k-hop blocks; on the CPU, or its
// GPU twin with the gpu sampler) -> feature gather from the loader's store (host, pinned,
// device or disk) -> the batch, prepared ahead of the training step by the same worker
// pipeline (loader/pipeline.h) and, on a GPU, on a side stream with the rows gathered by the
// settings' method; or, for a table sharded over ranks, fetched from their owners.
//
//   LinkLoader loader(dataset, message_passing_graph, settings, link_options);
//   LinkLoader::Epoch epoch = loader.epoch(shuffled_positives, seed_of_step);
//   while (!epoch.done()) { LinkMinibatch b = epoch.next(); ... }
#pragma once

#include <ATen/Tensor.h>

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
#include "sampling/link_sampler.h"

namespace directgnn {

template <typename T>
class Pipeline;

// One prepared link batch. On a GPU, the blocks, the pair indices, the labels and x are on the
// loader's device; `batch.positives` and `batch.sample.seeds`/`input_nodes` stay on the CPU.
struct LinkMinibatch {
  LinkBatch batch;
  at::Tensor x;  // [input nodes, F] input features
  double sample_s = 0, gather_s = 0;
  gpu::Ticket ticket;

  std::vector<at::Tensor> tensors() const;
};

class LinkLoader {
 public:
  // `dataset` (its feature table) and `graph` (the message-passing graph) must outlive the
  // loader. `settings` come from resolve_loader (loader/options.h).
  LinkLoader(const Dataset& dataset, const CsrGraph& graph, LoaderSettings settings,
             LinkSamplerOptions link);
  ~LinkLoader();
  LinkLoader(const LinkLoader&) = delete;
  LinkLoader& operator=(const LinkLoader&) = delete;

  // One pass over `positives` ([E, 2], in this order) in batches of batch_size, from batch
  // `first_step` on; batch i draws with the random seed `sample_seed(i)`.
  class Epoch {
   public:
    Epoch(Epoch&&) noexcept;
    Epoch& operator=(Epoch&&) noexcept;
    ~Epoch();
    bool done() const;
    // The next batch, in order; waits for it (on a GPU, the caller's stream waits instead).
    LinkMinibatch next();

   private:
    friend class LinkLoader;
    Epoch(const LinkLoader& loader, at::Tensor positives,
          std::function<uint64_t(int64_t)> sample_seed, int64_t first_step);
    std::unique_ptr<Pipeline<LinkMinibatch>> pipeline_;
    bool gpu_ = false;
  };
  Epoch epoch(at::Tensor positives, std::function<uint64_t(int64_t)> sample_seed,
              int64_t first_step = 0) const;

  int64_t steps(int64_t num_positives) const;
  // Prepares batch `positives` now, on the calling thread.
  LinkMinibatch prepare(const at::Tensor& positives, uint64_t sample_seed) const;

  const LoaderSettings& settings() const { return settings_; }
  const FeatureStore& store() const { return store_; }
  // The table, to fill a disk table's cache (loader/feature_cache.h). Not while an epoch runs.
  FeatureStore& mutable_store() { return store_; }
  const LinkSampler& sampler() const { return sampler_; }
  // features/gather/sampler as run, e.g. "disk:pread/cpu/cpu" (MinibatchLoader::mode's form).
  std::string mode() const;
  // A feature table sharded over ranks, as MinibatchLoader::use_exchange: every batch's rows
  // come from `exchange`, one collective per batch. Set before the first epoch.
  void use_exchange(std::shared_ptr<FeatureExchange> exchange);

 private:
  LoaderSettings settings_;
  LinkSampler sampler_;
  FeatureStore store_;
  int64_t num_rows_ = 0;  // the dataset's nodes
  std::shared_ptr<FeatureExchange> exchange_;
};

}  // namespace directgnn
