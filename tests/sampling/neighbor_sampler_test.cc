#include "sampling/neighbor_sampler.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <set>

#include "graph/planted_partition.h"
#include "test_util.h"

namespace directgnn {
namespace {

class SamplerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    PlantedPartitionOptions o;
    o.num_nodes = 2000;
    o.avg_degree = 12;
    dataset_ = new Dataset(make_planted_partition(o));
  }
  static void TearDownTestSuite() { delete dataset_; }
  static const CsrGraph& graph() { return dataset_->graph; }
  static std::set<int64_t> neighbours(int64_t v) {
    const int64_t lo = graph().indptr[v].item<int64_t>(),
                  hi = graph().indptr[v + 1].item<int64_t>();
    std::set<int64_t> out;
    for (int64_t e = lo; e < hi; ++e) out.insert(graph().indices[e].item<int64_t>());
    return out;
  }
  static Dataset* dataset_;
};
Dataset* SamplerTest::dataset_ = nullptr;

TEST_F(SamplerTest, EverySampledEdgeExistsAndFanOutIsRespected) {
  const std::vector<int64_t> fanouts = {5, 3, 2};
  const NeighborSampler sampler(graph(), fanouts);
  const at::Tensor seeds = at::randperm(2000, at::kLong).narrow(0, 0, 64);
  const MiniBatch batch = sampler.sample(seeds, 11);
  ASSERT_EQ(batch.blocks.size(), 3u);
  EXPECT_TRUE(batch.input_nodes.narrow(0, 0, 64).equal(seeds));
  EXPECT_EQ(batch.blocks.back().num_dst, 64);
  EXPECT_EQ(std::get<0>(at::_unique(batch.input_nodes)).numel(), batch.input_nodes.numel());
  for (size_t l = 0; l < batch.blocks.size(); ++l) {
    const Block& b = batch.blocks[l];
    const int64_t fanout = fanouts[batch.blocks.size() - 1 - l];
    if (l > 0) {
      EXPECT_EQ(b.num_src, batch.blocks[l - 1].num_dst);  // layers chain
    }
    for (int64_t i = 0; i < b.num_dst; ++i) {
      const int64_t v = batch.input_nodes[i].item<int64_t>();
      const std::set<int64_t> nbrs = neighbours(v);
      std::set<int64_t> picked;
      for (int64_t e = b.indptr[i].item<int64_t>(); e < b.indptr[i + 1].item<int64_t>(); ++e) {
        const int64_t local = b.indices[e].item<int64_t>();
        ASSERT_LT(local, b.num_src);
        const int64_t u = batch.input_nodes[local].item<int64_t>();
        EXPECT_TRUE(nbrs.count(u)) << "sampled edge " << v << "->" << u << " is not in the graph";
        picked.insert(u);
      }
      const int64_t count = b.indptr[i + 1].item<int64_t>() - b.indptr[i].item<int64_t>();
      EXPECT_EQ(static_cast<int64_t>(picked.size()), count) << "neighbour sampled twice";
      EXPECT_EQ(count, std::min<int64_t>(fanout, static_cast<int64_t>(nbrs.size())));
      EXPECT_FLOAT_EQ(b.dst_degree[i].item<float>(), static_cast<float>(nbrs.size()));
    }
  }
}

TEST_F(SamplerTest, MinusOneTakesAllNeighbours) {
  const NeighborSampler sampler(graph(), {-1});
  const MiniBatch batch = sampler.sample(at::arange(10, at::kLong), 3);
  for (int64_t i = 0; i < 10; ++i) {
    EXPECT_EQ(
        batch.blocks[0].indptr[i + 1].item<int64_t>() - batch.blocks[0].indptr[i].item<int64_t>(),
        static_cast<int64_t>(neighbours(i).size()));
  }
}

TEST_F(SamplerTest, LargeFanOutsUseSelectionSamplingCorrectly) {
  PlantedPartitionOptions o;
  o.num_nodes = 500;
  o.avg_degree = 120;
  const Dataset dense = make_planted_partition(o);
  const NeighborSampler dense_sampler(dense.graph, {40});
  const MiniBatch batch = dense_sampler.sample(at::arange(50, at::kLong), 5);
  const Block& b = batch.blocks[0];
  for (int64_t i = 0; i < 50; ++i) {
    const int64_t degree = dense.graph.degrees()[i].item<int64_t>();
    EXPECT_EQ(b.indptr[i + 1].item<int64_t>() - b.indptr[i].item<int64_t>(),
              std::min<int64_t>(40, degree));
  }
}

TEST_F(SamplerTest, DeterministicForASeedWhateverTheThreadCount) {
  const NeighborSampler sampler(graph(), {10, 5});
  const at::Tensor seeds = at::arange(100, 400, at::kLong);
  at::set_num_threads(1);
  const MiniBatch a = sampler.sample(seeds, 99);
  at::set_num_threads(2);
  const MiniBatch b = sampler.sample(seeds, 99);
  const MiniBatch c = sampler.sample(seeds, 100);
  EXPECT_TRUE(a.input_nodes.equal(b.input_nodes));
  for (size_t l = 0; l < a.blocks.size(); ++l) {
    EXPECT_TRUE(a.blocks[l].indptr.equal(b.blocks[l].indptr));
    EXPECT_TRUE(a.blocks[l].indices.equal(b.blocks[l].indices));
  }
  EXPECT_FALSE(a.input_nodes.equal(c.input_nodes));
}

TEST_F(SamplerTest, BadSeedsAndFanOuts) {
  const NeighborSampler sampler(graph(), {3});
  EXPECT_ERROR_CONTAINS(sampler.sample(at::tensor({1, 5000}, at::kLong), 0),
                        "seed node 5000 is out of range");
  EXPECT_ERROR_CONTAINS(sampler.sample(at::tensor({4, 4}, at::kLong), 0), "appears twice");
  // The workspace is left clean after an error.
  EXPECT_EQ(sampler.sample(at::tensor({4}, at::kLong), 0).seeds.numel(), 1);
  EXPECT_ERROR_CONTAINS(NeighborSampler(graph(), {0}), "fanouts: 0 is invalid");
  EXPECT_ERROR_CONTAINS(parse_fanouts("10,10", 3), "has 2 value(s) but layers is 3");
  EXPECT_ERROR_CONTAINS(parse_fanouts("10,x", 2), "'x' is not an integer");
  EXPECT_ERROR_CONTAINS(parse_fanouts("10,-2", 2), "-2 is invalid");
  EXPECT_EQ(parse_fanouts("15,-1,5", 3), (std::vector<int64_t>{15, -1, 5}));
}

}  // namespace
}  // namespace directgnn
