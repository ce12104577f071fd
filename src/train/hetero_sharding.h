// A heterogeneous dataset's feature tables sharded over a run's ranks (TrainOptions::
// shard_features on a dataset `directgnn partition` made with one part per rank): each rank
// holds its part's rows of every featured type, and every batch's rows of each type come over
// that type's FeatureExchange (dist/feature_exchange.h), one per type, each on a group of its
// own, taken in type order. Internal to train/.
#pragma once

#include <ATen/Tensor.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dist/feature_exchange.h"
#include "graph/hetero_graph.h"
#include "loader/hetero_stores.h"
#include "loader/options.h"
#include "train/sharding.h"
#include "train/trainer.h"

namespace directgnn {

using HeteroExchanges = std::vector<std::shared_ptr<FeatureExchange>>;  // per type; null: none

// Whether the run shards: a partitioned dataset with one part per rank, every featured type's
// owner serving its rows from host or pinned memory, or from disk with its cache. Throws
// naming the option when sharding is asked for (or forced, by a rank that loaded its parts'
// rows only) and the run cannot.
bool shards_hetero_features(const TrainOptions& o, const HeteroDataset& ds,
                            const LoaderSettings& s);

// One exchange per featured type, serving this rank's rows from the type's store in `stores`.
HeteroExchanges make_hetero_exchanges(const HeteroDataset& ds, const TrainOptions& o,
                                      const HeteroStores& stores);

// The copies of remote rows (remote_cache_gib), one budget for every type: the rows of the
// highest in-degree nodes over every relation they start, across the types, that other ranks
// own. A collective (one gather per type). Returns the header's words on it.
std::string fill_hetero_remote_cache(const HeteroExchanges& exchanges, const HeteroDataset& ds,
                                     const TrainOptions& o);

// A heterogeneous run's loader settings (resolve_hetero_loader with `sampling`); a sharded
// run's batches are prepared by one worker, in step order, as every gather is a collective.
LoaderSettings hetero_run_settings(const TrainOptions& o, const HeteroDataset& ds,
                                   const HeteroSampling& sampling);

// A run's sharded tables, or none when it does not shard: make_hetero_exchanges put to
// `stores`, and their copies of remote rows filled when remote_cache_gib asks (the header's
// words on it in `cache_text`). Collectives.
HeteroExchanges shard_hetero_tables(const HeteroDataset& ds, const TrainOptions& o,
                                    HeteroStores& stores, std::string& cache_text);

// Positions of the training items (a seed, or a positive edge) whose node of type `type`,
// `owner_ids`, this rank's part owns, and the count every rank takes each epoch
// (train/sharding.h, part_share); `what` names the items in the error when a part owns none.
PartShare hetero_part_share(const HeteroDataset& ds, int type, const at::Tensor& owner_ids,
                            int rank, int ranks, const std::string& what);

// The epoch record's "exchange" (every type's exchanges this epoch, summed) and
// "exchange_types" (each type's), and the epoch line's remote fraction and megabytes received.
void write_hetero_exchange_counts(const HeteroExchanges& exchanges, const HeteroDataset& ds,
                                  nlohmann::json& record, std::string& text);
void clear_hetero_exchange_counts(const HeteroExchanges& exchanges);

// "Sharded features: 2 parts (metis) of paper, seeds by part, evaluation sampled; a copy of
// 187 remote rows here\n".
std::string hetero_sharding_header(const HeteroDataset& ds, const TrainOptions& o,
                                   const HeteroExchanges& exchanges, const std::string& cache);

}  // namespace directgnn
