// Link prediction's data path on a heterogeneous graph, the twin of HeteroLoader
// (loader/hetero_loader.h): positive edges of the target relation -> HeteroLinkSampler
// (negatives, exclusion, typed blocks from both endpoint types) -> one gather per featured node
// type -> the batch, prepared ahead of the training step by the worker pipeline
// (loader/pipeline.h) when `prefetch` asks. Each type's rows come from its store in its
// placement (loader/hetero_stores.h); on a GPU the blocks and rows are delivered on the device,
// made on each worker's side stream (the pairs and labels stay on the CPU).
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

#include "gpu/runtime.h"
#include "loader/hetero_loader.h"
#include "loader/hetero_stores.h"
#include "loader/options.h"
#include "sampling/hetero_link_sampler.h"

namespace directgnn {

template <typename T>
class Pipeline;

struct HeteroLinkMinibatch {
  HeteroLinkBatch batch;
  // Per node type: input rows on the device (undefined for a featureless type).
  std::vector<at::Tensor> x;
  double sample_s = 0, gather_s = 0;
  gpu::Ticket ticket;  // the side stream's work (GPU only)
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
    bool gpu_ = false;
  };
  Epoch epoch(at::Tensor positives, std::function<uint64_t(int64_t)> sample_seed,
              int64_t first_step = 0, int64_t end_step = -1) const;

  int64_t steps(int64_t num_positives) const;
  // Prepares the batch of `positives` now, on the calling thread.
  HeteroLinkMinibatch prepare(const at::Tensor& positives, uint64_t sample_seed) const;
  const HeteroLinkSampler& sampler() const { return sampler_; }
  const LoaderSettings& settings() const { return settings_; }
  const HeteroStores& stores() const { return stores_; }
  // The tables, to fill the disk-backed ones' cache. Not while an epoch runs.
  HeteroStores& mutable_stores() { return stores_; }

 private:
  void fill(HeteroLinkMinibatch& b, const at::Tensor& positives, uint64_t sample_seed) const;

  HeteroLinkSampler sampler_;
  LoaderSettings settings_;
  HeteroStores stores_;
};

}  // namespace directgnn
