// torch.classes.directgnn.FeatureStore and .Loader, and the registration of every class.
#include "classes.h"

#include <ATen/ATen.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "core/random.h"
#include "directgnn/error.h"
#include "dist/part_offsets.h"
#include "dist/process_group.h"
#include "errors.h"
#include "gpu/runtime.h"
#include "loader/feature_cache.h"
#include "loader/options.h"
#include "train/run_options.h"

namespace directgnn::ops {
namespace {

// Seeds of one pass: 1-D int64 on the CPU, each a node of the graph, none twice.
at::Tensor checked_seeds(const at::Tensor& seeds_in, int64_t num_nodes) {
  DGNN_CHECK_TYPE(seeds_in.dim() == 1 &&
                      (seeds_in.scalar_type() == at::kLong || seeds_in.scalar_type() == at::kInt),
                  "directgnn.Loader: seeds must be a 1-D int64 or int32 tensor");
  const at::Tensor seeds = seeds_in.cpu().to(at::kLong).contiguous();
  if (seeds.numel() == 0) return seeds;
  const auto [lo, hi] = at::aminmax(seeds);
  const int64_t low = lo.item<int64_t>(), high = hi.item<int64_t>();
  DGNN_CHECK_INDEX(low >= 0 && high < num_nodes, "directgnn.Loader: seed node ",
                   low < 0 ? low : high, " is out of range for ", num_nodes, " nodes");
  const at::Tensor sorted = std::get<0>(seeds.sort());
  const at::Tensor twice = sorted.slice(0, 1).eq(sorted.slice(0, 0, -1)).nonzero();
  DGNN_CHECK_ARG(twice.numel() == 0, "seeds", "node ",
                 twice.numel() > 0 ? sorted[twice[0][0].item<int64_t>()].item<int64_t>() : 0,
                 " appears twice; seeds must be distinct");
  return seeds;
}

}  // namespace

namespace {

FeatureStore store_arg(const at::Tensor& table, const std::string& placement, int64_t device,
                       const std::string& path, const std::string& disk_io, bool disk_direct) {
  const Placement p =
      resolve_feature_placement(parse_feature_placement(placement), table, gpu::available());
  if (p != Placement::kDisk) return FeatureStore(table, p, static_cast<int>(device));
  DGNN_CHECK_ARG(!path.empty(), "placement",
                 "disk reads rows from the table's .npy file, but this table maps none; give a "
                 "numpy memory map of a .npy (np.load(path, mmap_mode='r'))");
  disk::RowFileOptions options;
  options.backend = disk::parse_backend(disk_io);
  options.direct = disk_direct;
  return FeatureStore::on_disk(table, path, options, static_cast<int>(device));
}

}  // namespace

FeatureStoreHolder::FeatureStoreHolder(at::Tensor table, const std::string& placement,
                                       int64_t device, const std::string& path,
                                       const std::string& disk_io, bool disk_direct)
    : store_(store_arg(table, placement, device, path, disk_io, disk_direct)) {}

at::Tensor FeatureStoreHolder::gather(const at::Tensor& ids, const std::string& method,
                                      bool sort_ids, int64_t max_threads) const {
  return store_.gather(ids, ids.device(), gather_options_arg(method, sort_ids, max_threads));
}

LoaderOptions loader_options_arg(const c10::Dict<std::string, std::string>& choices,
                                 const LoaderNumbers& numbers, RunKind kind) {
  // Python's names of the run options (train/run_options.h), set as the command line's flags
  // are; the sampling mode and edge ids are the loader's own.
  nlohmann::json values = {{"batch_size", numbers.batch_size},
                           {"sampler_workers", numbers.workers},
                           {"disk_direct", numbers.disk_direct},
                           {"feature_cache_gib", numbers.feature_cache_gib}};
  if (!numbers.fanouts.empty()) values["fan_out"] = fanout_text(numbers.fanouts);
  if (numbers.prefetch != -1) values["prefetch"] = std::to_string(numbers.prefetch);  // -1: auto
  std::optional<std::string> mode, edge_ids;
  for (const auto& entry : choices) {
    const std::string& key = entry.key();
    const std::string& value = entry.value();
    if (key == "mode") {
      mode = value;
    } else if (key == "edge_ids") {
      edge_ids = value;
    } else if (key == "weighted") {
      values["weighted_sampling"] = value;
    } else if (key == "device" || key == "features" || key == "gather" || key == "sampler" ||
               key == "graph" || key == "disk_io" || key == "feature_cache_rank" ||
               key == "feature_cache_policy" || key == "lookahead_batches" ||
               (key == "features_per_type" && is_hetero(kind))) {
      values[key] = value;
    } else {
      fail_argument(key, "is not an option of directgnn.", is_hetero(kind) ? "Hetero" : "",
                    "Loader");
    }
  }
  LoaderOptions o;
  try {
    o = make_options(kind, values).loader;
  } catch (const InvalidArgument& e) {
    // Python's keywords where they differ from the options' names.
    const std::string& p = e.parameter();
    throw InvalidArgument(p == "weighted_sampling" ? "weighted"
                          : p == "sampler_workers" ? "workers"
                          : p == "fan_out"         ? "fanouts"
                                                   : p,
                          e.detail());
  }
  if (mode) o.sample_mode = sample_mode_arg(*mode);
  if (edge_ids) {
    DGNN_CHECK_ARG(*edge_ids == "true" || *edge_ids == "false", "edge_ids", "'", *edge_ids,
                   "' is not true or false");
    o.edge_ids = *edge_ids == "true";
  }
  return o;
}

LoaderHolder::LoaderHolder(at::Tensor indptr, at::Tensor indices, at::Tensor features,
                           at::Tensor labels, std::optional<at::Tensor> weights,
                           std::string features_path, c10::Dict<std::string, std::string> choices,
                           std::vector<int64_t> fanouts, int64_t batch_size, int64_t prefetch,
                           int64_t workers, bool disk_direct, double feature_cache_gib,
                           std::vector<int64_t> offsets, int64_t feature_part) {
  dataset_.name = "python";
  dataset_.source = "the data given to directgnn.Loader";
  dataset_.graph = CsrGraph{std::move(indptr), std::move(indices), {}};
  if (weights) dataset_.graph.weights = weights->cpu();
  DGNN_CHECK_TYPE(dataset_.graph.indptr.is_cpu() && dataset_.graph.indices.is_cpu(),
                  "directgnn.Loader: the graph (indptr, indices) must be CPU tensors");
  validate_csr(dataset_.graph, "directgnn.Loader");
  const int64_t n = dataset_.num_nodes();
  set_partition_arg(dataset_, offsets, feature_part, features);
  DGNN_CHECK_TYPE(labels.is_cpu(),
                  "directgnn.Loader: labels must be a CPU tensor (they are sent to "
                  "the loader's device with each minibatch)");
  DGNN_CHECK_TYPE(labels.dim() == 1 && labels.size(0) == n &&
                      (labels.scalar_type() == at::kLong || labels.scalar_type() == at::kInt),
                  "directgnn.Loader: labels must be int64 [", n, "] (one per node), got ",
                  labels.scalar_type(), " ", labels.sizes());
  dataset_.features = std::move(features);
  dataset_.features_path = std::move(features_path);
  dataset_.labels = labels.to(at::kLong);
  const LoaderNumbers numbers{std::move(fanouts), batch_size,       prefetch, workers,
                              disk_direct,        feature_cache_gib};
  LoaderSettings settings = resolve_loader(loader_options_arg(choices, numbers), dataset_);
  if (!offsets.empty()) settings = sharded_settings(std::move(settings), prefetch >= 0);
  note_ = settings.note;
  loader_ = std::make_unique<MinibatchLoader>(dataset_, settings);
}

void check_equal_steps(ProcessGroup& group, int64_t steps, const char* who) {
  // The sums of the step counts and of their squares are `size` times one count's only when
  // every count is the same.
  const int size = group.size();
  std::vector<at::Tensor> sums{
      at::tensor({static_cast<double>(steps), static_cast<double>(steps) * steps}, at::kDouble)};
  group.all_reduce_sum(sums);
  const double mean = sums[0][0].item<double>() / size;
  DGNN_CHECK(mean == static_cast<double>(steps) &&
                 sums[0][1].item<double>() == static_cast<double>(size) * steps * steps,
             who, ": rank ", group.rank(), " takes ", steps,
             " minibatches per pass and the ranks' mean is ", mean,
             "; give every rank the same seeds and batch_size");
}

void LoaderHolder::shard(const c10::intrusive_ptr<c10d::ProcessGroup>& group, int64_t timeout_s,
                         int64_t steps, const std::string& wire) {
  DGNN_CHECK(!dataset_.partition.offsets.empty() && exchange_ == nullptr,
             "directgnn.Loader: shard() is for a sharded loader, once");
  const char* who = "directgnn.Loader";
  exchange_ =
      python_exchange(dataset_, loader_->store(), group, timeout_s, steps, who,
                      parse_exchange_wire(wire, loader_->settings(), who), loader_->settings());
  shard_rank_ = group->getRank();
  loader_->use_exchange(exchange_);
}

void set_partition_arg(Dataset& ds, const std::vector<int64_t>& offsets, int64_t feature_part,
                       const at::Tensor& features) {
  const int64_t n = ds.num_nodes();
  if (!offsets.empty()) {
    const PartOffsets book(offsets, static_cast<int>(offsets.size()) - 1, "the partition book");
    DGNN_CHECK_ARG(book[0] == 0 && book.back() == n, "data",
                   "the partition book's offsets run from ", book[0], " to ", book.back(),
                   "; they must cover the graph's ", n, " nodes");
    DGNN_CHECK_ARG(feature_part < static_cast<int64_t>(offsets.size()) - 1, "data", "part ",
                   feature_part, " of ", offsets.size() - 1, " parts");
    ds.partition.offsets = offsets;
    ds.feature_part = feature_part;
  }
  const int64_t rows = feature_part >= 0 ? offsets[feature_part + 1] - offsets[feature_part] : n;
  DGNN_CHECK_ARG(features.dim() == 2 && features.size(0) == rows, "x", "features must be [", rows,
                 ", F] (",
                 feature_part >= 0 ? "the rows of part " + std::to_string(feature_part)
                                   : std::string("one row per node"),
                 "), got ", features.sizes());
}

ExchangeWire parse_exchange_wire(const std::string& wire, const LoaderSettings& settings,
                                 const char* who) {
  DGNN_CHECK_ARG(wire == "cpu" || wire == "gpu" || wire == "nccl", "exchange_device", who, ": '",
                 wire, "' is not a wire; use cpu, gpu or nccl");
  ExchangeWire w;
  if (wire == "cpu") return w;
  DGNN_CHECK_ARG(settings.gpu(), "exchange_device", who,
                 ": gpu lands the exchanged rows in a GPU's memory, but this loader's device is ",
                 settings.device.str(), "; use cpu or auto");
  w.gpu = true;
  if (wire == "nccl") w.nccl_gpu = std::max<int>(0, settings.device.index());
  return w;
}

std::unique_ptr<ProcessGroup> wire_group(const c10::intrusive_ptr<c10d::ProcessGroup>& group,
                                         const std::string& tag, std::chrono::seconds timeout,
                                         const ExchangeWire& wire) {
  return ProcessGroup::over_store(group->getRank(), group->getSize(), group->getStore(), tag,
                                  timeout, wire.nccl_gpu);
}

std::shared_ptr<FeatureExchange> python_exchange(
    const Dataset& ds, const FeatureStore& store,
    const c10::intrusive_ptr<c10d::ProcessGroup>& group, int64_t timeout_s, int64_t steps,
    const char* who, const ExchangeWire& wire, const LoaderSettings& settings) {
  const int rank = group->getRank(), size = group->getSize();
  const std::vector<int64_t>& offsets = ds.partition.offsets;
  DGNN_CHECK_ARG(static_cast<int64_t>(offsets.size()) - 1 == size, "data", "the dataset has ",
                 offsets.size() - 1, " parts and the process group ", size,
                 " ranks; partition it with one part per rank");
  DGNN_CHECK_ARG(ds.feature_part < 0 || ds.feature_part == rank, "data", "holds part ",
                 ds.feature_part, "'s rows, but this is rank ", rank,
                 "; load it with shard=True on every rank");
  auto exchange_group =
      wire_group(group, loader_group_tag("loader"), std::chrono::seconds(timeout_s), wire);
  check_equal_steps(*exchange_group, steps, who);
  auto exchange = part_exchange(ds, rank, store, std::move(exchange_group));
  if (wire.gpu) exchange->on_device(settings.device, settings.gather);
  return exchange;
}

c10::Dict<std::string, double> counts_dict(const ExchangeCounts& c) {
  c10::Dict<std::string, double> out;
  out.insert("gathers", static_cast<double>(c.gathers));
  out.insert("rows", static_cast<double>(c.rows));
  out.insert("remote_rows", static_cast<double>(c.remote_rows));
  out.insert("cache_hits", static_cast<double>(c.cache_hits));
  out.insert("bytes_sent", static_cast<double>(c.bytes_sent));
  out.insert("bytes_received", static_cast<double>(c.bytes_received));
  out.insert("seconds", c.seconds);
  return out;
}

std::string loader_group_tag(const std::string& kind) {
  // Each sharded loader of a process gets groups of its own; every rank makes its loaders in
  // the same order, so their numbers agree.
  static std::atomic<int> made{0};
  return kind + "-" + std::to_string(made++);
}

c10::Dict<std::string, double> LoaderHolder::exchange_counts() {
  if (exchange_ == nullptr) return c10::Dict<std::string, double>();
  const ExchangeCounts c = exchange_->counts();
  exchange_->clear_counts();
  return counts_dict(c);
}

std::string LoaderHolder::fill_cache(const at::Tensor& seeds, int64_t seed, bool show_progress) {
  const LoaderSettings& s = loader_->settings();
  if (s.cache.gib <= 0) return "";
  passes_.clear();
  const at::Tensor checked = checked_seeds(seeds, dataset_.num_nodes());
  if (exchange_ == nullptr) {
    return fill_feature_cache(*loader_, dataset_, checked, static_cast<uint64_t>(seed), s.cache,
                              show_progress);
  }
  // An owner's cache keeps the rows of its part that the ranks' batches read most.
  return fill_feature_cache(loader_->mutable_store(), dataset_.graph,
                            node_presample(*loader_, checked, static_cast<uint64_t>(seed)), s.cache,
                            show_progress, owner_cache_scope(dataset_, shard_rank_, *exchange_));
}

LoaderHolder::~LoaderHolder() { passes_.clear(); }

int64_t LoaderHolder::start(const at::Tensor& seeds, int64_t seed) {
  const at::Tensor order = checked_seeds(seeds, dataset_.num_nodes());
  const auto base = static_cast<uint64_t>(seed);
  return passes_.add(loader_->epoch(
      order, [base](int64_t step) { return mix64(base, 0x10ad, static_cast<uint64_t>(step)); }));
}

LoaderBatch LoaderHolder::next(int64_t id) {
  const auto epoch = passes_.get(id);
  DGNN_CHECK(epoch != nullptr && !epoch->done(),
             "directgnn.Loader: no minibatch left in this pass; start another");
  const Minibatch b = epoch->next();
  return {b.seeds, b.x, b.labels, as_result(b.batch)};
}

namespace {

// torch.classes.directgnn.ShardedTable(part, offsets, group, timeout): this rank's part of a
// table sharded over a torch.distributed group's ranks (directgnn.pyg's stores over a dataset
// loaded with shard=True): gather(ids) returns the rows of any global ids, the other ranks'
// fetched from their owners; a collective, which every rank calls as often.
class ShardedTableHolder : public torch::CustomClassHolder {
 public:
  ShardedTableHolder(at::Tensor part, std::vector<int64_t> offsets,
                     const c10::intrusive_ptr<c10d::ProcessGroup>& group, int64_t timeout_s) {
    const int rank = group->getRank(), size = group->getSize();
    DGNN_CHECK_ARG(static_cast<int64_t>(offsets.size()) - 1 == size, "data", "the dataset has ",
                   offsets.size() - 1, " parts and the process group ", size,
                   " ranks; partition it with one part per rank");
    DGNN_CHECK_TYPE(part.dim() == 2 && part.is_cpu(),
                    "directgnn.pyg: a sharded table is a [rows, F] CPU tensor, got ", part.sizes());
    exchange_ = std::make_unique<FeatureExchange>(
        std::move(offsets), FeatureStore(part.contiguous()),
        ProcessGroup::over_store(rank, size, group->getStore(), loader_group_tag("pyg"),
                                 std::chrono::seconds(timeout_s)));
  }
  at::Tensor gather(const at::Tensor& ids) {
    return exchange_->gather(ids.to(at::kCPU).to(at::kLong).contiguous());
  }
  int64_t num_rows() const { return exchange_->num_rows(); }
  c10::Dict<std::string, double> exchange_counts() {
    const ExchangeCounts c = exchange_->counts();
    exchange_->clear_counts();
    return counts_dict(c);
  }

