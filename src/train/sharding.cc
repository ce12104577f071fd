#include "train/sharding.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdio>

#include "directgnn/error.h"

namespace directgnn {
namespace {

// Throws naming `parameter` unless the run has one rank per part of a partitioned dataset.
void check_one_part_per_rank(const char* parameter, const TrainOptions& o, const Dataset& ds) {
  const int ranks = o.group != nullptr ? o.group->size() : 1;
  const int64_t parts = ds.partition.parts();
  DGNN_CHECK_ARG(ranks > 1 && parts == ranks, parameter,
                 "needs a partitioned dataset (directgnn partition) with one part per rank: ",
                 ds.name, " has ", parts, " part(s), the run ", ranks, " rank(s)");
}

}  // namespace

bool exchanges_on_gpu(const TrainOptions& o, const LoaderSettings& s) {
  if (o.exchange_device == ExchangeDevice::kCpu) return false;
  const bool nccl = o.group != nullptr && o.group->backend() == DistBackend::kNccl;
  if (o.exchange_device == ExchangeDevice::kAuto) return s.gpu() && nccl;
  DGNN_CHECK_ARG(s.gpu(), "exchange_device",
                 "gpu lands the exchanged rows in a GPU's memory, but this run trains on the "
                 "CPU; use cpu or auto");
  return true;
}

bool shards_features(const TrainOptions& o, const Dataset& ds, const LoaderSettings& s) {
  if (o.shard_features == FeatureSharding::kOff) return false;
  const int ranks = o.group != nullptr ? o.group->size() : 1;
  const int64_t parts = ds.partition.parts();
  const bool fits = ranks > 1 && parts == ranks;
  // An owner serves rows from its table in host, pinned or disk placement, or, when the rows
  // cross on the GPU, from its own GPU's memory.
  const bool supported = s.features != Placement::kDevice || exchanges_on_gpu(o, s);
  // A rank that loaded its part's rows only (a table stored by part) must shard.
  const bool partial = ds.feature_part >= 0;
  // auto leaves a whole table that is in each GPU's memory anyway replicated: its rows are
  // local.
  if (o.shard_features == FeatureSharding::kAuto && !partial) {
    return fits && s.features != Placement::kDevice;
  }
  check_one_part_per_rank("shard_features", o, ds);
  DGNN_CHECK_ARG(supported, "shard_features",
                 partial ? "auto: this rank holds only its part's feature rows (the dataset "
                           "stores them by part), and a sharded table "
                         : "on: a sharded table ",
                 "is served from GPU memory only when the rows cross on the GPU (exchange_device "
                 "gpu), else from host, pinned or disk placement; this run has features ",
                 placement_name(s.features), partial ? "; or partition with whole features" : "");
  DGNN_CHECK_ARG(s.cache.policy != disk::CachePolicy::kLookahead, "feature_cache_policy",
                 "lookahead plans a loader's own batches, but a sharded table's owner serves "
                 "every rank's; use sieve or static");
  return true;
}

bool shards_structure(const TrainOptions& o, const Dataset& ds) {
  const bool partial = ds.structure_part >= 0;
  if (o.shard_structure == FeatureSharding::kOff ||
      (o.shard_structure == FeatureSharding::kAuto && !partial)) {
    DGNN_CHECK_ARG(!partial, "shard_structure",
                   "off, but this rank holds only its part's edges (the dataset stores its "
                   "structure by part); leave it auto");
    return false;
  }
  check_one_part_per_rank("shard_structure", o, ds);
  DGNN_CHECK_ARG(o.loader.sampler != SamplerChoice::kGpu, "sampler",
                 "gpu, but a partitioned structure is sampled on the CPU (its hops are exchanged "
                 "there); use cpu or auto");
  DGNN_CHECK_ARG(o.loader.cache.policy != disk::CachePolicy::kLookahead, "feature_cache_policy",
                 "lookahead samples batches ahead of their turn, but a partitioned structure's "
                 "hops are collectives taken in step order; use sieve or static");
  return true;
}

std::shared_ptr<HopExchange> make_hop_exchange(const Dataset& ds, const TrainOptions& o) {
  return std::make_shared<HopExchange>(ds.partition.offsets, ds.graph, o.loader.weighted,
                                       o.group->subgroup("hops", true));
}

void write_hop_counts(const HopCounts& c, nlohmann::json& record, std::string& text) {
  const double remote = c.rows > 0 ? static_cast<double>(c.remote_rows) / c.rows : 0.0;
  record["sampling"] = {{"frontier_rows", c.rows},
                        {"remote_rows", c.remote_rows},
                        {"remote_row_fraction", remote},
                        {"bytes_sent", c.bytes_sent},
                        {"bytes_received", c.bytes_received},
                        {"seconds", c.seconds}};
  char line[96];
  std::snprintf(line, sizeof(line), " | Remote frontier %.1f%%", 100 * remote);
  text += line;
}

LoaderSettings sharded_loader_settings(LoaderSettings s, const TrainOptions& o) {
  return sharded_settings(std::move(s), o.loader.prefetch.has_value());
}

std::shared_ptr<FeatureExchange> make_exchange(const Dataset& ds, const TrainOptions& o,
                                               const LoaderSettings& s, const FeatureStore& table) {
  DGNN_CHECK_ARG(o.remote_cache_gib >= 0, "remote_cache_gib", "must not be negative, got ",
                 o.remote_cache_gib);
  const bool gpu = exchanges_on_gpu(o, s);
  auto exchange = part_exchange(ds, o.group->rank(), table, o.group->subgroup("features", !gpu));
  if (gpu) exchange->on_device(s.device, s.gather);
  return exchange;
}

at::Tensor whole_in_degrees(const Dataset& ds, ProcessGroup* group) {
  if (ds.structure_part < 0 || group == nullptr) return {};
  std::vector<at::Tensor> degree{in_degrees(ds.graph)};
  group->all_reduce_sum(degree);
  return degree[0];
}

CacheScope cache_scope(const Dataset& ds, const TrainOptions& o, const FeatureExchange* exchange,
                       const at::Tensor& in_degree) {
  CacheScope scope =
      exchange != nullptr ? owner_cache_scope(ds, o.group->rank(), *exchange) : CacheScope{};
  scope.in_degree = in_degree;
  return scope;
}

std::string fill_remote_cache(FeatureExchange& exchange, const TrainOptions& o,
                              const CsrGraph& graph, const Presample& presample,
                              const at::Tensor& in_degree) {
  const bool by_degree = o.loader.cache.ranking == disk::CacheRanking::kDegree;
  const at::Tensor degree = in_degree.defined() ? in_degree : in_degrees(graph);
  const at::Tensor ranked =
      by_degree ? rank_rows_by_degree(degree)
                : rank_rows_by_counts(presample_counts(presample, graph.num_nodes()), degree);
  const auto bytes = static_cast<double>(exchange.local().row_bytes());
  exchange.cache_remote_rows(ranked, static_cast<int64_t>(o.remote_cache_gib * (1 << 30) / bytes));
  return disk::cache_ranking_name(o.loader.cache.ranking);
}

at::Tensor owners_of(const Dataset& ds, const at::Tensor& ids) {
  const auto parts = static_cast<int>(ds.partition.parts());
  return PartOffsets(ds.partition.offsets, parts, ds.name.c_str()).owners(ids);
}

PartShare part_share(const at::Tensor& owner, int rank, int ranks, const std::string& what) {
  PartShare share;
  share.mine = at::nonzero(owner == rank).squeeze(1);
  const at::Tensor counts = at::bincount(owner, {}, ranks);
  share.count = counts.min().item<int64_t>();
  DGNN_CHECK(share.count > 0, "seed_assignment part: part ", counts.argmin().item<int64_t>(),
             " owns none of the split's ", owner.numel(), " ", what,
             "; partition with the run's split and seed, or assign seeds globally");
  return share;
}

void write_exchange_counts(const ExchangeCounts& c, nlohmann::json& record, std::string& text) {
  const double steps = std::max<int64_t>(1, c.gathers);
  const double remote = c.rows > 0 ? static_cast<double>(c.remote_rows) / c.rows : 0.0;
  record["exchange"] = {
      {"bytes_sent", c.bytes_sent},
      {"bytes_received", c.bytes_received},
      {"bytes_received_per_step", c.bytes_received / steps},
      {"seconds", c.seconds},
      {"rows", c.rows},
      {"remote_rows", c.remote_rows},
      {"remote_row_fraction", remote},
      {"cache_hits", c.cache_hits},
      {"cache_hit_rate",
       c.remote_rows > 0 ? static_cast<double>(c.cache_hits) / c.remote_rows : 0.0}};
  char line[128];
  std::snprintf(line, sizeof(line), " | Remote rows %.1f%%, %.1f MB in", 100 * remote,
                c.bytes_received / 1e6);
  text += line;
}

std::string sharding_header(const Dataset& ds, const TrainOptions& o,
                            const FeatureExchange& exchange, const std::string& cache_ranking) {
  return "Sharded features: " + std::to_string(ds.partition.parts()) + " parts (" +
         ds.partition.method + "), seeds by " + seed_assignment_name(o.seed_assignment) +
         ", a copy of " + std::to_string(exchange.cached_rows()) + " remote rows here" +
         (cache_ranking.empty() ? "" : " (by " + cache_ranking + ")") + "\n";
}

}  // namespace directgnn
