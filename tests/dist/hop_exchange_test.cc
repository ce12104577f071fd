// The partitioned structure's hop exchange: two ranks on two threads, each holding the in-edges
// of its part's nodes only, must sample exactly the minibatches one process with the whole
// graph samples (the keyed draws make a node's picks independent of who draws them).
#include "dist/hop_exchange.h"

#include <ATen/ATen.h>

#include "dist/two_ranks.h"
#include "graph/planted_partition.h"
#include "loader/feature_cache.h"
#include "sampling/sampler.h"
#include "test_util.h"
#include "train/sharding.h"

namespace directgnn {
namespace {

using testing::on_two_ranks;

void expect_same_batch(const MiniBatch& a, const MiniBatch& b, const std::string& what) {
  ASSERT_EQ(a.blocks.size(), b.blocks.size()) << what;
  EXPECT_TRUE(a.input_nodes.equal(b.input_nodes)) << what;
  EXPECT_EQ(a.hop_nodes, b.hop_nodes) << what;
  for (size_t l = 0; l < a.blocks.size(); ++l) {
    const Block& x = a.blocks[l];
    const Block& y = b.blocks[l];
    EXPECT_EQ(x.num_dst, y.num_dst) << what << " layer " << l;
    EXPECT_TRUE(x.indptr.equal(y.indptr)) << what << " layer " << l;
    EXPECT_TRUE(x.indices.equal(y.indices)) << what << " layer " << l;
    EXPECT_TRUE(x.src_degree.equal(y.src_degree)) << what << " layer " << l;
    EXPECT_TRUE(x.dst_degree.equal(y.dst_degree)) << what << " layer " << l;
  }
}

TEST(HopExchange, PartitionedRowsKeepTheirPartsEdgesOnly) {
  PlantedPartitionOptions o;
  o.num_nodes = 50;
  const CsrGraph graph = make_planted_partition(o).graph;
  const CsrGraph part = partitioned_rows(graph, 20, 35);
  ASSERT_EQ(part.num_nodes(), 50);
  const at::Tensor degree = part.degrees();
  EXPECT_TRUE(degree.narrow(0, 20, 15).equal(graph.degrees().narrow(0, 20, 15)));
  EXPECT_EQ(degree.narrow(0, 0, 20).sum().item<int64_t>(), 0);
  EXPECT_EQ(degree.narrow(0, 35, 15).sum().item<int64_t>(), 0);
  const int64_t first = graph.indptr[20].item<int64_t>();
  EXPECT_TRUE(part.indices.equal(graph.indices.narrow(0, first, part.num_edges())));
  EXPECT_ERROR_CONTAINS(partitioned_rows(graph, 30, 60), "[30, 60) is not a range");
}

// Each rank samples its own seeds, and the other rank's, in both modes and with every
// neighbour at a hop: every batch is the one-process sampler's, block for block.
TEST(HopExchange, TwoRanksSampleWhatOneProcessSamples) {
  PlantedPartitionOptions o;
  o.num_nodes = 400;
  o.avg_degree = 8;
  const CsrGraph graph = make_planted_partition(o).graph;
  const std::vector<int64_t> offsets{0, 170, 400};
  const std::vector<at::Tensor> seeds{at::tensor({5, 300, 17, 169, 170}, at::kLong),
                                      at::tensor({399, 2, 250}, at::kLong)};
  struct Case {
    std::vector<int64_t> fanouts;
    SampleMode mode;
  };
  const std::vector<Case> cases{{{4, 3}, SampleMode::kFreshPerLayer},
                                {{5, -1, 2}, SampleMode::kOncePerNode}};
  std::vector<std::vector<MiniBatch>> got(2);
  std::vector<HopCounts> counts(2);
  std::vector<at::Tensor> degrees(2);
  on_two_ranks([&](int r, ProcessGroup& group) {
    const CsrGraph mine = partitioned_rows(graph, offsets[r], offsets[r + 1]);
    auto hops = std::make_shared<HopExchange>(offsets, mine, false, group.subgroup("hops"));
    degrees[r] = hops->degrees();
    for (const Case& c : cases) {
      SamplerOptions so;
      so.fanouts = c.fanouts;
      so.mode = c.mode;
      const Sampler sampler(mine, so, hops);
      // Rank 0 samples its seeds then rank 1's; rank 1 the other way round; each rank with its
      // own random seeds (a batch's stream depends on its rank).
      got[r].push_back(sampler.sample(seeds[r], 11 + r));
      got[r].push_back(sampler.sample(seeds[1 - r], 21 + r));
    }
    counts[r] = hops->counts();
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(degrees[r].equal(graph.degrees().to(at::kFloat))) << "rank " << r;
    size_t i = 0;
    for (const Case& c : cases) {
      SamplerOptions so;
      so.fanouts = c.fanouts;
      so.mode = c.mode;
      const Sampler whole(graph, so);
      expect_same_batch(got[r][i++], whole.sample(seeds[r], 11 + r), "rank " + std::to_string(r));
      expect_same_batch(got[r][i++], whole.sample(seeds[1 - r], 21 + r),
                        "rank " + std::to_string(r) + ", the other's seeds");
    }
    EXPECT_EQ(counts[r].draws, 10);
    EXPECT_GT(counts[r].remote_rows, 0);
    EXPECT_LT(counts[r].remote_rows, counts[r].rows);
    EXPECT_GT(counts[r].bytes_received, 0);
  }
}

// Weighted draws are keyed by node too: the owners draw what one process draws.
TEST(HopExchange, WeightedDrawsAreTheOneProcesssDraws) {
  PlantedPartitionOptions o;
  o.num_nodes = 300;
  CsrGraph graph = make_planted_partition(o).graph;
  graph.weights = at::rand({graph.num_edges()}, at::kFloat);
  const std::vector<int64_t> offsets{0, 160, 300};
  const at::Tensor seeds = at::tensor({1, 200, 159, 160, 42}, at::kLong);
  SamplerOptions so;
  so.fanouts = {3, 3};
  so.weighted = true;
  std::vector<MiniBatch> got(2);
  on_two_ranks([&](int r, ProcessGroup& group) {
    const CsrGraph mine = partitioned_rows(graph, offsets[r], offsets[r + 1]);
    got[r] = Sampler(mine, so,
                     std::make_shared<HopExchange>(offsets, mine, true, group.subgroup("hops")))
                 .sample(seeds, 5 + r);
  });
  const Sampler whole(graph, so);
  expect_same_batch(got[0], whole.sample(seeds, 5), "rank 0");
  expect_same_batch(got[1], whole.sample(seeds, 6), "rank 1");
}

// A rank holding its part's edges counts the in-degrees of those edges only; summed over the
// ranks they are the whole graph's, which its caches rank rows by.
TEST(HopExchange, WholeInDegreesSumThePartsCounts) {
  PlantedPartitionOptions o;
  o.num_nodes = 200;
  const CsrGraph graph = make_planted_partition(o).graph;
  const std::vector<int64_t> offsets{0, 120, 200};
  std::vector<at::Tensor> got(2);
  on_two_ranks([&](int r, ProcessGroup& group) {
    Dataset ds;
    ds.graph = partitioned_rows(graph, offsets[r], offsets[r + 1]);
    ds.structure_part = r;
    got[r] = whole_in_degrees(ds, &group);
    ds.structure_part = -1;  // a whole graph's own counts stand (no collective)
    EXPECT_FALSE(whole_in_degrees(ds, &group).defined());
  });
  EXPECT_TRUE(got[0].equal(in_degrees(graph)));
  EXPECT_TRUE(got[1].equal(in_degrees(graph)));
}

}  // namespace
}  // namespace directgnn
