#include "loader/hetero_loader.h"

#include <ATen/ATen.h>

#include <utility>

#include "core/clock.h"
#include "core/random.h"
#include "directgnn/error.h"
#include "loader/batch_pipeline.h"
#include "loader/loader.h"

namespace directgnn {
namespace {

// The CPU sampler's options beside the GPU twin: it only ranks the cache's rows (presample), which
// reads no degrees, so the twin alone counts them.
HeteroSamplerOptions hetero_cpu_sampler_options(HeteroSamplerOptions options,
                                                const LoaderSettings& settings) {
  if (settings.gpu_sampler) options.degrees = false;
  return options;
}

}  // namespace

HeteroLoader::HeteroLoader(const HeteroDataset& dataset, HeteroSamplerOptions sampler,
                           const LoaderSettings& settings)
    : dataset_(dataset),
      sampler_(dataset, hetero_cpu_sampler_options(sampler, settings)),
      settings_(settings),
      stores_(dataset, settings_) {
  check_batch_settings(settings_);
  refuse_lookahead_cache(settings_, "heterogeneous graphs");
  if (settings_.gpu_sampler) {
    gpu_sampler_ = std::make_unique<gpu::HeteroNeighborSampler>(dataset, std::move(sampler),
                                                                settings_.device, settings_.graph);
  }
  if (dataset.labels.defined()) labels_ = dataset.labels.to(settings_.device);
}

HeteroLoader::~HeteroLoader() = default;

int64_t HeteroLoader::steps(int64_t num_seeds) const {
  return (num_seeds + settings_.batch_size - 1) / settings_.batch_size;
}

// Samples and gathers on the calling thread (on a GPU, on its current stream, which the
// timings wait for).
void HeteroLoader::fill(HeteroBatch& b, const at::Tensor& seeds, uint64_t sample_seed) const {
  const bool gpu = settings_.gpu();
  auto t0 = Clock::now();
  b.sample = gpu_sampler_ ? gpu_sampler_->sample(dataset_.target_type, seeds, sample_seed)
                          : sampler_.sample(dataset_.target_type, seeds, sample_seed);
  hetero_blocks_to(b.sample.blocks, settings_.device);
  if (gpu) gpu::synchronize_current_stream(settings_.index());
  b.sample_s = seconds_since(t0);
  t0 = Clock::now();
  b.x = stores_.gather(b.sample.input_nodes);
  if (labels_.defined()) b.labels = labels_.index_select(0, b.sample.seeds.to(settings_.device));
  if (gpu) gpu::synchronize_current_stream(settings_.index());
  b.gather_s = seconds_since(t0);
}

HeteroBatch HeteroLoader::prepare(const at::Tensor& seeds, uint64_t sample_seed) const {
  HeteroBatch b;
  if (!settings_.gpu()) {
    fill(b, seeds, sample_seed);
    return b;
  }
  b.ticket = gpu::run_on_side_stream(settings_.index(), [&] { fill(b, seeds, sample_seed); });
  return b;
}

HeteroPresample HeteroLoader::presample(const at::Tensor& seeds, uint64_t seed) const {
  return presample_batches(
      seeds, settings_.batch_size, steps(seeds.numel()),
      [this, seed](const at::Tensor& part, int64_t step) {
        return sampler_.sample(dataset_.target_type, part, mix64(seed, 0xcac4e, step)).input_nodes;
      });
}

HeteroLoader::Epoch HeteroLoader::epoch(at::Tensor seeds,
                                        std::function<uint64_t(int64_t)> sample_seed,
                                        int64_t first_step) const {
  return Epoch(*this, std::move(seeds), std::move(sample_seed), first_step);
}

HeteroLoader::Epoch::Epoch(const HeteroLoader& loader, at::Tensor seeds,
                           std::function<uint64_t(int64_t)> sample_seed, int64_t first_step)
    : gpu_(loader.settings_.gpu()) {
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

HeteroBatch HeteroLoader::Epoch::next() {
  HeteroBatch b = pipeline_->next();
  if (gpu_) {
    std::vector<at::Tensor> used = hetero_batch_tensors(b.sample.blocks, b.x);
    if (b.labels.defined()) used.push_back(b.labels);
    // The GPU sampler's ids, which the training step reads (the learnable tables' rows).
    for (const at::Tensor& ids : b.sample.input_nodes) {
      if (ids.is_cuda()) used.push_back(ids);
    }
    if (b.sample.seeds.defined() && b.sample.seeds.is_cuda()) used.push_back(b.sample.seeds);
    gpu::wait_on_current_stream(b.ticket, used);
  }
  return b;
}

}  // namespace directgnn
