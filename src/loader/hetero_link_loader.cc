#include "loader/hetero_link_loader.h"

#include <ATen/ATen.h>

#include <algorithm>
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

HeteroLinkLoader::HeteroLinkLoader(const HeteroDataset& graph, HeteroLinkTarget target,
                                   HeteroSamplerOptions sampler, LinkSamplerOptions link,
                                   HeteroLoaderOptions options)
    : sampler_(graph, target, std::move(sampler), link), options_(options) {
  DGNN_CHECK_ARG(options_.batch_size > 0, "batch_size", "must be positive, got ",
                 options_.batch_size);
  DGNN_CHECK_ARG(options_.workers >= 1, "workers", "must be at least 1, got ", options_.workers);
  for (const NodeType& t : graph.node_types) {
    stores_.push_back(t.has_features() ? std::make_unique<FeatureStore>(t.features) : nullptr);
  }
}

HeteroLinkLoader::~HeteroLinkLoader() = default;

int64_t HeteroLinkLoader::steps(int64_t num_positives) const {
  return (num_positives + options_.batch_size - 1) / options_.batch_size;
}

HeteroLinkMinibatch HeteroLinkLoader::prepare(const at::Tensor& positives,
                                              uint64_t sample_seed) const {
  HeteroLinkMinibatch b;
  auto t0 = std::chrono::steady_clock::now();
  b.batch = sampler_.sample(positives, sample_seed);
  b.sample_s = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
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
  const int64_t count = positives.size(0), batch = loader.options_.batch_size;
  const int64_t all = loader.steps(count);
  const int64_t end = end_step < 0 ? all : std::min(all, end_step);
  const int threads =
      loader.options_.worker_threads > 0 ? loader.options_.worker_threads : num_threads();
  auto produce = [&loader, positives, count, batch, sample_seed](int64_t step) {
    const int64_t lo = step * batch;
    return loader.prepare(positives.narrow(0, lo, std::min(batch, count - lo)), sample_seed(step));
  };
  pipeline_ = std::make_unique<Pipeline<HeteroLinkMinibatch>>(
      first_step, end, loader.options_.prefetch, loader.options_.workers, produce,
      [threads] { set_thread_team(threads); });
}

HeteroLinkLoader::Epoch::Epoch(Epoch&&) noexcept = default;
HeteroLinkLoader::Epoch& HeteroLinkLoader::Epoch::operator=(Epoch&&) noexcept = default;
HeteroLinkLoader::Epoch::~Epoch() = default;

bool HeteroLinkLoader::Epoch::done() const { return pipeline_->done(); }

HeteroLinkMinibatch HeteroLinkLoader::Epoch::next() { return pipeline_->next(); }

}  // namespace directgnn
