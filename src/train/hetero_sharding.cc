#include "train/hetero_sharding.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdio>

#include "directgnn/error.h"
#include "dist/part_offsets.h"
#include "loader/loader.h"

namespace directgnn {
namespace {

bool holds_one_part(const HeteroDataset& ds) {
  return std::any_of(ds.node_types.begin(), ds.node_types.end(),
                     [](const NodeType& t) { return t.feature_part >= 0; });
}

// Throws naming shard_features unless the run has one rank per part of a partitioned dataset.
void check_part_per_rank(const TrainOptions& o, const HeteroDataset& ds) {
  const int ranks = o.group != nullptr ? o.group->size() : 1;
  DGNN_CHECK_ARG(ranks > 1 && ds.parts() == ranks, "shard_features",
                 "needs a partitioned dataset (directgnn partition) with one part per rank: ",
                 ds.name, " has ", ds.parts(), " part(s), the run ", ranks, " rank(s)");
}

// The first featured type whose table is in GPU memory, or -1.
int type_in_gpu_memory(const HeteroDataset& ds, const LoaderSettings& s) {
  for (size_t t = 0; t < ds.node_types.size(); ++t) {
    if (ds.node_types[t].has_features() && s.type_features[t] == Placement::kDevice) {
      return static_cast<int>(t);
    }
  }
  return -1;
}

}  // namespace

bool shards_hetero_features(const TrainOptions& o, const HeteroDataset& ds,
                            const LoaderSettings& s) {
  if (o.shard_features == FeatureSharding::kOff) return false;
  const int ranks = o.group != nullptr ? o.group->size() : 1;
  const bool fits = ranks > 1 && ds.parts() == ranks;
  const bool partial = holds_one_part(ds);
  const int on_device = type_in_gpu_memory(ds, s);
  // auto leaves whole tables that are in each GPU's memory anyway replicated.
  if (o.shard_features == FeatureSharding::kAuto && !partial) return fits && on_device < 0;
  check_part_per_rank(o, ds);
  // An owner serves its rows from host or pinned memory, from disk through its cache (which
  // ranks the rows of its part that every rank's batches read, hetero_stores.h), or from GPU
  // memory when the rows cross on the GPU.
  DGNN_CHECK_ARG(on_device < 0 || exchanges_on_gpu(o, s), "shard_features",
                 partial ? "auto: this rank holds only its part's feature rows (the dataset "
                           "stores them by part), but "
                         : "on, but ",
                 "node type '",
                 on_device < 0 ? "" : ds.node_types[static_cast<size_t>(on_device)].name,
                 "' has features device; a sharded table is served from GPU memory only when the "
                 "rows cross on the GPU (exchange_device gpu), else from host, pinned or disk "
                 "placement",
                 partial ? "; or partition with whole features" : "");
  DGNN_CHECK_ARG(s.cache.policy != disk::CachePolicy::kLookahead, "feature_cache_policy",
                 "lookahead plans a loader's own batches, but a sharded table's owner serves "
                 "every rank's; use sieve or static");
  return true;
}

HeteroExchanges make_hetero_exchanges(const HeteroDataset& ds, const TrainOptions& o,
                                      const HeteroStores& stores) {
  DGNN_CHECK_ARG(o.remote_cache_gib >= 0, "remote_cache_gib", "must not be negative, got ",
                 o.remote_cache_gib);
  const LoaderSettings& s = stores.settings();
  const bool gpu = exchanges_on_gpu(o, s);
  HeteroExchanges exchanges = hetero_part_exchanges(
      ds, o.group->rank(), stores,
      [&o, gpu](const std::string& type) { return o.group->subgroup("features-" + type, !gpu); });
  for (size_t t = 0; gpu && t < exchanges.size(); ++t) {
    if (exchanges[t] != nullptr) exchanges[t]->on_device(s.device, stores.gather_options(t));
  }
  return exchanges;
}

std::string fill_hetero_remote_cache(const HeteroExchanges& exchanges, const HeteroDataset& ds,
                                     const TrainOptions& o) {
  // Every remote row of every type, hottest first: in-degree, then type order, then id.
  std::vector<at::Tensor> degree, type, id, bytes;
  for (size_t t = 0; t < exchanges.size(); ++t) {
    if (exchanges[t] == nullptr) continue;
    const at::Tensor ids = at::arange(ds.node_types[t].count, at::kLong);
    const at::Tensor remote = at::nonzero(exchanges[t]->owners(ids).ne(o.group->rank())).squeeze(1);
    degree.push_back(hetero_in_degrees(ds, static_cast<int>(t)).index_select(0, remote));
    type.push_back(at::full({remote.numel()}, static_cast<int64_t>(t), at::kLong));
    id.push_back(remote);
    bytes.push_back(at::full({remote.numel()}, exchanges[t]->local().row_bytes(), at::kLong));
  }
  std::vector<at::Tensor> chosen(exchanges.size());
  if (!degree.empty()) {
    const at::Tensor all_type = at::cat(type), all_id = at::cat(id);
    // A stable sort by degree keeps type order, then id order, among equals.
    const at::Tensor order = std::get<1>(at::cat(degree).sort(/*stable=*/true, 0, true));
    const at::Tensor cumulative = at::cat(bytes).index_select(0, order).cumsum(0);
    const auto budget = static_cast<int64_t>(o.remote_cache_gib * static_cast<double>(1 << 30));
    const int64_t take = at::searchsorted(cumulative, at::full({1}, budget, at::kLong), false,
                                          /*right=*/true)
                             .item<int64_t>();
    const at::Tensor kept = order.narrow(0, 0, take);
    const at::Tensor kept_type = all_type.index_select(0, kept);
    for (size_t t = 0; t < exchanges.size(); ++t) {
      chosen[t] = all_id.index_select(0, kept).masked_select(kept_type == static_cast<int64_t>(t));
    }
  }
  for (size_t t = 0; t < exchanges.size(); ++t) {
    if (exchanges[t] == nullptr) continue;  // every rank has the same featured types
    const at::Tensor ranked = chosen[t].defined() ? chosen[t] : at::empty({0}, at::kLong);
    exchanges[t]->cache_remote_rows(ranked, ranked.numel());
  }
  return "by in-degree";
}

LoaderSettings hetero_run_settings(const TrainOptions& o, const HeteroDataset& ds,
                                   const HeteroSampling& sampling) {
  LoaderSettings s = resolve_hetero_loader(o.loader, ds, o.group, sampling);
  if (shards_hetero_features(o, ds, s)) s = sharded_settings(s, o.loader.prefetch.has_value());
  return s;
}

HeteroExchanges shard_hetero_tables(const HeteroDataset& ds, const TrainOptions& o,
                                    HeteroStores& stores, std::string& cache_text) {
  if (!shards_hetero_features(o, ds, stores.settings())) return {};
  HeteroExchanges exchanges = make_hetero_exchanges(ds, o, stores);
  stores.use_exchanges(exchanges);
  if (o.remote_cache_gib > 0) cache_text = fill_hetero_remote_cache(exchanges, ds, o);
  return exchanges;
}

PartShare hetero_part_share(const HeteroDataset& ds, int type, const at::Tensor& owner_ids,
                            int rank, int ranks, const std::string& what) {
  const NodeType& t = ds.node_types[static_cast<size_t>(type)];
  const PartOffsets offsets(t.partition.offsets, static_cast<int>(ds.parts()), t.name.c_str());
  return part_share(offsets.owners(owner_ids.to(at::kLong).contiguous()), rank, ranks, what);
}

void write_hetero_exchange_counts(const HeteroExchanges& exchanges, const HeteroDataset& ds,
                                  nlohmann::json& record, std::string& text) {
  ExchangeCounts total;
  nlohmann::json types = nlohmann::json::object();
  for (size_t t = 0; t < exchanges.size(); ++t) {
    if (exchanges[t] == nullptr) continue;
    const ExchangeCounts c = exchanges[t]->counts();
    nlohmann::json one;
    std::string unused;
    write_exchange_counts(c, one, unused);
    types[ds.node_types[t].name] = one["exchange"];
    total.add_table(c);
  }
  write_exchange_counts(total, record, text);
  record["exchange_types"] = types;
}

void clear_hetero_exchange_counts(const HeteroExchanges& exchanges) {
  for (const auto& e : exchanges) {
    if (e != nullptr) e->clear_counts();
  }
}

std::string hetero_sharding_header(const HeteroDataset& ds, const TrainOptions& o,
                                   const HeteroExchanges& exchanges, const std::string& cache) {
  std::string types;
  int64_t cached = 0;
  for (size_t t = 0; t < exchanges.size(); ++t) {
    if (exchanges[t] == nullptr) continue;
    types += (types.empty() ? "" : ", ") + ds.node_types[t].name;
    cached += exchanges[t]->cached_rows();
  }
  return "Sharded features: " + std::to_string(ds.parts()) + " parts (" +
         ds.node_types[0].partition.method + ") of " + types + ", seeds by " +
         seed_assignment_name(o.seed_assignment) +
         ", evaluation sampled on every rank; a copy of " + std::to_string(cached) +
         " remote rows here" + (cache.empty() ? "" : " (" + cache + ")") + "\n";
}

}  // namespace directgnn