 private:
  std::unique_ptr<FeatureExchange> exchange_;
};

}  // namespace

void define_classes(torch::Library& m) {
  m.class_<ShardedTableHolder>("ShardedTable")
      .def(guarded_init<ShardedTableHolder, at::Tensor, std::vector<int64_t>,
                        c10::intrusive_ptr<c10d::ProcessGroup>, int64_t>())
      .def("gather", guarded<&ShardedTableHolder::gather>)
      .def("num_rows", guarded<&ShardedTableHolder::num_rows>)
      .def("exchange_counts", guarded<&ShardedTableHolder::exchange_counts>);
  m.class_<FeatureStoreHolder>("FeatureStore")
      .def(guarded_init<FeatureStoreHolder, at::Tensor, std::string, int64_t, std::string,
                        std::string, bool>())
      .def("gather", guarded<&FeatureStoreHolder::gather>)
      .def("table", guarded<&FeatureStoreHolder::table>)
      .def("placement", guarded<&FeatureStoreHolder::placement>);
  m.class_<SamplerHolder>("NeighborSampler")
      .def(guarded_init<SamplerHolder, at::Tensor, at::Tensor, std::vector<int64_t>, std::string,
                        std::string, std::string, std::optional<at::Tensor>, bool>())
      .def("sample", guarded<&SamplerHolder::sample>)
      .def("sample_pyg", guarded<&SamplerHolder::sample_pyg>);
  m.class_<LoaderHolder>("Loader")
      .def(guarded_init<LoaderHolder, at::Tensor, at::Tensor, at::Tensor, at::Tensor,
                        std::optional<at::Tensor>, std::string, c10::Dict<std::string, std::string>,
                        std::vector<int64_t>, int64_t, int64_t, int64_t, bool, double,
                        std::vector<int64_t>, int64_t>())
      .def("shard", guarded<&LoaderHolder::shard>)
      .def("exchange_counts", guarded<&LoaderHolder::exchange_counts>)
      .def("fill_cache", guarded<&LoaderHolder::fill_cache>)
      .def("start", guarded<&LoaderHolder::start>)
      .def("has_next", guarded<&LoaderHolder::has_next>)
      .def("next", guarded<&LoaderHolder::next>)
      .def("finish", guarded<&LoaderHolder::finish>)
      .def("steps", guarded<&LoaderHolder::steps>)
      .def("mode", guarded<&LoaderHolder::mode>)
      .def("device", guarded<&LoaderHolder::device>)
      .def("note", guarded<&LoaderHolder::note>);
}

}  // namespace directgnn::ops
