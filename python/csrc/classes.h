// The custom classes behind the Python package (torch.classes.directgnn.*): a feature store,
// a neighbour sampler and the minibatch loader, each owning what the library object reads.
#pragma once

#include <ATen/Tensor.h>
#include <c10/core/Device.h>
#include <torch/custom_class.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <tuple>
#include <vector>

#include "dist/feature_exchange.h"
#include "feature/feature_store.h"
#include "graph/csr_graph.h"
#include "io/dataset.h"
#include "loader/loader.h"
#include "ops.h"
#include "passes.h"
#include "sampling/sampler.h"
#include "train/run_options.h"

namespace directgnn::ops {

// FeatureStore(table, placement, device, path, disk_io, disk_direct): placement auto is pinned
// where a GPU is visible, host elsewhere (device for a CUDA table); disk reads the rows of the
// .npy `path` (whose array `table` maps) as gathers ask, by `disk_io` (auto, io_uring, pread),
// with O_DIRECT when `disk_direct`.
class FeatureStoreHolder : public torch::CustomClassHolder {
 public:
  FeatureStoreHolder(at::Tensor table, const std::string& placement, int64_t device,
                     const std::string& path, const std::string& disk_io, bool disk_direct);
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
                const std::string& device, const std::string& graph, const std::string& mode,
                const std::optional<at::Tensor>& weights, bool edge_ids);
  SampleResult sample(const at::Tensor& seeds, int64_t seed) const;
  // The same draw as PyG's fields (mode "pyg" only): one call where PyG's adapter made five.
  PygResult sample_pyg(const at::Tensor& seeds, int64_t seed) const;

 private:
  CsrGraph graph_;
  bool pyg_mode_ = false;
  std::unique_ptr<Sampler> sampler_;
};

// One prepared minibatch: seeds, x, y, then the sample as SampleResult has it.
using LoaderBatch = std::tuple<at::Tensor, at::Tensor, at::Tensor, SampleResult>;

// The numeric options of Python's Loader (prefetch -1: auto).
struct LoaderNumbers {
  std::vector<int64_t> fanouts;
  int64_t batch_size = 1024, prefetch = -1, workers = 1;
  bool disk_direct = false;
  double feature_cache_gib = 0;
};
// Python's Loader arguments as the library's LoaderOptions: `choices` holds the named choices as
// text (device, features, gather, sampler, graph, mode, disk_io, feature_cache_rank,
// feature_cache_policy, lookahead_batches; for a heterogeneous `kind`, features_per_type too), each
// parsed by the library's own parser, as the CLI's flags are.
LoaderOptions loader_options_arg(const c10::Dict<std::string, std::string>& choices,
                                 const LoaderNumbers& numbers, RunKind kind = RunKind::kNode);

// Every rank of a sharded loader must take as many minibatches per pass, or the exchanges
// would not pair up: throws, naming `who`, unless `steps` is the same on every rank of `group`
// (a collective).
void check_equal_steps(ProcessGroup& group, int64_t steps, const char* who);
// An exchange's counts as Python's exchange_stats() gives them.
c10::Dict<std::string, double> counts_dict(const ExchangeCounts& counts);
// A tag for the groups of the next sharded loader this process makes ("loader-3").
std::string loader_group_tag(const std::string& kind);
// A partition book given from Python (`offsets`, empty: none; `feature_part` >= 0: `features`
// holds that part's rows only) set on `ds`, whose graph is set; the features' rows checked.
void set_partition_arg(Dataset& ds, const std::vector<int64_t>& offsets, int64_t feature_part,
                       const at::Tensor& features);
// Where a sharded Python loader's ids and rows cross (its `exchange_device`, resolved in Python
// against the script's group): "cpu" (a Gloo group, CPU tensors), "gpu" (a Gloo group carrying
// the loader's GPU tensors: ranks sharing a GPU) or "nccl" (an NCCL group on the loader's GPU).
struct ExchangeWire {
  bool gpu = false;   // on the loader's GPU
  int nccl_gpu = -1;  // >= 0: an NCCL group on this GPU
};
ExchangeWire parse_exchange_wire(const std::string& wire, const LoaderSettings& settings,
                                 const char* who);
