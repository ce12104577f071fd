#include "loader/hetero_loader.h"

#include <ATen/ATen.h>

#include <utility>

#include "core/clock.h"
#include "directgnn/error.h"
#include "loader/batch_pipeline.h"

namespace directgnn {
HeteroLoader::HeteroLoader(const HeteroDataset& dataset, HeteroSamplerOptions sampler,
                           const LoaderSettings& settings)
    : dataset_(dataset), sampler_(dataset, std::move(sampler)), settings_(settings) {
  DGNN_CHECK_ARG(settings_.batch_size > 0, "batch_size", "must be positive, got ",
                 settings_.batch_size);
  DGNN_CHECK_ARG(settings_.workers >= 1, "workers", "must be at least 1, got ", settings_.workers);
  for (const NodeType& t : dataset.node_types) {
    stores_.push_back(t.has_features() ? std::make_unique<FeatureStore>(t.features) : nullptr);
  }
}

HeteroLoader::~HeteroLoader() = default;

int64_t HeteroLoader::steps(int64_t num_seeds) const {
  return (num_seeds + settings_.batch_size - 1) / settings_.batch_size;
}

HeteroBatch HeteroLoader::prepare(const at::Tensor& seeds, uint64_t sample_seed) const {
  HeteroBatch b;
  auto t0 = Clock::now();
  b.sample = sampler_.sample(dataset_.target_type, seeds, sample_seed);
  b.sample_s = seconds_since(t0);
  t0 = Clock::now();
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
  const LoaderSettings& o = loader.settings_;
  const int64_t end = loader.steps(seeds.numel());
  pipeline_ = batch_pipeline<HeteroBatch>(
      std::move(seeds), o.batch_size, first_step, end, {o.prefetch, o.workers, o.worker_threads},
      std::move(sample_seed),
      [&loader](const at::Tensor& rows, uint64_t seed) { return loader.prepare(rows, seed); });
}

HeteroLoader::Epoch::Epoch(Epoch&&) noexcept = default;
HeteroLoader::Epoch& HeteroLoader::Epoch::operator=(Epoch&&) noexcept = default;
HeteroLoader::Epoch::~Epoch() = default;

bool HeteroLoader::Epoch::done() const { return pipeline_->done(); }

HeteroBatch HeteroLoader::Epoch::next() { return pipeline_->next(); }

}  // namespace directgnn
