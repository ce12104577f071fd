// The hot-row cache of a disk feature table (--feature-cache-gib): which rows to keep in RAM,
// filling it before training, and the per-epoch disk figures (--features disk).
//
// Rankings (the rows put first are cached, as many as fit):
//   presample  one pass of the neighbour sampler over the training seeds, before training,
//              counts in how many minibatches each row is an input node; most first, ties by
//              degree (GNNLab's pre-sampling).
//   degree     rows by how often they are a neighbour in the graph (in-degree), most first.
// Ties keep id order, so a ranking is deterministic.
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "feature/disk/row_cache.h"
#include "graph/csr_graph.h"
#include "loader/loader.h"

namespace directgnn {

// In-degree of every node (appearances in `indices`), int64 [N].
at::Tensor in_degrees(const CsrGraph& graph);

// Row ids, int64 [N], by degree, highest first (`in_degree`: in_degrees' result, or the
// whole graph's of a rank that holds one part's edges).
at::Tensor rank_rows_by_degree(const CsrGraph& graph);
at::Tensor rank_rows_by_degree(const at::Tensor& in_degree);

// Per node, int64 [N]: in how many minibatches of one pass over `seeds` (in this order, in
// minibatches of the loader's batch size, sampled with streams derived from `seed`) it is an
// input node. `progress(done, total)` is told the minibatches sampled.
at::Tensor presample_counts(const MinibatchLoader& loader, const CsrGraph& graph,
                            const at::Tensor& seeds, uint64_t seed,
                            const std::function<void(int64_t, int64_t)>& progress = {});

// Row ids, int64 [N], by presample_counts, highest first, ties by degree.
at::Tensor rank_rows_by_counts(const at::Tensor& counts, const CsrGraph& graph);
at::Tensor rank_rows_by_counts(const at::Tensor& counts, const at::Tensor& in_degree);

// Ranks and fills the loader's cache (showing progress when `show_progress`); returns the line
// the run's header prints, e.g. "Feature cache: 12.00 GiB, 3145728 rows (37.5% of the table),
// ranked by pre-sampling 82 minibatches, ready in 60.9 s". The budget is checked (non-negative)
// by the trainer's options.
std::string fill_feature_cache(MinibatchLoader& loader, const Dataset& ds,
                               const at::Tensor& presample_seeds, uint64_t seed,
                               const disk::CacheOptions& options, bool show_progress);

// How the cache keeps its rows after the fill, for the header line: "" (static), ", then kept
// by sieve" or ", then kept by their next use 8 batches ahead".
std::string cache_policy_text(const disk::CacheOptions& options);

// The same for any loader: `store` is its table (rows of `graph`'s nodes); presampling takes
// `steps` minibatches, `inputs_of(step)` giving the input nodes of one (int64, CPU).
struct Presample {
  int64_t steps = 0;
  std::function<at::Tensor(int64_t step)> inputs_of;
};
// What a rank of a partitioned dataset ranks by (train/sharding.h): of a table sharded over
// ranks, only the global ids in [begin, end), each the store's row id - begin + first_row
// (end < 0: every row); of a structure held by part, the whole graph's in-degrees (int64 [N];
// undefined: the graph's own).
struct CacheScope {
  int64_t begin = 0, end = -1, first_row = 0;
  at::Tensor in_degree;
};
std::string fill_feature_cache(FeatureStore& store, const CsrGraph& graph,
                               const Presample& presample, const disk::CacheOptions& options,
                               bool show_progress, const CacheScope& scope = {});
// The scope of rank `rank`'s cache when it owns its part of `ds`'s table and serves it through
// `exchange`: that part's rows, where the exchange finds them in its store.
CacheScope owner_cache_scope(const Dataset& ds, int rank, const FeatureExchange& exchange);
// One pass of `loader` over `seeds` (in this order, in minibatches of its batch size, sampled
// with streams derived from `seed`), as presample_counts above takes it; `loader` must outlive it.
Presample node_presample(const MinibatchLoader& loader, const at::Tensor& seeds, uint64_t seed);
// Per row, int64 [num_rows]: in how many of `presample`'s minibatches it is an input node;
// `progress(done, total)` is told the minibatches sampled.
at::Tensor presample_counts(const Presample& presample, int64_t num_rows,
                            const std::function<void(int64_t, int64_t)>& progress = {});

// The disk placement's counters at one moment; differences give an epoch's figures.
struct DiskTally {
  int64_t rows_gathered = 0;  // rows asked of the table (repeats counted)
  int64_t bytes_gathered = 0;
  int64_t rows_hit = 0;         // of those, served by the cache
  int64_t bytes_asked = 0;      // bytes asked of the file for the misses (O_DIRECT: whole blocks)
  int64_t bytes_from_disk = 0;  // /proc/self/io read_bytes: what the storage delivered
  double read_s = 0;            // time the readers waited for reads, summed over threads
  // Since the stores' distinct counts were last cleared (not differences: since() keeps the
  // later one): distinct rows gathered, and the bytes of the distinct rows read from the file.
  int64_t distinct_rows = 0;
  int64_t distinct_bytes_missed = 0;

  static DiskTally of(const FeatureStore& store);
  DiskTally since(const DiskTally& before) const;
  // Several tables' together (the process's read bytes counted once: the first's).
  static DiskTally sum(const std::vector<DiskTally>& tallies);
  double hit_rate() const;
  // Adds disk_* fields to an epoch's JSON record (`process` false: the table's own only,
  // without the process's read bytes).
  void write_to(nlohmann::json& record, bool process = true) const;
  // " | Disk: rows 7.51 GB, cache hits 99.4%, asked 0.04 GB, process read 0.04 GB,
  // reads 2.4 s"
  std::string text() const;
};

}  // namespace directgnn
