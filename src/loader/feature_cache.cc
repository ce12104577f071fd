#include "loader/feature_cache.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "core/progress.h"
#include "core/random.h"
#include "core/resources.h"
#include "directgnn/error.h"

namespace directgnn {
namespace {

template <typename Id>
void count_ids(const Id* ids, int64_t n, int64_t* counts) {
  for (int64_t i = 0; i < n; ++i) ++counts[static_cast<int64_t>(ids[i])];
}

// Ids by `key` (int64 [N]), highest first; a stable sort keeps ties in id order.
at::Tensor rank_by(const at::Tensor& key) {
  return std::get<1>(key.sort(/*stable=*/true, /*dim=*/0, /*descending=*/true));
}

std::function<void(int64_t, int64_t)> progress_of(Progress* bar) {
  if (bar == nullptr) return {};
  return [bar](int64_t done, int64_t) { bar->update(done); };
}

}  // namespace

at::Tensor in_degrees(const CsrGraph& graph) {
  at::Tensor counts = at::zeros({graph.num_nodes()}, at::kLong);
  int64_t* c = counts.data_ptr<int64_t>();
  if (graph.indices.scalar_type() == at::kInt) {
    count_ids(graph.indices.data_ptr<int32_t>(), graph.num_edges(), c);
  } else {
    count_ids(graph.indices.data_ptr<int64_t>(), graph.num_edges(), c);
  }
  return counts;
}

at::Tensor rank_rows_by_degree(const CsrGraph& graph) { return rank_by(in_degrees(graph)); }

at::Tensor rank_rows_by_degree(const at::Tensor& in_degree) { return rank_by(in_degree); }

Presample node_presample(const MinibatchLoader& loader, const at::Tensor& seeds, uint64_t seed) {
  const int64_t batch = loader.settings().batch_size;
  return {loader.steps(seeds.numel()), [&loader, seeds, seed, batch](int64_t step) {
            const int64_t start = step * batch;
            const at::Tensor part = seeds.narrow(0, start, std::min(batch, seeds.numel() - start));
            return loader.sample(part, mix64(seed, 0xcac4e, step)).input_nodes;
          }};
}

at::Tensor presample_counts(const MinibatchLoader& loader, const CsrGraph& graph,
                            const at::Tensor& seeds, uint64_t seed,
                            const std::function<void(int64_t, int64_t)>& progress) {
  return presample_counts(node_presample(loader, seeds, seed), graph.num_nodes(), progress);
}

at::Tensor presample_counts(const Presample& presample, int64_t num_rows,
                            const std::function<void(int64_t, int64_t)>& progress) {
  at::Tensor counts = at::zeros({num_rows}, at::kLong);
  for (int64_t step = 0; step < presample.steps; ++step) {
    const at::Tensor inputs = presample.inputs_of(step).cpu().to(at::kLong).contiguous();
    count_ids(inputs.data_ptr<int64_t>(), inputs.numel(), counts.data_ptr<int64_t>());
    if (progress) progress(step + 1, presample.steps);
  }
  return counts;
}

at::Tensor rank_rows_by_counts(const at::Tensor& counts, const CsrGraph& graph) {
  return rank_rows_by_counts(counts, in_degrees(graph));
}

at::Tensor rank_rows_by_counts(const at::Tensor& counts, const at::Tensor& degree) {
  // Count first, degree second: count * (max degree + 1) + degree (no overflow: both are
  // below 2^31 for any graph whose ids fit a cache slot, and counts are minibatches).
  const int64_t span = degree.numel() > 0 ? degree.max().item<int64_t>() + 1 : 1;
  return rank_by(counts * span + degree);
}

std::string fill_feature_cache(FeatureStore& store, const CsrGraph& graph,
                               const Presample& presample, const disk::CacheOptions& options,
                               bool show_progress, const CacheScope& scope) {
  const at::Tensor degree = scope.in_degree.defined() ? scope.in_degree : in_degrees(graph);
  const auto start = std::chrono::steady_clock::now();
  const int64_t row_bytes = std::max<int64_t>(store.row_bytes(), 1);
  const int64_t num_rows = scope.end < 0 ? graph.num_nodes() : scope.end - scope.begin;
  // At most the whole table (a larger budget, even inf, caches every row).
  const double wanted = std::min(options.gib * static_cast<double>(int64_t{1} << 30),
                                 static_cast<double>(num_rows) * row_bytes);
  const auto bytes = static_cast<int64_t>(wanted);
  const int64_t cache_bytes = bytes / row_bytes * row_bytes;
  const HostMemory memory = host_memory();
  DGNN_CHECK_ARG(memory.available == 0 || cache_bytes < memory.available, "feature_cache_gib",
                 options.gib, " asks for ", gib_text(cache_bytes), " of RAM, but only ",
                 gib_text(memory.available), " are available; give a smaller cache");
  std::string how = "by in-degree";
  at::Tensor ranked;
  if (options.ranking == disk::CacheRanking::kDegree) {
    ranked = rank_rows_by_degree(degree);
  } else {
    Progress bar("Pre-sampling for the feature cache", show_progress ? presample.steps : -1);
    const at::Tensor counts = presample_counts(presample, graph.num_nodes(), progress_of(&bar));
    bar.finish();
    ranked = rank_rows_by_counts(counts, degree);
    how = "by pre-sampling " + std::to_string(presample.steps) +
          (presample.steps == 1 ? " minibatch" : " minibatches");
  }
  if (scope.end >= 0) {
    const at::Tensor mine = at::logical_and(ranked >= scope.begin, ranked < scope.end);
    ranked = ranked.index_select(0, at::nonzero(mine).squeeze(1)) - (scope.begin - scope.first_row);
  }
  Progress bar("Filling the feature cache (rows)", show_progress ? bytes / row_bytes : -1);
  store.cache_hot_rows(ranked, bytes, progress_of(&bar), options.policy);
  bar.finish();
  const int64_t rows = store.row_cache()->rows();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  char line[256];
  std::snprintf(
      line, sizeof(line), "Feature cache: %s, %lld rows (%.1f%% of %s), ranked %s",
      size_text(rows * row_bytes).c_str(), static_cast<long long>(rows),
      100.0 * static_cast<double>(rows) / static_cast<double>(std::max<int64_t>(1, num_rows)),
      scope.end < 0 ? "the table" : "this rank's part", how.c_str());
  std::string text = line;
  std::snprintf(line, sizeof(line), ", ready in %.1f s", seconds);
  return text + cache_policy_text(options) + line;
}

std::string fill_feature_cache(MinibatchLoader& loader, const Dataset& ds,
                               const at::Tensor& presample_seeds, uint64_t seed,
                               const disk::CacheOptions& options, bool show_progress) {
  return fill_feature_cache(loader.mutable_store(), ds.graph,
                            node_presample(loader, presample_seeds, seed), options, show_progress);
}

std::string cache_policy_text(const disk::CacheOptions& options) {
  switch (options.policy) {
    case disk::CachePolicy::kSieve:
      return ", then kept by sieve";
    case disk::CachePolicy::kLookahead:
      return ", then kept by their next use " + std::to_string(options.lookahead_batches) +
             (options.lookahead_batches == 1 ? " batch" : " batches") + " ahead";
    default:
      return "";
  }
}

DiskTally DiskTally::of(const FeatureStore& store) {
  DiskTally t;
  const disk::RowFile* file = store.row_file();
  if (file == nullptr) return t;
  const disk::RowFile::Counters f = file->counters();
  t.bytes_asked = f.bytes_read;
  t.read_s = f.read_s;
  if (const disk::RowCache* cache = store.row_cache()) {
    const disk::RowCache::Counters c = cache->counters();
    t.rows_gathered = c.rows_requested;
    t.rows_hit = c.rows_hit;
  } else {
    t.rows_gathered = f.rows_requested;
  }
  t.bytes_gathered = t.rows_gathered * file->row_bytes();
  t.distinct_rows = store.distinct_rows_gathered();
  t.distinct_bytes_missed = file->distinct_rows_read() * file->row_bytes();
  t.bytes_from_disk = process_read_bytes();
  return t;
}

DiskTally DiskTally::since(const DiskTally& before) const {
  DiskTally d;
  d.rows_gathered = rows_gathered - before.rows_gathered;
  d.bytes_gathered = bytes_gathered - before.bytes_gathered;
  d.rows_hit = rows_hit - before.rows_hit;
  d.bytes_asked = bytes_asked - before.bytes_asked;
  d.bytes_from_disk = bytes_from_disk < 0 || before.bytes_from_disk < 0
                          ? -1
                          : bytes_from_disk - before.bytes_from_disk;
  d.read_s = read_s - before.read_s;
  d.distinct_rows = distinct_rows;
  d.distinct_bytes_missed = distinct_bytes_missed;
  return d;
}

DiskTally DiskTally::sum(const std::vector<DiskTally>& tallies) {
  DiskTally s;
  for (const DiskTally& t : tallies) {
    s.rows_gathered += t.rows_gathered;
    s.bytes_gathered += t.bytes_gathered;
    s.rows_hit += t.rows_hit;
    s.bytes_asked += t.bytes_asked;
    s.read_s += t.read_s;
    s.distinct_rows += t.distinct_rows;
    s.distinct_bytes_missed += t.distinct_bytes_missed;
  }
  if (!tallies.empty()) s.bytes_from_disk = tallies.front().bytes_from_disk;
  return s;
}

double DiskTally::hit_rate() const {
  return rows_gathered > 0 ? static_cast<double>(rows_hit) / static_cast<double>(rows_gathered)
                           : 0.0;
}

void DiskTally::write_to(nlohmann::json& record, bool process) const {
  record["disk_bytes_gathered"] = bytes_gathered;
  record["disk_bytes_asked"] = bytes_asked;
  if (process) {
    record["disk_bytes_read"] = bytes_from_disk >= 0 ? nlohmann::json(bytes_from_disk) : nullptr;
  }
  record["disk_cache_hit_rate"] = hit_rate();
  record["disk_read_s"] = read_s;
  record["disk_distinct_rows"] = distinct_rows;
  record["disk_distinct_bytes_missed"] = distinct_bytes_missed;
}

std::string DiskTally::text() const {
  char from_disk[32] = "n/a";
  if (bytes_from_disk >= 0)
    std::snprintf(from_disk, sizeof(from_disk), "%.2f GB",
                  static_cast<double>(bytes_from_disk) / 1e9);
  char line[200];
  std::snprintf(line, sizeof(line),
                " | Disk: rows %.2f GB, cache hits %.1f%%, asked %.2f GB, process read %s, "
                "reads %.1f s",
                static_cast<double>(bytes_gathered) / 1e9, 100.0 * hit_rate(),
                static_cast<double>(bytes_asked) / 1e9, from_disk, read_s);
  return line;
}

CacheScope owner_cache_scope(const Dataset& ds, int rank, const FeatureExchange& exchange) {
  CacheScope scope;
  scope.begin = ds.partition.offsets[rank];
  scope.end = ds.partition.offsets[rank + 1];
  scope.first_row = exchange.first_row();
  return scope;
}

}  // namespace directgnn
