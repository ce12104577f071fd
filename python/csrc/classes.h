// The custom classes behind the Python package (torch.classes.directgnn.*): a feature store,
// a neighbour sampler and the minibatch loader, each owning what the library object reads.
#pragma once

#include <ATen/Tensor.h>
#include <c10/core/Device.h>
#include <torch/custom_class.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "feature/feature_store.h"
#include "graph/csr_graph.h"
#include "io/dataset.h"
#include "ops.h"
#include "sampling/device_sampler.h"
#include "sampling/neighbor_sampler.h"
#include "train/loader.h"

namespace directgnn::ops {

// "cpu", "cuda" or "cuda:N"; `where` names the caller in the error.
c10::Device device_arg(const std::string& text, const char* where);

// FeatureStore(table, placement="auto", device=0): placement auto is pinned where a GPU is
// visible, host elsewhere (device for a CUDA table).
class FeatureStoreHolder : public torch::CustomClassHolder {
 public:
  FeatureStoreHolder(at::Tensor table, const std::string& placement, int64_t device);
  // Rows `ids` on ids' device.
  at::Tensor gather(const at::Tensor& ids, const std::string& method, bool sort_ids,
                    int64_t max_threads) const;
  at::Tensor table() const { return store_.table(); }
  std::string placement() const { return placement_name(store_.placement()); }

 private:
  FeatureStore store_;
};

// NeighborSampler(indptr, indices, fanouts, device, graph, mode): the CPU sampler,
// or the GPU sampler on a CUDA device reading the graph pinned in place or copied.
class SamplerHolder : public torch::CustomClassHolder {
 public:
  SamplerHolder(at::Tensor indptr, at::Tensor indices, std::vector<int64_t> fanouts,
                const std::string& device, const std::string& graph, const std::string& mode);
  SampleResult sample(const at::Tensor& seeds, int64_t seed) const;

 private:
  CsrGraph graph_;
  c10::Device device_;
  std::unique_ptr<NeighborSampler> sampler_;
  std::unique_ptr<DeviceSampler> device_sampler_;
};

// One prepared minibatch: seeds, x, y, then the sample as SampleResult has it.
using LoaderBatch = std::tuple<at::Tensor, at::Tensor, at::Tensor, SampleResult>;

// Loader over a graph, features and labels: MinibatchLoader (train/loader.h) with its
// choices given as strings and resolved like the command's.
class LoaderHolder : public torch::CustomClassHolder {
 public:
  LoaderHolder(at::Tensor indptr, at::Tensor indices, at::Tensor features, at::Tensor labels,
               std::vector<int64_t> fanouts, int64_t batch_size, const std::string& device,
               const std::string& features_placement, const std::string& gather,
               const std::string& sampler, const std::string& graph, const std::string& mode,
               int64_t prefetch, int64_t workers);
  ~LoaderHolder() override;
  // Starts a pass over `seeds` in this order (the previous pass, if any, is stopped).
  void start(const at::Tensor& seeds, int64_t seed);
  bool has_next() const;
  LoaderBatch next();
  int64_t steps(int64_t num_seeds) const { return loader_->steps(num_seeds); }
  std::string mode() const { return loader_->mode(); }
  std::string device() const { return loader_->options().device.str(); }
  std::string note() const { return note_; }

 private:
  Dataset dataset_;
  std::unique_ptr<MinibatchLoader> loader_;
  mutable std::mutex mutex_;  // start, has_next and next may come from several threads
  std::optional<MinibatchLoader::Epoch> epoch_;
  std::string note_;
};

}  // namespace directgnn::ops
