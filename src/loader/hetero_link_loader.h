// Link prediction's data path on a heterogeneous graph, the twin of HeteroLoader
// (loader/hetero_loader.h): positive edges of the target relation -> HeteroLinkSampler
// (negatives, exclusion, typed blocks from both endpoint types) -> one gather per featured node
// type -> the batch, prepared ahead of the training step by the worker pipeline
// (loader/pipeline.h) when `prefetch` asks. Batches are delivered on the CPU.
//
//   HeteroLinkLoader loader(message_passing_graph, target, sampler, link, options);
//   HeteroLinkLoader::Epoch epoch = loader.epoch(shuffled_positives, seed_of_step, 0, steps);
//   while (!epoch.done()) { HeteroLinkMinibatch b = epoch.next(); ... }
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "feature/feature_store.h"
#include "loader/hetero_loader.h"
#include "loader/options.h"
#include "sampling/hetero_link_sampler.h"

namespace directgnn {

template <typename T>
class Pipeline;

struct HeteroLinkMinibatch {
  HeteroLinkBatch batch;
  std::vector<at::Tensor> x;  // per node type: input rows (undefined for a featureless type)
  double sample_s = 0, gather_s = 0;
};

class HeteroLinkLoader {
 public:
  // `graph` (the message-passing graph) must outlive the loader.
  HeteroLinkLoader(const HeteroDataset& graph, HeteroLinkTarget target,
                   HeteroSamplerOptions sampler, LinkSamplerOptions link,
                   const LoaderSettings& settings);
  ~HeteroLinkLoader();
  HeteroLinkLoader(const HeteroLinkLoader&) = delete;
  HeteroLinkLoader& operator=(const HeteroLinkLoader&) = delete;

  // Batches [first_step, end_step) of `positives` ([E, 2], in this order; end_step -1: all);
  // batch i draws with the random seed `sample_seed(i)`.
  class Epoch {
   public:
    Epoch(Epoch&&) noexcept;
    Epoch& operator=(Epoch&&) noexcept;
    ~Epoch();
    bool done() const;
    HeteroLinkMinibatch next();

   private:
    friend class HeteroLinkLoader;
    Epoch(const HeteroLinkLoader& loader, at::Tensor positives,
          std::function<uint64_t(int64_t)> sample_seed, int64_t first_step, int64_t end_step);
    std::unique_ptr<Pipeline<HeteroLinkMinibatch>> pipeline_;
  };
  Epoch epoch(at::Tensor positives, std::function<uint64_t(int64_t)> sample_seed,
              int64_t first_step = 0, int64_t end_step = -1) const;

  int64_t steps(int64_t num_positives) const;
  // Prepares the batch of `positives` now, on the calling thread.
  HeteroLinkMinibatch prepare(const at::Tensor& positives, uint64_t sample_seed) const;
  const HeteroLinkSampler& sampler() const { return sampler_; }
  const LoaderSettings& settings() const { return settings_; }

 private:
  HeteroLinkSampler sampler_;
  LoaderSettings settings_;
  std::vector<std::unique_ptr<FeatureStore>> stores_;  // per type; null when featureless
};

}  // namespace directgnn
