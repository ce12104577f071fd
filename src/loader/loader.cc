#include "loader/loader.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <limits>

#include "core/clock.h"
#include "directgnn/error.h"
#include "loader/batch_pipeline.h"

namespace directgnn {

namespace {

SamplerOptions sampler_options(const LoaderSettings& s) {
  SamplerOptions o;
  o.fanouts = s.fanouts;
  o.mode = s.sample_mode;
  o.device = s.gpu_sampler ? s.device : c10::Device(c10::kCPU);
  o.graph = s.graph;
  o.weighted = s.weighted;
  o.edge_ids = s.edge_ids;
  return o;
}

// Settings made by hand (tests, or a field set after resolve_loader), checked before anything
// is built from them.
LoaderSettings checked(const Dataset& dataset, LoaderSettings s) {
  // This loader plans its batches on the CPU, with one worker: auto looks ahead there.
  s.cache.policy = disk::resolve_cache_policy(s.cache.policy, !s.gpu() && s.workers == 1);
  if (s.cache.lookahead_batches == 0) s.cache.lookahead_batches = disk::kDefaultLookaheadBatches;
  check_batch_settings(s);
  DGNN_CHECK(!s.sources_in_place || can_read_sources_in_place(dataset, s),
             "loader: sources_in_place reads a host table on the CPU only, a contiguous "
             "float32 matrix");
  return s;
}

}  // namespace

void check_batch_settings(const LoaderSettings& s) {
  DGNN_CHECK_ARG(s.batch_size >= 1, "batch_size", "must be positive, got ", s.batch_size);
  DGNN_CHECK_ARG(s.prefetch >= 0 && s.prefetch <= 64, "prefetch", "must be in 0..64, got ",
                 s.prefetch);
  DGNN_CHECK_ARG(s.workers >= 1 && s.workers <= 64, "workers", "must be in 1..64, got ", s.workers);
  DGNN_CHECK_ARG(!s.gpu_sampler || s.device.is_cuda(), "sampler",
                 "gpu samples on a GPU, but minibatches go to the CPU");
  if (s.cache.policy != disk::CachePolicy::kLookahead) return;
  DGNN_CHECK_ARG(s.cache.lookahead_batches >= 1 && s.cache.lookahead_batches <= 1024,
                 "lookahead_batches", "must be in 1..1024, got ", s.cache.lookahead_batches);
  DGNN_CHECK_ARG(s.workers == 1, "sampler_workers",
                 "a look-ahead cache serves batches in the order it planned them, with one worker; "
                 "set it to 1, or choose another feature_cache_policy");
  DGNN_CHECK_ARG(
      !s.device.is_cuda(), "feature_cache_policy",
      "lookahead plans batches gathered on the CPU so far; on a GPU use sieve or static");
}

void refuse_lookahead_cache(const LoaderSettings& s, const std::string& what) {
  DGNN_CHECK_ARG(s.cache.policy != disk::CachePolicy::kLookahead, "feature_cache_policy",
                 "lookahead plans the batches of node classification on homogeneous graphs so "
                 "far, not ",
                 what, "; use sieve or static");
}

// Copies a CPU sampler's blocks to `device`. kOncePerNode blocks are prefixes of the outermost
// one: it alone is copied, and the others stay views of it.
void blocks_to(MiniBatch& batch, c10::Device device, SampleMode mode) {
  const Block& outer = batch.blocks.front();
  const at::Tensor indptr = outer.indptr.to(device), indices = outer.indices.to(device);
  const at::Tensor degree = outer.src_degree.to(device);
  const at::Tensor edges = outer.edge_ids.defined() ? outer.edge_ids.to(device) : at::Tensor();
  for (Block& b : batch.blocks) {
    const bool prefix = mode == SampleMode::kOncePerNode;
    b.indptr = prefix ? indptr.narrow(0, 0, b.num_dst + 1) : b.indptr.to(device);
    b.indices = prefix ? indices.narrow(0, 0, b.num_edges()) : b.indices.to(device);
    if (b.edge_ids.defined()) {
      b.edge_ids = prefix ? edges.narrow(0, 0, b.num_edges()) : b.edge_ids.to(device);
    }
    b.src_degree = degree.narrow(0, 0, b.num_src);
    b.dst_degree = degree.narrow(0, 0, b.num_dst);
  }
}

// The loader's feature store: `disk` reads the dataset's features.npy, the others use the
// table in place.
FeatureStore make_feature_store(const Dataset& ds, const LoaderSettings& o) {
  const int index = o.device.is_cuda() ? std::max<int>(0, o.device.index()) : 0;
  if (o.features != Placement::kDisk) return FeatureStore(ds.features, o.features, index);
  DGNN_CHECK_ARG(!ds.features_path.empty(), "features",
                 "disk reads feature rows from a dataset directory's features.npy, but ",
                 ds.source.empty() ? "this dataset" : ds.source,
                 " was not loaded from one; write one (directgnn convert SOURCE DIR) and load "
                 "that");
  return FeatureStore::on_disk(ds.features, ds.features_path, o.disk, index);
}

std::vector<at::Tensor> Minibatch::tensors() const {
  std::vector<at::Tensor> all{seeds, labels, x, batch.seeds, batch.input_nodes};
  for (const Block& b : batch.blocks) {
    all.insert(all.end(), {b.indptr, b.indices, b.src_degree, b.dst_degree});
    if (b.edge_ids.defined()) all.push_back(b.edge_ids);
  }
  return all;
}

MinibatchLoader::MinibatchLoader(const Dataset& dataset, LoaderSettings settings,
                                 std::shared_ptr<HopSource> hops)
    : dataset_(dataset),
      settings_(checked(dataset, std::move(settings))),
      sampler_(dataset.graph, sampler_options(settings_), hops),
      store_(make_feature_store(dataset, settings_)),
      collective_sampling_(hops != nullptr) {
  DGNN_CHECK(collective_sampling_ || dataset.structure_part < 0,
             "loader: this rank holds one part's edges only; its sampler needs the hop exchange "
             "that asks the other parts (dist/hop_exchange.h)");
  DGNN_CHECK(!collective_sampling_ || (settings_.workers == 1 && store_.begin_plan() < 0),
             "partitioned structure: the loader must prepare batches with one worker and plan "
             "no cache");
  labels_ = settings_.device.is_cuda() ? dataset.labels.to(settings_.device) : dataset.labels;
}

MinibatchLoader::~MinibatchLoader() = default;

int64_t MinibatchLoader::steps(int64_t num_seeds) const {
  return (num_seeds + settings_.batch_size - 1) / settings_.batch_size;
}

std::string loader_mode(const LoaderSettings& settings, const FeatureStore& store) {
  std::string features = placement_name(settings.features);
  if (const disk::RowFile* file = store.row_file()) {
    features += ":" + disk::backend_name(file->backend()) + (settings.disk.direct ? "+direct" : "");
  }
  return features + "/" + (settings.gpu() ? gather_method_name(settings.gather.method) : "cpu") +
         "/" + (settings.gpu_sampler ? "gpu" : "cpu");
}

std::string sharded_loader_mode(const LoaderSettings& settings, const FeatureExchange& exchange) {
  const char* how = !settings.gpu()               ? "cpu"
                    : exchange.device().is_cuda() ? "exchange-gpu"
                                                  : "exchange+copy";
  return std::string("sharded/") + how + "/" + (settings.gpu_sampler ? "gpu" : "cpu");
}

void check_exchange(const LoaderSettings& settings, const FeatureStore& store, int64_t num_rows,
                    const FeatureExchange& exchange) {
  DGNN_CHECK(!settings.sources_in_place && settings.workers == 1 && store.begin_plan() < 0,
             "sharded features: the loader must prepare batches with one worker, read no table "
             "in place and plan no cache");
  DGNN_CHECK(exchange.num_rows() == num_rows && exchange.dim() == store.dim(),
             "sharded features: the exchange's table is ", exchange.num_rows(), " x ",
             exchange.dim(), ", the dataset's ", num_rows, " x ", store.dim());
}

LoaderSettings sharded_settings(LoaderSettings s, bool prefetch_given) {
  s.workers = 1;
  s.sources_in_place = false;
  if (!prefetch_given) s.prefetch = std::max(1, s.prefetch);
  s.cache.policy = disk::resolve_cache_policy(s.cache.policy, /*plans=*/false);
  return s;
}

std::shared_ptr<FeatureExchange> part_exchange(const Dataset& ds, int rank,
                                               const FeatureStore& table,
                                               std::unique_ptr<ProcessGroup> group) {
  const std::vector<int64_t>& offsets = ds.partition.offsets;
  const int64_t first_row = ds.feature_part >= 0 ? 0 : offsets[rank];
  return std::make_shared<FeatureExchange>(offsets, table, first_row, std::move(group));
}

std::string MinibatchLoader::mode() const {
  return exchange_ == nullptr ? loader_mode(settings_, store_)
                              : sharded_loader_mode(settings_, *exchange_);
}

void MinibatchLoader::use_exchange(std::shared_ptr<FeatureExchange> exchange) {
  check_exchange(settings_, store_, dataset_.num_nodes(), *exchange);
  exchange_ = std::move(exchange);
}

MiniBatch MinibatchLoader::sample(const at::Tensor& seeds, uint64_t sample_seed) const {
  return sampler_.sample(seeds, sample_seed);
}

Minibatch MinibatchLoader::prepare(const at::Tensor& seeds, uint64_t sample_seed) const {
  if (settings_.device.is_cuda()) return prepare_on_gpu(seeds, sample_seed);
  return finish(sample_timed(seeds, sample_seed), {});
}

MinibatchLoader::Sampled MinibatchLoader::sample_timed(const at::Tensor& seeds,
                                                       uint64_t sample_seed) const {
  const auto t = Clock::now();
  Sampled s{seeds, sampler_.sample(seeds, sample_seed), 0.0};
  s.sample_s = seconds_since(t);
  return s;
}

at::Tensor MinibatchLoader::gathered_ids(const MiniBatch& batch) const {
  if (!settings_.sources_in_place) return batch.input_nodes;
  return batch.input_nodes.narrow(0, 0, batch.blocks.front().num_dst);
}

// Gathers a sampled batch on the CPU (`planned`: as the look-ahead cache planned it).
Minibatch MinibatchLoader::finish(Sampled sampled, const PlannedGather& planned) const {
  Minibatch m;
  m.seeds = std::move(sampled.seeds);
  m.batch = std::move(sampled.batch);
  m.sample_s = sampled.sample_s;
  const at::Tensor& seeds = m.seeds;
  const auto t = Clock::now();
  GatherOptions gather;
  gather.planned = planned;
  const at::Tensor ids = gathered_ids(m.batch);
  m.x = exchange_ != nullptr ? exchange_->gather(ids)
                             : store_.gather(ids, c10::Device(c10::kCPU), gather);
  if (settings_.sources_in_place) {
    Block& first = m.batch.blocks.front();
    const at::Tensor& degree = sampler_.degrees();
    const bool narrow = first.indices.scalar_type() == at::kInt &&
                        degree.numel() <= std::numeric_limits<int32_t>::max();
    first.indices = m.batch.input_nodes.index_select(0, first.indices.to(at::kLong))
                        .to(narrow ? at::kInt : at::kLong);
    first.src_degree = degree;
    first.num_src = degree.numel();
    m.source_table = dataset_.features;
  }
  m.gather_s = seconds_since(t);
  m.labels = labels_.index_select(0, seeds);
  return m;
}

// Everything on this worker's side stream, timed by waiting for that stream (training goes on
// meanwhile on its own).
Minibatch MinibatchLoader::prepare_on_gpu(const at::Tensor& seeds, uint64_t sample_seed) const {
  Minibatch m;
  m.seeds = seeds;
  const c10::Device device = settings_.device;
  const int index = std::max<int>(0, device.index());
  m.ticket = gpu::run_on_side_stream(index, [&] {
    auto t = Clock::now();
    m.batch = sampler_.sample(seeds, sample_seed);
    if (!settings_.gpu_sampler) blocks_to(m.batch, device, settings_.sample_mode);
    gpu::synchronize_current_stream(index);
    m.sample_s = seconds_since(t);
    t = Clock::now();
    // A sharded table's rows come over the exchange, on its device, then to this one.
    m.x = exchange_ != nullptr
              ? exchange_->gather(m.batch.input_nodes.to(at::kCPU).to(at::kLong), device)
              : store_.gather(m.batch.input_nodes, device, settings_.gather);
    m.labels = labels_.index_select(0, seeds.to(device));
    gpu::synchronize_current_stream(index);
    m.gather_s = seconds_since(t);
  });
  return m;
}

MinibatchLoader::Epoch MinibatchLoader::epoch(at::Tensor seeds,
                                              std::function<uint64_t(int64_t)> sample_seed,
                                              int64_t first_step) const {
  return Epoch(*this, std::move(seeds), std::move(sample_seed), first_step);
}

MinibatchLoader::Epoch::Epoch(const MinibatchLoader& loader, at::Tensor seeds,
                              std::function<uint64_t(int64_t)> sample_seed, int64_t first_step)
    : gpu_(loader.settings_.device.is_cuda()) {
  DGNN_CHECK(seeds.dim() == 1 && seeds.scalar_type() == at::kLong && seeds.device().is_cpu(),
             "loader: seeds must be a 1-D int64 CPU tensor");
  const LoaderSettings& s = loader.settings_;
  const int64_t end = loader.steps(seeds.numel());
  const int64_t generation = loader.store_.begin_plan();
  if (generation >= 0) {
    // The cache looks ahead (checked to be on the CPU, with one worker).
    pipeline_ = lookahead_pipeline<Minibatch, Sampled>(
        std::move(seeds), s.batch_size, first_step, end, {s.prefetch, s.workers, s.worker_threads},
        std::move(sample_seed), s.cache.lookahead_batches,
        [&loader](const at::Tensor& rows, uint64_t seed) {
          return loader.sample_timed(rows, seed);
        },
        [&loader, generation](int64_t step, const Sampled& b) {
          loader.store_.plan_gather(generation, step, loader.gathered_ids(b.batch));
        },
        [&loader, generation](Sampled b, int64_t step) {
          return loader.finish(std::move(b), PlannedGather{generation, step});
        });
    return;
  }
  pipeline_ = batch_pipeline<Minibatch>(
      std::move(seeds), s.batch_size, first_step, end,
      {s.prefetch, s.workers, s.worker_threads,
       loader.exchange_ != nullptr || loader.collective_sampling_},
      std::move(sample_seed),
      [&loader](const at::Tensor& rows, uint64_t seed) { return loader.prepare(rows, seed); });
}

MinibatchLoader::Epoch::Epoch(Epoch&&) noexcept = default;
MinibatchLoader::Epoch& MinibatchLoader::Epoch::operator=(Epoch&&) noexcept = default;
MinibatchLoader::Epoch::~Epoch() = default;

bool MinibatchLoader::Epoch::done() const { return pipeline_->done(); }

Minibatch MinibatchLoader::Epoch::next() {
  Minibatch m = pipeline_->next();
  if (gpu_) gpu::wait_on_current_stream(m.ticket, m.tensors());
  return m;
}

}  // namespace directgnn
