#include "loader/hetero_link_loader.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <utility>

#include "core/clock.h"
#include "directgnn/error.h"
#include "loader/batch_pipeline.h"

namespace directgnn {
HeteroLinkLoader::HeteroLinkLoader(const HeteroDataset& graph, HeteroLinkTarget target,
                                   HeteroSamplerOptions sampler, LinkSamplerOptions link,
                                   const LoaderSettings& settings)
    : sampler_(graph, target, std::move(sampler), link), settings_(settings) {
  DGNN_CHECK_ARG(settings_.batch_size > 0, "batch_size", "must be positive, got ",
                 settings_.batch_size);
  DGNN_CHECK_ARG(settings_.workers >= 1, "workers", "must be at least 1, got ", settings_.workers);
  for (const NodeType& t : graph.node_types) {
    stores_.push_back(t.has_features() ? std::make_unique<FeatureStore>(t.features) : nullptr);
  }
}

HeteroLinkLoader::~HeteroLinkLoader() = default;

int64_t HeteroLinkLoader::steps(int64_t num_positives) const {
  return (num_positives + settings_.batch_size - 1) / settings_.batch_size;
}

HeteroLinkMinibatch HeteroLinkLoader::prepare(const at::Tensor& positives,
                                              uint64_t sample_seed) const {
  HeteroLinkMinibatch b;
  auto t0 = Clock::now();
  b.batch = sampler_.sample(positives, sample_seed);
  b.sample_s = seconds_since(t0);
  t0 = Clock::now();
  for (size_t t = 0; t < stores_.size(); ++t) {
    b.x.push_back(stores_[t] ? stores_[t]->gather(b.batch.sample.input_nodes[t]) : at::Tensor());
  }
  b.gather_s = seconds_since(t0);
  return b;
}

HeteroLinkLoader::Epoch HeteroLinkLoader::epoch(at::Tensor positives,
                                                std::function<uint64_t(int64_t)> sample_seed,
                                                int64_t first_step, int64_t end_step) const {
  return Epoch(*this, std::move(positives), std::move(sample_seed), first_step, end_step);
}

HeteroLinkLoader::Epoch::Epoch(const HeteroLinkLoader& loader, at::Tensor positives,
                               std::function<uint64_t(int64_t)> sample_seed, int64_t first_step,
                               int64_t end_step) {
  DGNN_CHECK(positives.dim() == 2 && positives.size(1) == 2 && positives.device().is_cpu(),
             "heterogeneous link loader: positives must be a CPU tensor [E, 2]");
  positives = positives.to(at::kLong).contiguous();
  const LoaderSettings& o = loader.settings_;
  const int64_t all = loader.steps(positives.size(0));
  const int64_t end = end_step < 0 ? all : std::min(all, end_step);
  pipeline_ = batch_pipeline<HeteroLinkMinibatch>(
      std::move(positives), o.batch_size, first_step, end,
      {o.prefetch, o.workers, o.worker_threads}, std::move(sample_seed),
      [&loader](const at::Tensor& rows, uint64_t seed) { return loader.prepare(rows, seed); });
}

HeteroLinkLoader::Epoch::Epoch(Epoch&&) noexcept = default;
HeteroLinkLoader::Epoch& HeteroLinkLoader::Epoch::operator=(Epoch&&) noexcept = default;
HeteroLinkLoader::Epoch::~Epoch() = default;

bool HeteroLinkLoader::Epoch::done() const { return pipeline_->done(); }

HeteroLinkMinibatch HeteroLinkLoader::Epoch::next() { return pipeline_->next(); }

}  // namespace directgnn
