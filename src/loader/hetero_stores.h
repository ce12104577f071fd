// The feature tables of a heterogeneous graph: one FeatureStore per featured node type, each
// in the placement LoaderSettings::type_features gives it (host, pinned, device, or disk with
// its share of one RAM row cache), gathered by the type's method. HeteroLoader and
// HeteroLinkLoader both gather through it; the run loop reads each disk table's counters.
//
// One cache for every disk-backed type (fill_hetero_feature_cache): rows of all of them are
// ranked together by the disk bytes a cached row saves per byte of cache, which is its count
// (pre-sampling: the minibatches it is an input of; degree: how often it is a neighbour over
// every relation it starts), ties by degree, then type order, then id.
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dist/feature_exchange.h"
#include "feature/feature_store.h"
#include "graph/hetero_graph.h"
#include "loader/feature_cache.h"
#include "loader/options.h"
#include "sampling/hetero_sampler.h"

namespace directgnn {

class HeteroStores {
 public:
  // `dataset` must outlive the stores; `settings` come from resolve_hetero_loader.
  HeteroStores(const HeteroDataset& dataset, const LoaderSettings& settings);

  // Per type, the rows of `input_nodes[t]` (int64, CPU) on the settings' device (undefined for a
  // featureless type). On a GPU, queued on the current stream.
  std::vector<at::Tensor> gather(const std::vector<at::Tensor>& input_nodes) const;

  // Tables sharded over ranks: type t's rows come from `exchanges[t]` (a collective per gather,
  // rows on the exchange's device, then to the settings' device) where it is set, from its
  // store otherwise. One entry per type.
  void use_exchanges(std::vector<std::shared_ptr<FeatureExchange>> exchanges);
  const FeatureExchange* exchange(size_t t) const {
    return t < exchanges_.size() ? exchanges_[t].get() : nullptr;
  }

  size_t size() const { return stores_.size(); }
  const LoaderSettings& settings() const { return settings_; }
  // How type t's rows are gathered onto a GPU: the settings' options with its type's method.
  GatherOptions gather_options(size_t t) const {
    GatherOptions g = settings_.gather;
    g.method = settings_.type_gather[t];
    return g;
  }
  // Type `t`'s store, or nullptr for a featureless type.
  const FeatureStore* store(size_t t) const { return stores_[t].get(); }
  FeatureStore* mutable_store(size_t t) { return stores_[t].get(); }
  const std::string& type_name(size_t t) const { return dataset_.node_types[t].name; }
  bool has_disk() const;
  // "paper disk (io_uring, ...), cpu-copy; author host" with what auto chose and why.
  std::string description() const;

 private:
  const HeteroDataset& dataset_;
  LoaderSettings settings_;
  std::vector<std::unique_ptr<FeatureStore>> stores_;
  std::vector<std::shared_ptr<FeatureExchange>> exchanges_;  // empty: none
};

// One exchange per featured type of a partitioned dataset (null for a featureless type),
// serving rank `rank`'s rows of each from its store in `stores` (the type's whole table, or its
// part's rows when it holds only those); `group_for(type name)` gives each a group of its own.
// What a sharded run and Python's sharded HeteroLoader share.
std::vector<std::shared_ptr<FeatureExchange>> hetero_part_exchanges(
    const HeteroDataset& ds, int rank, const HeteroStores& stores,
    const std::function<std::unique_ptr<ProcessGroup>(const std::string& type)>& group_for);

// Moves every relation's block tensors to `device` (nothing on the CPU).
void hetero_blocks_to(std::vector<HeteroBlock>& blocks, const c10::Device& device);
// The blocks' tensors and the defined inputs: what a GPU batch's consumer must hold on to.
std::vector<at::Tensor> hetero_batch_tensors(const std::vector<HeteroBlock>& blocks,
                                             const std::vector<at::Tensor>& x);

// Pre-sampling for the shared cache: `steps` minibatches, `inputs_of(step)` giving one's input
// nodes per type (int64, CPU).
struct HeteroPresample {
  int64_t steps = 0;
  std::function<std::vector<at::Tensor>(int64_t step)> inputs_of;
};

// Pre-sampling over `rows` (seeds, or positive edges [E, 2]) in batches of `batch_size` along
// their first dimension, `steps` of them: `inputs(part, step)` gives one batch's input nodes.
HeteroPresample presample_batches(
    at::Tensor rows, int64_t batch_size, int64_t steps,
    std::function<std::vector<at::Tensor>(const at::Tensor& part, int64_t step)> inputs);

// Ranks the disk-backed types' rows together and fills their caches from one budget (showing
// progress when `show_progress`); returns the header's line, e.g. "Feature cache: 2.00 GiB
// shared by paper (1.95 GiB, 13.1% of its rows), field (51.20 MiB, 100.0% of its rows), ranked by
// pre-sampling 40 minibatches, ready in 3.2 s".
std::string fill_hetero_feature_cache(HeteroStores& stores, const HeteroDataset& graph,
                                      const HeteroPresample& presample,
                                      const disk::CacheOptions& options, bool show_progress);

// In-degree of every node of type `t` over all relations it starts (how often it is a
// neighbour), int64 [count].
at::Tensor hetero_in_degrees(const HeteroDataset& graph, int t);

}  // namespace directgnn
