// The sharded feature table's exchange: a group of one, and two ranks on two threads of this
// process (each with its own c10d group over one TCP store), whose gathers must equal the
// whole table's rows in request order.
#include "dist/feature_exchange.h"

#include <ATen/ATen.h>

#include "dist/two_ranks.h"
#include "io/npy.h"
#include "test_util.h"

namespace directgnn {
namespace {

using testing::on_two_ranks;

FeatureExchange exchange_of(const at::Tensor& table, const std::vector<int64_t>& offsets,
                            const ProcessGroup& group) {
  const int r = group.rank();
  FeatureStore mine(table.narrow(0, offsets[r], offsets[r + 1] - offsets[r]).contiguous());
  return FeatureExchange(offsets, std::move(mine), group.subgroup("features"));
}

TEST(FeatureExchange, GroupOfOneGathersItsOwnRows) {
  DistEnv env;
  env.master_port = 0;
  auto group = ProcessGroup::create(env, DistOptions());
  const at::Tensor table = at::randn({9, 3});
  FeatureExchange ex = exchange_of(table, {0, 9}, *group);
  const at::Tensor ids = at::tensor({8, 0, 4, 4}, at::kLong);
  EXPECT_TRUE(ex.gather(ids).equal(table.index_select(0, ids)));
  EXPECT_EQ(ex.gather(at::empty({0}, at::kLong)).sizes(), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(ex.counts().remote_rows, 0);
  EXPECT_ERROR_CONTAINS(ex.gather(at::tensor({9}, at::kLong)), "9");
}

TEST(FeatureExchange, TwoRanksFetchEachOthersRowsInRequestOrder) {
  // Uneven parts, float16 rows (the exchange moves bytes, whatever the dtype).
  const at::Tensor table = at::randn({20, 5}).to(at::kHalf);
  const std::vector<int64_t> offsets{0, 7, 20};
  // Rank 0 asks for rows of both parts; rank 1 for rank 0's only, then nothing at all.
  const std::vector<at::Tensor> asks{at::tensor({19, 3, 7, 0, 12, 6}, at::kLong),
                                     at::tensor({5, 1}, at::kLong)};
  std::vector<at::Tensor> got(4);
  std::vector<ExchangeCounts> counts(2);
  on_two_ranks([&](int r, ProcessGroup& group) {
    FeatureExchange ex = exchange_of(table, offsets, group);
    EXPECT_TRUE(
        ex.owners(at::tensor({0, 6, 7, 19}, at::kLong)).equal(at::tensor({0, 0, 1, 1}, at::kLong)));
    got[r] = ex.gather(asks[r]);
    got[2 + r] = ex.gather(r == 0 ? asks[0] : at::empty({0}, at::kLong));
    counts[r] = ex.counts();
  });
  EXPECT_TRUE(got[0].equal(table.index_select(0, asks[0])));
  EXPECT_TRUE(got[1].equal(table.index_select(0, asks[1])));
  EXPECT_TRUE(got[2].equal(table.index_select(0, asks[0])));
  EXPECT_EQ(got[3].size(0), 0);
  // Rank 0 asked 3 remote rows twice; rank 1 served them and asked 2 of its own.
  EXPECT_EQ(counts[0].remote_rows, 6);
  EXPECT_EQ(counts[1].remote_rows, 2);
  EXPECT_EQ(counts[0].bytes_received - 8 * 2, 6 * 10 + 2 * 8);
  EXPECT_EQ(counts[0].gathers, 2);
}

// A replicated cache of the other rank's hottest rows serves them without an exchange: the
// rows are the same, the hits are counted, and fewer bytes come in.
TEST(FeatureExchange, CachedRemoteRowsAreServedLocally) {
  const at::Tensor table = at::randn({12, 4});
  const std::vector<int64_t> offsets{0, 6, 12};
  // Hottest first: 7 and 0 (one of each rank's), then 11, 5, ...
  const at::Tensor ranked = at::tensor({7, 0, 11, 5, 1, 2, 3, 4, 6, 8, 9, 10}, at::kLong);
  const at::Tensor ask = at::tensor({7, 11, 0, 5, 9, 2}, at::kLong);
  std::vector<at::Tensor> got(2);
  std::vector<ExchangeCounts> counts(2);
  std::vector<int64_t> cached(2);
  on_two_ranks([&](int r, ProcessGroup& group) {
    FeatureExchange ex = exchange_of(table, offsets, group);
    ex.cache_remote_rows(ranked, /*max_rows=*/2);
    cached[r] = ex.cached_rows();
    got[r] = ex.gather(ask);
    counts[r] = ex.counts();
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(cached[r], 2);
    EXPECT_TRUE(got[r].equal(table.index_select(0, ask))) << "rank " << r;
  }
  // Rank 0 caches 7 and 11 (both asked): of its 3 remote rows (7, 11, 9) only 9 is fetched.
  EXPECT_EQ(counts[0].remote_rows, 3);
  EXPECT_EQ(counts[0].cache_hits, 2);
  // Rank 1 caches 0 and 5: of its remote rows (0, 5, 2) only 2 is fetched.
  EXPECT_EQ(counts[1].cache_hits, 2);
  EXPECT_EQ(counts[1].remote_rows, 3);
  EXPECT_EQ(counts[0].bytes_received, 1 * 8 + 1 * 16 + 8);
}

// An owner serves its rows from the table it was given in whatever placement: its part alone
// in memory on rank 0, the whole table read from disk (its part beginning at row 4) on rank 1.
TEST(FeatureExchange, OwnersServeFromADiskTableOrTheirPartAlone) {
  TempDirectory dir;
  const at::Tensor table = at::randn({10, 3});
  const std::string path = dir.file("features.npy");
  save_npy(path, table);
  const std::vector<int64_t> offsets{0, 4, 10};
  const at::Tensor ask = at::tensor({9, 0, 5, 3, 4, 9}, at::kLong);
  std::vector<at::Tensor> got(2);
  on_two_ranks([&](int r, ProcessGroup& group) {
    const FeatureStore store = r == 1 ? FeatureStore::on_disk(load_npy(path), path, {})
                                      : FeatureStore(table.narrow(0, 0, 4).contiguous());
    FeatureExchange ex(offsets, store, offsets[r], group.subgroup("features"));
    got[r] = ex.gather(ask);
  });
  EXPECT_TRUE(got[0].equal(table.index_select(0, ask)));
  EXPECT_TRUE(got[1].equal(table.index_select(0, ask)));
  // A part running past the end of its table is refused, naming the rows.
  on_two_ranks([&](int r, ProcessGroup& group) {
    const FeatureStore store(table.narrow(0, 0, 8).contiguous());
    if (r == 0) {
      FeatureExchange(offsets, store, 0, group.subgroup("features"));
    } else {
      EXPECT_ERROR_CONTAINS(FeatureExchange(offsets, store, 4, group.subgroup("features")),
                            "serves its part's 6 rows from row 4 of a table of 8");
    }
  });
}

// Layer-wise inference over parts serves each layer's outputs in turn: after serve(), the
// exchange hands out the new table's rows, whatever its width, and drops its cached copies.
TEST(FeatureExchange, ServingANewTableReplacesTheRowsAndTheCache) {
  const at::Tensor first = at::randn({10, 4}), second = at::randn({10, 7});
  const std::vector<int64_t> offsets{0, 6, 10};
  std::vector<at::Tensor> got(2);
  std::vector<int64_t> cached(2);
  on_two_ranks([&](int r, ProcessGroup& group) {
    FeatureExchange ex = exchange_of(first, offsets, group);
    ex.cache_remote_rows(at::arange(10, at::kLong), 2);
    ex.serve(FeatureStore(second.narrow(0, offsets[r], offsets[r + 1] - offsets[r]).contiguous()));
    cached[r] = ex.cached_rows();
    got[r] = ex.gather(at::tensor({9, 0, 5, 6}, at::kLong));
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(got[r].equal(second.index_select(0, at::tensor({9, 0, 5, 6}, at::kLong)))) << r;
    EXPECT_EQ(cached[r], 0) << r;
  }
}

// The device the rows cross on is chosen before the cache is filled (the cached rows live
// there); the CPU, the default, may be named again.
TEST(FeatureExchange, TheDeviceIsChosenBeforeCachingRemoteRows) {
  const at::Tensor table = at::randn({8, 2});
  const std::vector<int64_t> offsets{0, 4, 8};
  on_two_ranks([&](int, ProcessGroup& group) {
    FeatureExchange ex = exchange_of(table, offsets, group);
    ex.on_device(c10::Device(c10::kCPU));
    ex.cache_remote_rows(at::arange(8, at::kLong), 2);
    EXPECT_ERROR_CONTAINS(ex.on_device(c10::Device(c10::kCPU)), "before caching remote rows");
    EXPECT_TRUE(ex.gather(at::tensor({7, 0}, at::kLong))
                    .equal(table.index_select(0, at::tensor({7, 0}, at::kLong))));
  });
}

}  // namespace
}  // namespace directgnn
