#include "loader/hetero_link_loader.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <utility>

#include "core/clock.h"
#include "directgnn/error.h"
#include "loader/batch_pipeline.h"
#include "loader/loader.h"

namespace directgnn {
HeteroLinkLoader::HeteroLinkLoader(const HeteroDataset& graph, HeteroLinkTarget target,
                                   HeteroSamplerOptions sampler, LinkSamplerOptions link,
                                   const LoaderSettings& settings)
    : sampler_(graph, target, std::move(sampler), link),
      settings_(settings),
      stores_(graph, settings_) {
  check_batch_settings(settings_);
  refuse_lookahead_cache(settings_, "heterogeneous link prediction");
}

HeteroLinkLoader::~HeteroLinkLoader() = default;

int64_t HeteroLinkLoader::steps(int64_t num_positives) const {
  return (num_positives + settings_.batch_size - 1) / settings_.batch_size;
}

// Samples and gathers on the calling thread (on a GPU, on its current stream, which the
// timings wait for).
void HeteroLinkLoader::fill(HeteroLinkMinibatch& b, const at::Tensor& positives,
                            uint64_t sample_seed) const {
  const bool gpu = settings_.gpu();
  auto t0 = Clock::now();
  b.batch = sampler_.sample(positives, sample_seed);
  hetero_blocks_to(b.batch.sample.blocks, settings_.device);
  if (gpu) gpu::synchronize_current_stream(settings_.index());
  b.sample_s = seconds_since(t0);
  t0 = Clock::now();
  b.x = stores_.gather(b.batch.sample.input_nodes);
  if (gpu) gpu::synchronize_current_stream(settings_.index());
  b.gather_s = seconds_since(t0);
}

HeteroLinkMinibatch HeteroLinkLoader::prepare(const at::Tensor& positives,
                                              uint64_t sample_seed) const {
  HeteroLinkMinibatch b;
  if (!settings_.gpu()) {
    fill(b, positives, sample_seed);
    return b;
  }
  b.ticket = gpu::run_on_side_stream(settings_.index(), [&] { fill(b, positives, sample_seed); });
  return b;
}

HeteroLinkLoader::Epoch HeteroLinkLoader::epoch(at::Tensor positives,
                                                std::function<uint64_t(int64_t)> sample_seed,
                                                int64_t first_step, int64_t end_step) const {
  return Epoch(*this, std::move(positives), std::move(sample_seed), first_step, end_step);
}

HeteroLinkLoader::Epoch::Epoch(const HeteroLinkLoader& loader, at::Tensor positives,
                               std::function<uint64_t(int64_t)> sample_seed, int64_t first_step,
                               int64_t end_step)
    : gpu_(loader.settings_.gpu()) {
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

HeteroLinkMinibatch HeteroLinkLoader::Epoch::next() {
  HeteroLinkMinibatch b = pipeline_->next();
  if (gpu_) gpu::wait_on_current_stream(b.ticket, hetero_batch_tensors(b.batch.sample.blocks, b.x));
  return b;
}

}  // namespace directgnn
