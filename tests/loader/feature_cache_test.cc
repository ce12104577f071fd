// The hot-row cache's rankings and the disk placement's per-epoch figures (loader/feature_cache.h);
// training through the cache is in trainer_test.cc.
#include "loader/feature_cache.h"

#include <ATen/ATen.h>

#include <set>

#include "graph/rmat.h"
#include "test_util.h"

namespace directgnn {
namespace {

TEST(FeatureCacheRanking, DegreeRanksByInDegreeWithTiesInIdOrder) {
  CsrGraph g;
  g.indptr = at::tensor({0, 2, 3, 5, 5, 6}, at::kLong);
  g.indices = at::tensor({1, 2, 2, 0, 2, 4}, at::kInt);  // node 4 points at itself
  EXPECT_TRUE(in_degrees(g).equal(at::tensor({1, 1, 3, 0, 1}, at::kLong)));
  EXPECT_TRUE(rank_rows_by_degree(g).equal(at::tensor({2, 0, 1, 4, 3}, at::kLong)));
  // Counts first; equal counts by degree, then id.
  const at::Tensor counts = at::tensor({5, 0, 5, 7, 0}, at::kLong);
  EXPECT_TRUE(rank_rows_by_counts(counts, g).equal(at::tensor({3, 2, 0, 1, 4}, at::kLong)));
}

// Each minibatch of the pass counts a row once when the row is one of its input nodes.
TEST(FeatureCacheRanking, PresamplingCountsTheMinibatchesThatGatherEachRow) {
  RmatDatasetOptions o;
  o.graph.num_nodes = 2000;
  o.graph.edge_factor = 5;
  o.feat_dim = 4;
  const Dataset ds = make_rmat_dataset(o);
  LoaderSettings lo;
  lo.fanouts = {4, 3};
  lo.batch_size = 64;
  lo.prefetch = 0;
  const MinibatchLoader loader(ds, lo);
  const at::Tensor seeds = at::randperm(ds.num_nodes(), at::kLong).narrow(0, 0, 300);
  int64_t reported = 0;
  const at::Tensor counts =
      presample_counts(loader, ds.graph, seeds, 9, [&](int64_t done, int64_t total) {
        EXPECT_EQ(total, 5);
        reported = done;
      });
  EXPECT_EQ(reported, 5);
  EXPECT_LE(counts.max().item<int64_t>(), 5);
  // Every seed is gathered by its own minibatch (seeds are distinct, so by one at least).
  EXPECT_TRUE(counts.index_select(0, seeds).ge(1).all().item<bool>());
  // A row is gathered only within two hops of a seed.
  std::set<int64_t> near(seeds.data_ptr<int64_t>(), seeds.data_ptr<int64_t>() + seeds.numel());
  const int64_t* indptr = ds.graph.indptr.data_ptr<int64_t>();
  const at::Tensor indices = ds.graph.indices.to(at::kLong);
  const int64_t* nbr = indices.data_ptr<int64_t>();
  for (int hop = 0; hop < 2; ++hop) {
    const std::set<int64_t> frontier = near;
    for (const int64_t v : frontier) near.insert(nbr + indptr[v], nbr + indptr[v + 1]);
  }
  const at::Tensor gathered = counts.nonzero().flatten();
  for (int64_t i = 0; i < gathered.numel(); ++i) {
    ASSERT_TRUE(near.count(gathered[i].item<int64_t>())) << gathered[i].item<int64_t>();
  }
  // The same pass again counts the same (sampling streams derive from the seed).
  EXPECT_TRUE(presample_counts(loader, ds.graph, seeds, 9).equal(counts));
}

TEST(DiskTally, DifferencesGiveAnEpochsFiguresAndItsLine) {
  DiskTally before, after;
  before.rows_gathered = 100;
  before.bytes_from_disk = 1000;
  after.rows_gathered = 500;
  after.bytes_gathered = 4'000'000'000;
  after.rows_hit = 300;
  after.bytes_asked = 2'000'000'000;
  after.bytes_from_disk = 1'500'001'000;
  after.read_s = 2.5;
  const DiskTally epoch = after.since(before);
  EXPECT_EQ(epoch.rows_gathered, 400);
  EXPECT_DOUBLE_EQ(epoch.hit_rate(), 0.75);
  EXPECT_EQ(epoch.bytes_from_disk, 1'500'000'000);
  nlohmann::json record;
  epoch.write_to(record);
  EXPECT_EQ(record["disk_bytes_read"], 1'500'000'000);
  EXPECT_EQ(record["disk_bytes_asked"], 2'000'000'000);
  EXPECT_DOUBLE_EQ(record["disk_cache_hit_rate"].get<double>(), 0.75);
  EXPECT_EQ(epoch.text(),
            " | Disk: rows 4.00 GB, cache hits 75.0%, asked 2.00 GB, process read 1.50 GB, "
            "reads 2.5 s");
  before.bytes_from_disk = -1;  // /proc/self/io unreadable
  EXPECT_TRUE(after.since(before).bytes_from_disk < 0);
  EXPECT_NE(after.since(before).text().find("process read n/a"), std::string::npos);
  after.since(before).write_to(record);
  EXPECT_TRUE(record["disk_bytes_read"].is_null());
}

}  // namespace
}  // namespace directgnn
