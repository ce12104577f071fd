// The look-ahead cache (--feature-cache-policy lookahead): which rows it keeps given the batches
// planned ahead, that every row read is the file's, and that training through it is training.
#include <ATen/ATen.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "feature/feature_store.h"
#include "feature/npy_table_file.h"
#include "graph/rmat.h"
#include "io/dataset.h"
#include "io/npy.h"
#include "test_util.h"
#include "train/training_run.h"

namespace directgnn {
namespace {

FeatureStore cached_store(const std::string& path, const at::Tensor& ranked, int64_t rows,
                          disk::CachePolicy policy) {
  FeatureStore store = FeatureStore::on_disk(load_npy(path), path, {});
  store.cache_hot_rows(ranked, rows * store.row_bytes(), {}, policy);
  return store;
}

at::Tensor planned_gather(const FeatureStore& store, const at::Tensor& ids, int64_t generation,
                          int64_t step) {
  GatherOptions o;
  o.planned = {generation, step};
  return store.gather(ids, c10::Device(c10::kCPU), o);
}

TEST(LookaheadCache, KeepsTheRowsUsedSoonestAndLetsRowsUsedLaterPass) {
  const at::Tensor table = at::randn({10, 4});
  testing::TempDirectory dir;
  const std::string path = testing::npy_table_file(dir, table);
  // Two slots: rows 0 (ranked first) and 1.
  const FeatureStore store =
      cached_store(path, at::tensor({0, 1}, at::kLong), 2, disk::CachePolicy::kLookahead);
  const disk::RowCache& cache = *store.row_cache();
  const int64_t g = store.begin_plan();
  ASSERT_GE(g, 0);
  const std::vector<at::Tensor> batches{at::tensor({2}, at::kLong), at::tensor({3}, at::kLong),
                                        at::tensor({2, 0, 2}, at::kLong),
                                        at::tensor({4}, at::kLong), at::tensor({3}, at::kLong)};
  for (size_t s = 0; s < batches.size(); ++s) store.plan_gather(g, s, batches[s]);
  // Row 2 is used again at step 2; row 1 by no planned batch: 2 takes 1's slot.
  EXPECT_TRUE(planned_gather(store, batches[0], g, 0).equal(table.narrow(0, 2, 1)));
  EXPECT_TRUE(cache.contains(0) && cache.contains(2));
  EXPECT_FALSE(cache.contains(1));
  // Row 3 is next used at step 4, after both cached rows' next uses (0 and 2 at step 2): it
  // passes.
  EXPECT_TRUE(planned_gather(store, batches[1], g, 1).equal(table.narrow(0, 3, 1)));
  EXPECT_FALSE(cache.contains(3));
  EXPECT_TRUE(planned_gather(store, batches[2], g, 2)
                  .equal(table.index_select(0, at::tensor({2, 0, 2}, at::kLong))));
  // Now no planned batch uses 0 or 2; 4 is used by none after its own: it passes too.
  EXPECT_TRUE(planned_gather(store, batches[3], g, 3).equal(table.narrow(0, 4, 1)));
  EXPECT_TRUE(cache.contains(0) && cache.contains(2));
  EXPECT_TRUE(planned_gather(store, batches[4], g, 4).equal(table.narrow(0, 3, 1)));
  EXPECT_EQ(cache.counters().rows_requested, 7);
  EXPECT_EQ(cache.counters().rows_hit, 3);
  // An unplanned gather is served too, and changes nothing.
  EXPECT_TRUE(store.gather(at::tensor({5, 2}, at::kInt))
                  .equal(table.index_select(0, at::tensor({5, 2}, at::kLong))));
  EXPECT_FALSE(cache.contains(5));
}

TEST(LookaheadCache, EveryRowIsTheFilesAndItHitsMoreThanStaticAndSieve) {
  const int64_t rows = 400;
  const at::Tensor table = at::randn({rows, 8}).to(at::kHalf);
  testing::TempDirectory dir;
  const std::string path = testing::npy_table_file(dir, table);
  const FeatureStore host(table);
  // The ranking puts the rows this stream uses least first.
  const at::Tensor ranked = at::arange(rows - 1, -1, -1, at::kLong);
  at::manual_seed(3);
  std::vector<at::Tensor> batches;
  for (int b = 0; b < 60; ++b) {
    // A working set that drifts: batch b draws among rows [3b, 3b + 90), with repeats.
    batches.push_back(at::randint(3 * b, 3 * b + 90, {40}, at::kLong));
  }
  auto hit_rate = [](const FeatureStore& s) {
    const disk::RowCache::Counters c = s.row_cache()->counters();
    return static_cast<double>(c.rows_hit) / static_cast<double>(c.rows_requested);
  };
  const FeatureStore fixed = cached_store(path, ranked, 50, disk::CachePolicy::kStatic);
  const FeatureStore sieve = cached_store(path, ranked, 50, disk::CachePolicy::kSieve);
  const FeatureStore ahead = cached_store(path, ranked, 50, disk::CachePolicy::kLookahead);
  const int64_t g = ahead.begin_plan();
  const int64_t window = 4;
  for (int64_t s = 0; s < window && s < 60; ++s) ahead.plan_gather(g, s, batches[s]);
  for (int64_t s = 0; s < 60; ++s) {
    if (s + window < 60) ahead.plan_gather(g, s + window, batches[s + window]);
    const at::Tensor ids = s % 2 == 0 ? batches[s] : batches[s].to(at::kInt);
    const at::Tensor expected = host.gather(batches[s]);
    ASSERT_TRUE(planned_gather(ahead, ids, g, s).equal(expected)) << s;
    ASSERT_TRUE(fixed.gather(ids).equal(expected)) << s;
    ASSERT_TRUE(sieve.gather(ids).equal(expected)) << s;
  }
  EXPECT_LT(hit_rate(fixed), 0.05);
  EXPECT_GT(hit_rate(ahead), hit_rate(sieve));
  EXPECT_GT(hit_rate(ahead), 0.5);
  int64_t held = 0;
  for (int64_t id = 0; id < rows; ++id) held += ahead.row_cache()->contains(id);
  EXPECT_EQ(held, 50) << "the cache keeps its size";
}

TEST(LookaheadCache, RefusesBatchesOutOfOrderAndPlansOfAReplacedEpoch) {
  const at::Tensor table = at::randn({10, 4});
  testing::TempDirectory dir;
  const std::string path = testing::npy_table_file(dir, table);
  const FeatureStore store =
      cached_store(path, at::tensor({0}, at::kLong), 1, disk::CachePolicy::kLookahead);
  const int64_t first = store.begin_plan();
  store.plan_gather(first, 0, at::tensor({1, 2}, at::kLong));
  store.plan_gather(first, 1, at::tensor({3}, at::kLong));
  EXPECT_ERROR_CONTAINS(planned_gather(store, at::tensor({3}, at::kLong), first, 1),
                        "batch 1 is gathered out of the order planned (next planned: 0)");
  EXPECT_ERROR_CONTAINS(planned_gather(store, at::tensor({1}, at::kLong), first, 0),
                        "batch 0 was planned with 2 ids but gathers 1");
  EXPECT_ERROR_CONTAINS(store.plan_gather(first, 5, at::tensor({3}, at::kLong)),
                        "batch 5 planned after batch 1");
  const int64_t second = store.begin_plan();
  EXPECT_GT(second, first);
  EXPECT_ERROR_CONTAINS(store.plan_gather(first, 2, at::tensor({3}, at::kLong)),
                        "this loader's epoch was replaced by a newer one");
  store.plan_gather(second, 0, at::tensor({4}, at::kLong));
  EXPECT_TRUE(
      planned_gather(store, at::tensor({4}, at::kLong), second, 0).equal(table.narrow(0, 4, 1)));
  EXPECT_EQ(FeatureStore(table).begin_plan(), -1) << "a table in memory plans nothing";
  EXPECT_EQ(disk::parse_cache_policy("lookahead"), disk::CachePolicy::kLookahead);
  EXPECT_EQ(disk::cache_policy_name(disk::CachePolicy::kLookahead), "lookahead");
}

Dataset lookahead_rmat_dir(const testing::TempDirectory& dir) {
  RmatDatasetOptions o;
  o.graph.num_nodes = 1 << 11;
  o.graph.edge_factor = 8;
  o.feat_dim = 24;
  o.num_classes = 4;
  o.signal = 0.3;
  o.train_fraction = 0.3;
  o.val_fraction = 0.1;
  o.test_fraction = 0.2;
  save_dataset_dir(make_rmat_dataset(o), dir.file("ds"));
  return load_dataset_dir(dir.file("ds"));
}

TrainOptions lookahead_run(Placement placement) {
  TrainOptions t;
  t.loader.device = DeviceChoice::cpu();
  t.loader.features = placement;
  t.epochs = 3;
  t.loader.batch_size = 128;
  t.quiet = true;
  return t;
}

// Sampling ahead draws the same batches: the same parameters to the bit as the table in RAM,
// at any prefetch depth and window; and more hits than the static cache of the same size.
TEST(LookaheadCache, TrainsBitwiseLikeTheTableInMemoryAndHitsMoreThanStatic) {
  testing::TempDirectory dir;
  const Dataset ds = lookahead_rmat_dir(dir);
  const TrainReport expected = train(ds, lookahead_run(Placement::kHost), std::cout);
  const double gib = 300.0 * 24 * 4 / (1 << 30);  // 300 of 2048 rows
  TrainOptions fixed = lookahead_run(Placement::kDisk);
  fixed.loader.cache.gib = gib;
  fixed.loader.cache.policy = disk::CachePolicy::kStatic;
  const TrainReport static_run = train(ds, fixed, std::cout);
  for (const auto& [prefetch, window] : std::vector<std::pair<int, int>>{{0, 1}, {2, 8}, {1, 30}}) {
    TrainOptions o = lookahead_run(Placement::kDisk);
    o.loader.cache.gib = gib;
    o.loader.cache.policy = disk::CachePolicy::kLookahead;
    o.loader.cache.lookahead_batches = window;
    o.loader.prefetch = prefetch;
    const TrainReport r = train(ds, o, std::cout);
    EXPECT_EQ(r.param_digest, expected.param_digest) << prefetch << " " << window;
    EXPECT_GT(r.disk_cache_hit_rate, static_run.disk_cache_hit_rate) << window;
  }
  TrainOptions two = lookahead_run(Placement::kDisk);
  two.loader.cache.gib = gib;
  two.loader.cache.policy = disk::CachePolicy::kLookahead;
  two.loader.prefetch = 2;
  two.loader.workers = 2;
  EXPECT_ERROR_CONTAINS(train(ds, two, std::cout),
                        "sampler_workers: a look-ahead cache serves batches in the order");
  // auto looks ahead where the loader can (one worker on the CPU), and is static elsewhere.
  TrainOptions automatic = lookahead_run(Placement::kDisk);
  automatic.loader.cache.gib = gib;
  std::ostringstream out;
  automatic.quiet = false;
  const TrainReport by_default = train(ds, automatic, out);
  EXPECT_NE(out.str().find("then kept by their next use 8 batches ahead"), std::string::npos)
      << out.str();
  EXPECT_GT(by_default.disk_cache_hit_rate, static_run.disk_cache_hit_rate);
  automatic.loader.workers = 2;
  automatic.loader.prefetch = 2;
  automatic.quiet = true;
  EXPECT_EQ(train(ds, automatic, std::cout).disk_cache_hit_rate, static_run.disk_cache_hit_rate);
  TrainOptions window_alone = fixed;
  window_alone.loader.cache.lookahead_batches = 4;
  EXPECT_ERROR_CONTAINS(train(ds, window_alone, std::cout),
                        "lookahead_batches: sizes the look-ahead cache's window, but the "
                        "feature_cache_policy is static");
}

// bench train --load-only: every batch is sampled and gathered (the disk figures count them),
// and no step changes a parameter (any learning rate leaves the same ones).
TEST(LookaheadCache, ALoadOnlyRunGathersEveryBatchAndStepsNothing) {
  testing::TempDirectory dir;
  const Dataset ds = lookahead_rmat_dir(dir);
  TrainOptions o = lookahead_run(Placement::kDisk);
  o.epochs = 2;
  o.load_only = true;
  o.evaluate = false;
  const TrainReport a = train(ds, o, std::cout);
  o.lr = 0.5;
  const TrainReport b = train(ds, o, std::cout);
  EXPECT_EQ(a.param_digest, b.param_digest);
  EXPECT_EQ(a.disk_bytes_gathered, b.disk_bytes_gathered);
  EXPECT_GT(a.disk_bytes_gathered, 0);
  TrainOptions trained = lookahead_run(Placement::kDisk);
  trained.epochs = 2;
  trained.evaluate = false;
  EXPECT_NE(train(ds, trained, std::cout).param_digest, a.param_digest);
  o.evaluate = true;
  EXPECT_ERROR_CONTAINS(train(ds, o, std::cout),
                        "load_only: runs no model, so there is nothing to evaluate");
}

}  // namespace
}  // namespace directgnn