// The group of an exchange over `group`'s store under `tag`, on the wire's backend.
std::unique_ptr<ProcessGroup> wire_group(const c10::intrusive_ptr<c10d::ProcessGroup>& group,
                                         const std::string& tag, std::chrono::seconds timeout,
                                         const ExchangeWire& wire);

// The exchange of a sharded Python loader (`who`) over `ds`, serving this rank's rows from
// `store`, on a group made over `group`'s store (on the wire's GPU, each owner gathering by
// `settings`' method, when it is one): the parts checked against the group and `steps`, this
// rank's minibatches per pass, against every rank's (collectives).
std::shared_ptr<FeatureExchange> python_exchange(
    const Dataset& ds, const FeatureStore& store,
    const c10::intrusive_ptr<c10d::ProcessGroup>& group, int64_t timeout_s, int64_t steps,
    const char* who, const ExchangeWire& wire, const LoaderSettings& settings);

// Loader over a graph, features and labels: MinibatchLoader (loader/loader.h) with its
// options resolved by resolve_loader, as the command's are. `features_path` is the
// features' .npy of a dataset directory (features="disk" reads rows from it), or empty.
class LoaderHolder : public torch::CustomClassHolder {
 public:
  // `weights`: the graph's edge weights, for choices weighted=true.
  // A table sharded over the ranks of a PyTorch script: `offsets` (the partition book's P + 1
  // row offsets; empty: not sharded) and `feature_part` (this rank's part when `features`
  // holds its rows only, -1 when it holds the whole table); shard() must follow.
  LoaderHolder(at::Tensor indptr, at::Tensor indices, at::Tensor features, at::Tensor labels,
               std::optional<at::Tensor> weights, std::string features_path,
               c10::Dict<std::string, std::string> choices, std::vector<int64_t> fanouts,
               int64_t batch_size, int64_t prefetch, int64_t workers, bool disk_direct,
               double feature_cache_gib, std::vector<int64_t> offsets, int64_t feature_part);
  // A sharded loader's exchange, on a Gloo group over `group`'s store (the script's default
  // group): this rank serves its rows and fetches the others'. A collective, which also
  // checks that every rank takes `steps` minibatches per pass.
  void shard(const c10::intrusive_ptr<c10d::ProcessGroup>& group, int64_t timeout_s, int64_t steps,
             const std::string& wire);
  // What the exchanges moved since the last call (gathers, rows, remote_rows, bytes_sent,
  // bytes_received, seconds), and clears the counts; empty when not sharded.
  c10::Dict<std::string, double> exchange_counts();
  ~LoaderHolder() override;
  // features="disk" with a feature cache: ranks the rows (one pass of the sampler over
  // `seeds` for presample) and fills the cache; the line saying what it holds, or "" without a
  // cache.
  std::string fill_cache(const at::Tensor& seeds, int64_t seed, bool show_progress);
  // Starts a pass over `seeds` in this order and returns its id. Passes are independent (each
  // has its own workers); each is iterated by one thread at a time, and ended by finish.
  int64_t start(const at::Tensor& seeds, int64_t seed);
  bool has_next(int64_t pass) const { return passes_.has_next(pass); }
  LoaderBatch next(int64_t pass);
  // Stops pass `pass` (its workers are joined); an ended or unknown pass is ignored.
  void finish(int64_t pass) { passes_.finish(pass); }
  int64_t steps(int64_t num_seeds) const { return loader_->steps(num_seeds); }
  std::string mode() const { return loader_->mode(); }
  std::string device() const { return loader_->settings().device.str(); }
  std::string note() const { return note_; }

 private:
  Dataset dataset_;
  std::unique_ptr<MinibatchLoader> loader_;
  std::shared_ptr<FeatureExchange> exchange_;
  int shard_rank_ = -1;  // this rank, once sharded
  Passes<MinibatchLoader::Epoch> passes_;
  std::string note_;
};

}  // namespace directgnn::ops
