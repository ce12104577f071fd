// The disk row cache's SIEVE policy: which rows it keeps, and that every row read is the file's.
#include <ATen/ATen.h>

#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "feature/feature_store.h"
#include "feature/npy_table_file.h"
#include "io/npy.h"
#include "test_util.h"

namespace directgnn {
namespace {

FeatureStore sieve_store(const std::string& path, const at::Tensor& ranked, int64_t rows) {
  FeatureStore store = FeatureStore::on_disk(load_npy(path), path, {});
  const int64_t row_bytes = store.row_bytes();
  store.cache_hot_rows(ranked, rows * row_bytes, {}, disk::CachePolicy::kSieve);
  return store;
}

TEST(SieveCache, EvictsTheOldestUnvisitedRowAndKeepsWhatWasHit) {
  const at::Tensor table = at::randn({10, 4});
  testing::TempDirectory dir;
  const std::string path = testing::npy_table_file(dir, table);
  // Two slots; row 0 ranked first enters last: the queue is 1 (oldest), 0 (newest).
  const FeatureStore store = sieve_store(path, at::tensor({0, 1}, at::kLong), 2);
  const disk::RowCache& cache = *store.row_cache();
  ASSERT_EQ(cache.policy(), disk::CachePolicy::kSieve);
  EXPECT_TRUE(store.gather(at::tensor({0}, at::kLong)).equal(table.narrow(0, 0, 1)));  // hit
  // A miss: the hand passes nothing visited at 1, the oldest, and evicts it.
  EXPECT_TRUE(store.gather(at::tensor({2}, at::kLong)).equal(table.narrow(0, 2, 1)));
  EXPECT_FALSE(cache.contains(1));
  EXPECT_TRUE(cache.contains(0) && cache.contains(2));
  // Next miss: the hand is at 0, visited: its bit is cleared, and 2 (unvisited) goes.
  EXPECT_TRUE(store.gather(at::tensor({3}, at::kLong)).equal(table.narrow(0, 3, 1)));
  EXPECT_TRUE(cache.contains(0) && cache.contains(3));
  EXPECT_FALSE(cache.contains(2));
  // 0 is no longer visited: the hand wraps to it and evicts it for 4.
  EXPECT_TRUE(store.gather(at::tensor({4}, at::kLong)).equal(table.narrow(0, 4, 1)));
  EXPECT_TRUE(cache.contains(3) && cache.contains(4));
  EXPECT_FALSE(cache.contains(0));
  EXPECT_EQ(cache.counters().rows_requested, 4);
  EXPECT_EQ(cache.counters().rows_hit, 1);
}

TEST(SieveCache, EveryRowReadIsTheFilesWhateverTheCacheHolds) {
  const int64_t rows = 500;
  const at::Tensor table = at::randn({rows, 24}).to(at::kHalf);
  testing::TempDirectory dir;
  const std::string path = testing::npy_table_file(dir, table);
  const FeatureStore host(table);
  const FeatureStore store = sieve_store(path, at::arange(rows - 1, -1, -1, at::kLong), 60);
  at::manual_seed(7);
  // A skewed stream (most requests among 80 rows), with repeats inside batches, from two
  // threads at once: the hits climb past the static cache's, and no row is ever wrong.
  std::vector<std::thread> threads;
  std::vector<int> wrong(2, 0);
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (int b = 0; b < 40; ++b) {
        const at::Tensor hot = at::randint(0, 80, {50}, at::kLong);
        const at::Tensor cold = at::randint(0, rows, {10}, at::kLong);
        const at::Tensor ids = at::cat({hot, cold, hot.narrow(0, 0, 5)});
        const at::Tensor typed = b % 2 == 0 ? ids : ids.to(at::kInt);
        if (!store.gather(typed).equal(host.gather(ids))) ++wrong[static_cast<size_t>(t)];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong, (std::vector<int>{0, 0}));
  const disk::RowCache::Counters c = store.row_cache()->counters();
  EXPECT_EQ(c.rows_requested, 2 * 40 * 65);
  // Statically, the cache holds rows 440..499, which this stream hardly asks for.
  EXPECT_GT(static_cast<double>(c.rows_hit) / static_cast<double>(c.rows_requested), 0.4);
  int64_t held = 0;
  for (int64_t id = 0; id < rows; ++id) held += store.row_cache()->contains(id);
  EXPECT_EQ(held, 60) << "the cache keeps its size";
}

TEST(SieveCache, DistinctRowsGatheredAndReadAreCountedOnceUntilCleared) {
  const at::Tensor table = at::randn({10, 4});
  testing::TempDirectory dir;
  const std::string path = testing::npy_table_file(dir, table);
  FeatureStore store = FeatureStore::on_disk(load_npy(path), path, {});
  store.cache_hot_rows(at::tensor({0, 1}, at::kLong), 2 * store.row_bytes(), {},
                       disk::CachePolicy::kStatic);
  const disk::RowFile& file = *store.row_file();
  store.clear_distinct_rows();  // the fill read rows 0 and 1
  EXPECT_EQ(file.distinct_rows_read(), 0);
  store.gather(at::tensor({0, 1, 2, 2, 3}, at::kLong));
  EXPECT_EQ(store.distinct_rows_gathered(), 4);
  EXPECT_EQ(file.distinct_rows_read(), 2) << "rows 2 and 3 missed";
  store.gather(at::tensor({3, 4, 0}, at::kInt));
  EXPECT_EQ(store.distinct_rows_gathered(), 5);
  EXPECT_EQ(file.distinct_rows_read(), 3);
  EXPECT_EQ(file.counters().rows_requested, 2 + 3 + 2)
      << "the fill's rows, then the misses with their repeats";
  store.clear_distinct_rows();
  EXPECT_EQ(store.distinct_rows_gathered(), 0);
  EXPECT_EQ(file.distinct_rows_read(), 0);
  EXPECT_EQ(FeatureStore(table).distinct_rows_gathered(), 0) << "a table in memory counts none";
}

TEST(SieveCache, PolicyNamesParse) {
  EXPECT_EQ(disk::parse_cache_policy("sieve"), disk::CachePolicy::kSieve);
  EXPECT_EQ(disk::parse_cache_policy("static"), disk::CachePolicy::kStatic);
  EXPECT_EQ(disk::parse_cache_policy("auto"), disk::CachePolicy::kAuto);
  EXPECT_EQ(disk::resolve_cache_policy(disk::CachePolicy::kAuto, true),
            disk::CachePolicy::kLookahead);
  EXPECT_EQ(disk::resolve_cache_policy(disk::CachePolicy::kAuto, false),
            disk::CachePolicy::kStatic);
  EXPECT_EQ(disk::resolve_cache_policy(disk::CachePolicy::kSieve, true), disk::CachePolicy::kSieve);
  EXPECT_EQ(disk::cache_policy_name(disk::CachePolicy::kSieve), "sieve");
  EXPECT_ERROR_CONTAINS(disk::parse_cache_policy("lru"),
                        "feature_cache_policy: 'lru' is not a cache policy");
}

}  // namespace
}  // namespace directgnn
