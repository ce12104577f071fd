// The sharded feature table's exchange: a group of one, and two ranks on two threads of this
// process (each with its own c10d group over one TCP store), whose gathers must equal the
// whole table's rows in request order.
#include "dist/feature_exchange.h"

#include <ATen/ATen.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <exception>
#include <thread>

#include "test_util.h"

namespace directgnn {
namespace {

// A port no one listens on now (the kernel's pick for a socket bound to port 0).
int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  EXPECT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  close(fd);
  return ntohs(addr.sin_port);
}

std::unique_ptr<ProcessGroup> join(int rank, int size, int port) {
  DistEnv env;
  env.rank = rank;
  env.world_size = size;
  env.local_rank = rank;
  env.local_world_size = size;
  env.master_port = port;
  DistOptions options;
  options.backend = DistBackend::kGloo;
  options.timeout = std::chrono::seconds(30);
  return ProcessGroup::create(env, options);
}

FeatureExchange exchange_of(const at::Tensor& table, const std::vector<int64_t>& offsets,
                            const ProcessGroup& group) {
  const int r = group.rank();
  FeatureStore mine(table.narrow(0, offsets[r], offsets[r + 1] - offsets[r]).contiguous());
  return FeatureExchange(offsets, std::move(mine), group.subgroup("features"));
}

// Runs `body(rank, group)` on two ranks, each on its own thread; rethrows what one threw.
template <typename Body>
void on_two_ranks(Body body) {
  const int port = free_port();
  std::vector<std::exception_ptr> errors(2);
  auto rank_main = [&](int r) {
    try {
      auto group = join(r, 2, port);
      body(r, *group);
    } catch (...) {
      errors[r] = std::current_exception();
    }
  };
  std::thread a(rank_main, 0), b(rank_main, 1);
  a.join();
  b.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
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

}  // namespace
}  // namespace directgnn
