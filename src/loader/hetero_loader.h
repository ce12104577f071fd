// The heterogeneous minibatch data path, the twin of MinibatchLoader (loader/loader.h) for
// typed graphs: seed nodes of the target type -> HeteroSampler (typed blocks) -> one gather per
// node type with features, from that type's feature store -> labels of the seeds, prepared
// ahead of the training step by the worker pipeline (loader/pipeline.h). CPU only for now:
// batches are delivered on the CPU.
//
//   HeteroLoader loader(dataset, sampler_options, resolve_hetero_loader(loader_options));
//   HeteroLoader::Epoch epoch = loader.epoch(shuffled_seeds, seed_of_step);
//   while (!epoch.done()) { HeteroBatch b = epoch.next(); ... }
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "feature/feature_store.h"
#include "graph/hetero_graph.h"
#include "loader/options.h"
#include "sampling/hetero_sampler.h"

namespace directgnn {

template <typename T>
class Pipeline;

struct HeteroBatch {
  HeteroMiniBatch sample;
  // Per node type: its input rows [input_nodes[t], F_t] (undefined for a featureless type).
  std::vector<at::Tensor> x;
  at::Tensor labels;  // int64 [B]: the seeds' labels (undefined without labels)
  double sample_s = 0, gather_s = 0;
};

class HeteroLoader {
 public:
  // The dataset must outlive the loader. Seeds are of the dataset's target type. Of the
  // settings (resolve_hetero_loader, loader/options.h), the batch size and how batches are
  // prepared ahead (prefetch, workers, worker_threads) apply; batches are delivered on the CPU.
  HeteroLoader(const HeteroDataset& dataset, HeteroSamplerOptions sampler,
               const LoaderSettings& settings);
  ~HeteroLoader();
  HeteroLoader(const HeteroLoader&) = delete;
  HeteroLoader& operator=(const HeteroLoader&) = delete;

  // One pass over `seeds` (int64, in this order) in batches of batch_size, from batch
  // `first_step` on (a resumed epoch); batch i draws with the random seed `sample_seed(i)`.
  class Epoch {
   public:
    Epoch(Epoch&&) noexcept;
    Epoch& operator=(Epoch&&) noexcept;
    ~Epoch();
    bool done() const;
    HeteroBatch next();

   private:
    friend class HeteroLoader;
    Epoch(const HeteroLoader& loader, at::Tensor seeds,
          std::function<uint64_t(int64_t)> sample_seed, int64_t first_step);
    std::unique_ptr<Pipeline<HeteroBatch>> pipeline_;
  };
  Epoch epoch(at::Tensor seeds, std::function<uint64_t(int64_t)> sample_seed,
              int64_t first_step = 0) const;

  int64_t steps(int64_t num_seeds) const;
  // Prepares the batch of `seeds` now, on the calling thread.
  HeteroBatch prepare(const at::Tensor& seeds, uint64_t sample_seed) const;
  const HeteroSampler& sampler() const { return sampler_; }
  const LoaderSettings& settings() const { return settings_; }

 private:
  const HeteroDataset& dataset_;
  HeteroSampler sampler_;
  LoaderSettings settings_;
  std::vector<std::unique_ptr<FeatureStore>> stores_;  // per type; null when featureless
};

}  // namespace directgnn
