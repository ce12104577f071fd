// A feature table sharded over a run's ranks (TrainOptions::shard_features), as node
// classification and link prediction share it: whether the run shards, the exchange that
// fetches other ranks' rows, its replicated cache of remote rows, each part's own seeds, and
// what the epoch record and the header say. Internal to train/.
#pragma once

#include <ATen/Tensor.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "dist/feature_exchange.h"
#include "dist/hop_exchange.h"
#include "io/dataset.h"
#include "loader/feature_cache.h"
#include "loader/options.h"
#include "train/trainer.h"

namespace directgnn {

// Whether the run shards the feature table over its ranks: a partitioned dataset with one part
// per rank, each owner serving its rows from its table (host, pinned, or disk with its cache;
// GPU memory when the rows cross on the GPU). Throws naming the option when sharding is asked
// for (or forced, by a rank that holds only its part's rows) and the run cannot.
bool shards_features(const TrainOptions& o, const Dataset& ds, const LoaderSettings& s);

// Whether a sharded table's ids and rows cross on the GPU (TrainOptions::exchange_device) for
// a loader with settings `s`: auto, when the run trains on GPUs with an NCCL group; else as
// asked (gpu on a CPU run throws naming the option).
bool exchanges_on_gpu(const TrainOptions& o, const LoaderSettings& s);

// Whether a node run samples a partitioned structure (TrainOptions::shard_structure): one part
// per rank, each drawing its part's rows on the CPU sampler. Throws naming the option when it
// is asked for (or forced, by a rank that loaded only its part's structure) and cannot be.
bool shards_structure(const TrainOptions& o, const Dataset& ds);

// The hop exchange of a run that shards the structure (or null when it does not): this rank
// draws from the dataset's graph (its part's rows, or the whole graph, of which it then reads
// its part's rows only).
std::shared_ptr<HopExchange> make_hop_exchange(const Dataset& ds, const TrainOptions& o);

// The epoch record's "sampling" object (this rank's hop exchanges this epoch: frontier rows
// drawn, the fraction other ranks drew, bytes and seconds) and the epoch line's remote fraction.
void write_hop_counts(const HopCounts& c, nlohmann::json& record, std::string& text);

// A sharded run's loader settings: one worker prepares batches in step order, the next
// batch's exchange overlaps this one's step unless the prefetch depth was given, and a disk
// cache plans nothing ahead (its owner serves every rank's batches).
LoaderSettings sharded_loader_settings(LoaderSettings s, const TrainOptions& o);

// The exchange that serves this rank's rows from `table` (the loader's store: the whole table,
// or this part's rows when the dataset stores them by part; kept alive by the caller) and
// fetches the others' (on a group of its own, which the loader's worker uses while the
// training step all-reduces): on the loader's GPU when exchanges_on_gpu, over the run's
// backend, each owner gathering by the loader's method; else on the CPU over Gloo.
std::shared_ptr<FeatureExchange> make_exchange(const Dataset& ds, const TrainOptions& o,
                                               const LoaderSettings& s, const FeatureStore& table);

// The whole graph's in-degrees (int64 [N]) on a rank that holds its part's edges only: each
// rank's counts of its own edges, summed over `group` (a collective). Undefined when the
// dataset's graph is whole (its own counts are the whole graph's).
at::Tensor whole_in_degrees(const Dataset& ds, ProcessGroup* group);

// What this rank's disk cache ranks by (fill_feature_cache): the part of the table `exchange`
// serves (null: the whole table) and `in_degree` (whole_in_degrees).
CacheScope cache_scope(const Dataset& ds, const TrainOptions& o, const FeatureExchange* exchange,
                       const at::Tensor& in_degree);

// Fills the exchange's replicated copy of remote rows (remote_cache_gib): the rows `presample`
// (this rank's first epoch, sampled ahead) reads most or, with feature_cache_rank degree, those
// of the highest in-degree nodes (`in_degree`, or when undefined `graph`'s). A collective.
// Returns how the rows were ranked.
std::string fill_remote_cache(FeatureExchange& exchange, const TrainOptions& o,
                              const CsrGraph& graph, const Presample& presample,
                              const at::Tensor& in_degree = {});

// Positions (int64) of the entries of `owner` (the owning rank of each training item) that
// `rank` owns, and the count every rank takes each epoch: the fewest any rank owns, so every
// rank takes the same number of steps. `what` names the items in the error when a part owns
// none.
// The owning part of each of `ids` (int64) by the dataset's partition book.
at::Tensor owners_of(const Dataset& ds, const at::Tensor& ids);
struct PartShare {
  at::Tensor mine;
  int64_t count = 0;
};
PartShare part_share(const at::Tensor& owner, int rank, int ranks, const std::string& what);

// The epoch record's "exchange" object (this rank's exchanges this epoch) and the epoch line's
// remote fraction and megabytes received.
void write_exchange_counts(const ExchangeCounts& c, nlohmann::json& record, std::string& text);

// "Sharded features: 2 parts (metis), seeds by part, a copy of 187 remote rows here (by
// presample)\n".
std::string sharding_header(const Dataset& ds, const TrainOptions& o,
                            const FeatureExchange& exchange, const std::string& cache_ranking);

}  // namespace directgnn
