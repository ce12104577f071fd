// The heterogeneous minibatch data path, the twin of MinibatchLoader (loader/loader.h) for
// typed graphs: seed nodes of the target type -> HeteroSampler (typed blocks, on the CPU; on a
// GPU with settings.gpu_sampler its twin, gpu/HeteroNeighborSampler, on the side stream) ->
// one gather per node type with features, from that type's store in its placement
// (loader/hetero_stores.h) -> labels of the seeds, prepared ahead of the training step by the
// worker pipeline (loader/pipeline.h). On a GPU the blocks, rows and labels are delivered on
// the device, made on each worker's side stream as MinibatchLoader's are.
//
//   HeteroLoader loader(dataset, sampler_options, resolve_hetero_loader(options, dataset));
//   HeteroLoader::Epoch epoch = loader.epoch(shuffled_seeds, seed_of_step);
//   while (!epoch.done()) { HeteroBatch b = epoch.next(); ... }
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "gpu/runtime.h"
#include "graph/hetero_graph.h"
#include "loader/hetero_stores.h"
#include "loader/options.h"
#include "sampling/gpu_hetero_sampler.h"
#include "sampling/hetero_sampler.h"

namespace directgnn {

template <typename T>
class Pipeline;

struct HeteroBatch {
  // Its blocks on the loader's device; seeds and input nodes on the CPU, or on the device with
  // the GPU sampler.
  HeteroMiniBatch sample;
  // Per node type: its input rows [input_nodes[t], F_t] on the device (undefined for a
  // featureless type).
  std::vector<at::Tensor> x;
  at::Tensor labels;  // int64 [B] on the device: the seeds' labels (undefined without labels)
  double sample_s = 0, gather_s = 0;
  gpu::Ticket ticket;  // the side stream's work (GPU only)
};

class HeteroLoader {
 public:
  // The dataset must outlive the loader. Seeds are of the dataset's target type. `settings`
  // come from resolve_hetero_loader (loader/options.h) for this dataset.
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
    bool gpu_ = false;
  };
  Epoch epoch(at::Tensor seeds, std::function<uint64_t(int64_t)> sample_seed,
              int64_t first_step = 0) const;

  int64_t steps(int64_t num_seeds) const;
  // Prepares the batch of `seeds` now, on the calling thread.
  HeteroBatch prepare(const at::Tensor& seeds, uint64_t sample_seed) const;
  // One pass over `seeds` (int64, in this order) in this loader's batches, sampled only, for
  // the shared cache's ranking (fill_hetero_feature_cache); batch i draws from `seed` and i.
  HeteroPresample presample(const at::Tensor& seeds, uint64_t seed) const;
  const HeteroSampler& sampler() const { return sampler_; }
  const LoaderSettings& settings() const { return settings_; }
  const HeteroStores& stores() const { return stores_; }
  // The tables, to fill the disk-backed ones' cache. Not while an epoch runs.
  HeteroStores& mutable_stores() { return stores_; }

 private:
  void fill(HeteroBatch& b, const at::Tensor& seeds, uint64_t sample_seed) const;

  const HeteroDataset& dataset_;
  HeteroSampler sampler_;  // also ranks the cache's rows (presample) on a GPU run
  std::unique_ptr<gpu::HeteroNeighborSampler> gpu_sampler_;  // settings.gpu_sampler
  LoaderSettings settings_;
  HeteroStores stores_;
  at::Tensor labels_;  // on the device
};

}  // namespace directgnn
