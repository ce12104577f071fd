#include "loader/hetero_loader.h"

#include <ATen/ATen.h>

#include <chrono>
#include <utility>

#include "core/threads.h"
#include "directgnn/error.h"
#include "loader/pipeline.h"

namespace directgnn {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

HeteroLoader::HeteroLoader(const HeteroDataset& dataset, HeteroSamplerOptions sampler,
                           HeteroLoaderOptions options)
    : dataset_(dataset), sampler_(dataset, std::move(sampler)), options_(options) {
  DGNN_CHECK_ARG(options_.batch_size > 0, "batch_size", "must be positive, got ",
                 options_.batch_size);
  DGNN_CHECK_ARG(options_.workers >= 1, "workers", "must be at least 1, got ", options_.workers);
  for (const NodeType& t : dataset.node_types) {
    stores_.push_back(t.has_features() ? std::make_unique<FeatureStore>(t.features) : nullptr);
  }
}

HeteroLoader::~HeteroLoader() = default;

int64_t HeteroLoader::steps(int64_t num_seeds) const {
  return (num_seeds + options_.batch_size - 1) / options_.batch_size;
}

HeteroBatch HeteroLoader::prepare(const at::Tensor& seeds, uint64_t sample_seed) const {
  HeteroBatch b;
  auto t0 = std::chrono::steady_clock::now();
  b.sample = sampler_.sample(dataset_.target_type, seeds, sample_seed);
  b.sample_s = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  for (size_t t = 0; t < stores_.size(); ++t) {
    b.x.push_back(stores_[t] ? stores_[t]->gather(b.sample.input_nodes[t]) : at::Tensor());
  }
  if (dataset_.labels.defined()) b.labels = dataset_.labels.index_select(0, b.sample.seeds);
  b.gather_s = seconds_since(t0);
  return b;
}

HeteroLoader::Epoch HeteroLoader::epoch(at::Tensor seeds,
                                        std::function<uint64_t(int64_t)> sample_seed,
                                        int64_t first_step) const {
  return Epoch(*this, std::move(seeds), std::move(sample_seed), first_step);
}

HeteroLoader::Epoch::Epoch(const HeteroLoader& loader, at::Tensor seeds,
                           std::function<uint64_t(int64_t)> sample_seed, int64_t first_step) {
  DGNN_CHECK(seeds.dim() == 1 && seeds.device().is_cpu(),
             "heterogeneous loader: seeds must be a 1-D CPU tensor");
  seeds = seeds.to(at::kLong).contiguous();
  const int64_t count = seeds.numel(), batch = loader.options_.batch_size;
  const int threads =
      loader.options_.worker_threads > 0 ? loader.options_.worker_threads : num_threads();
  auto produce = [&loader, seeds, count, batch, sample_seed](int64_t step) {
    const int64_t lo = step * batch;
    return loader.prepare(seeds.narrow(0, lo, std::min(batch, count - lo)), sample_seed(step));
  };
  pipeline_ = std::make_unique<Pipeline<HeteroBatch>>(
      first_step, loader.steps(count), loader.options_.prefetch, loader.options_.workers, produce,
      [threads] { set_thread_team(threads); });
}

HeteroLoader::Epoch::Epoch(Epoch&&) noexcept = default;
HeteroLoader::Epoch& HeteroLoader::Epoch::operator=(Epoch&&) noexcept = default;
HeteroLoader::Epoch::~Epoch() = default;

bool HeteroLoader::Epoch::done() const { return pipeline_->done(); }

HeteroBatch HeteroLoader::Epoch::next() { return pipeline_->next(); }

}  // namespace directgnn
