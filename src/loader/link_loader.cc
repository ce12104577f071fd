#include "loader/link_loader.h"

#include <ATen/ATen.h>

#include "core/clock.h"
#include "directgnn/error.h"
#include "loader/batch_pipeline.h"
#include "loader/loader.h"

namespace directgnn {

namespace {

LoaderSettings checked(LoaderSettings s) {
  check_batch_settings(s);
  DGNN_CHECK_ARG(!s.weighted, "weighted_sampling", "link batches do not use edge weights yet");
  DGNN_CHECK_ARG(!s.sources_in_place, "sources_in_place",
                 "link batches gather every input row; leave it off");
  return s;
}

SamplerOptions link_sampler_options(const LoaderSettings& s) {
  SamplerOptions o;
  o.fanouts = s.fanouts;
  o.mode = s.sample_mode;
  o.device = s.gpu_sampler ? s.device : c10::Device(c10::kCPU);
  o.graph = s.graph;
  o.edge_ids = s.edge_ids;
  return o;
}

// The batch's pair indices and labels on `device` (the blocks go by blocks_to).
void pairs_to(LinkBatch& b, c10::Device device) {
  for (at::Tensor* t :
       {&b.edge_label_index, &b.edge_label, &b.src_index, &b.dst_pos_index, &b.dst_neg_index}) {
    if (t->defined()) *t = t->to(device);
  }
}

}  // namespace

std::vector<at::Tensor> LinkMinibatch::tensors() const {
  std::vector<at::Tensor> all{x, batch.sample.seeds, batch.sample.input_nodes};
  for (const at::Tensor& t : {batch.edge_label_index, batch.edge_label, batch.src_index,
                              batch.dst_pos_index, batch.dst_neg_index}) {
    if (t.defined()) all.push_back(t);
  }
  for (const Block& b : batch.sample.blocks) {
    all.insert(all.end(), {b.indptr, b.indices, b.src_degree, b.dst_degree});
    if (b.edge_ids.defined()) all.push_back(b.edge_ids);
  }
  return all;
}

LinkLoader::LinkLoader(const Dataset& dataset, const CsrGraph& graph, LoaderSettings settings,
                       LinkSamplerOptions link)
    : settings_(checked(std::move(settings))),
      sampler_(graph, link_sampler_options(settings_), link),
      store_(make_feature_store(dataset, settings_)),
      num_rows_(dataset.num_nodes()) {
  refuse_lookahead_cache(settings_, "link prediction");
  DGNN_CHECK(graph.num_nodes() == dataset.num_nodes(),
             "link loader: the message-passing graph has ", graph.num_nodes(),
             " nodes, the dataset ", dataset.num_nodes());
}

LinkLoader::~LinkLoader() = default;

int64_t LinkLoader::steps(int64_t num_positives) const {
  return (num_positives + settings_.batch_size - 1) / settings_.batch_size;
}

std::string LinkLoader::mode() const {
  return exchange_ == nullptr ? loader_mode(settings_, store_)
                              : sharded_loader_mode(settings_, *exchange_);
}

void LinkLoader::use_exchange(std::shared_ptr<FeatureExchange> exchange) {
  check_exchange(settings_, store_, num_rows_, *exchange);
  exchange_ = std::move(exchange);
}

LinkMinibatch LinkLoader::prepare(const at::Tensor& positives, uint64_t sample_seed) const {
  LinkMinibatch m;
  if (!settings_.gpu()) {
    auto t = Clock::now();
    m.batch = sampler_.sample(positives, sample_seed);
    m.sample_s = seconds_since(t);
    t = Clock::now();
    m.x = exchange_ != nullptr ? exchange_->gather(m.batch.sample.input_nodes)
                               : store_.gather(m.batch.sample.input_nodes);
    m.gather_s = seconds_since(t);
    return m;
  }
  // On this worker's side stream: the GPU sampler's batch, or the CPU's copied over; then the
  // rows gathered onto the GPU by the settings' method.
  const int index = settings_.index();
  m.ticket = gpu::run_on_side_stream(index, [&] {
    auto t = Clock::now();
    m.batch = sampler_.sample(positives, sample_seed);
    if (!settings_.gpu_sampler) {
      blocks_to(m.batch.sample, settings_.device, settings_.sample_mode);
      pairs_to(m.batch, settings_.device);
    }
    gpu::synchronize_current_stream(index);
    m.sample_s = seconds_since(t);
    t = Clock::now();
    // A sharded table's rows come over the exchange, on its device, then to this one.
    m.x = exchange_ != nullptr
              ? exchange_->gather(m.batch.sample.input_nodes.to(at::kCPU).to(at::kLong),
                                  settings_.device)
              : store_.gather(m.batch.sample.input_nodes, settings_.device, settings_.gather);
    gpu::synchronize_current_stream(index);
    m.gather_s = seconds_since(t);
  });
  return m;
}

LinkLoader::Epoch LinkLoader::epoch(at::Tensor positives,
                                    std::function<uint64_t(int64_t)> sample_seed,
                                    int64_t first_step) const {
  return Epoch(*this, std::move(positives), std::move(sample_seed), first_step);
}

LinkLoader::Epoch::Epoch(const LinkLoader& loader, at::Tensor positives,
                         std::function<uint64_t(int64_t)> sample_seed, int64_t first_step)
    : gpu_(loader.settings_.gpu()) {
  DGNN_CHECK(positives.dim() == 2 && positives.size(1) == 2 && positives.device().is_cpu(),
             "link loader: positives must be an [E, 2] CPU tensor");
  const LoaderSettings& s = loader.settings_;
  const int64_t end = loader.steps(positives.size(0));
  pipeline_ = batch_pipeline<LinkMinibatch>(
      std::move(positives), s.batch_size, first_step, end,
      {s.prefetch, s.workers, s.worker_threads, loader.exchange_ != nullptr},
      std::move(sample_seed),
      [&loader](const at::Tensor& rows, uint64_t seed) { return loader.prepare(rows, seed); });
}

LinkLoader::Epoch::Epoch(Epoch&&) noexcept = default;
LinkLoader::Epoch& LinkLoader::Epoch::operator=(Epoch&&) noexcept = default;
LinkLoader::Epoch::~Epoch() = default;

bool LinkLoader::Epoch::done() const { return pipeline_->done(); }

LinkMinibatch LinkLoader::Epoch::next() {
  LinkMinibatch m = pipeline_->next();
  if (gpu_) gpu::wait_on_current_stream(m.ticket, m.tensors());
  return m;
}

}  // namespace directgnn
