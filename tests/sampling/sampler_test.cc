// The neighbour sampler (sampling/sampler.h): the pick both twins share, the CPU twin through
// the front door against the graph, and the GPU twin against the CPU one, block for block
// (skipped without a GPU; bench/gpu/run.sh runs it on one).
#include "sampling/sampler.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include "gpu/runtime.h"
#include "graph/planted_partition.h"
#include "sampling/induced.h"
#include "sampling/sampler_checks.h"
#include "sampling/uniform_pick.h"
#include "test_util.h"

namespace directgnn {
namespace {

TEST(UniformPick, IsAPermutationForEveryDomainSize) {
  for (uint64_t n = 1; n <= 300; ++n) {
    const uniform_pick::Permutation perm(n, 0x1234 + n);
    std::set<uint64_t> seen;
    for (uint64_t j = 0; j < n; ++j) {
      const uint64_t x = perm(j);
      ASSERT_LT(x, n);
      seen.insert(x);
    }
    ASSERT_EQ(seen.size(), n) << "n = " << n;
  }
}

TEST(UniformPick, PicksEveryNeighbourEquallyOften) {
  // 5 of 13 neighbours, over many keys: each position is picked ~5/13 of the time.
  const int64_t deg = 13, k = 5, trials = 20000;
  std::vector<int> hits(deg, 0);
  for (int64_t t = 0; t < trials; ++t) {
    const uint64_t key = uniform_pick::node_key(7, 0, static_cast<uint64_t>(t));
    std::set<int64_t> picked;
    for (int64_t j = 0; j < k; ++j) picked.insert(uniform_pick::pick_offset(deg, k, key, j));
    ASSERT_EQ(picked.size(), static_cast<size_t>(k));
    for (const int64_t p : picked) ++hits[p];
  }
  const double expected = static_cast<double>(trials * k) / deg;
  for (int64_t p = 0; p < deg; ++p) EXPECT_NEAR(hits[p], expected, 0.05 * expected) << p;
}

// Over many nodes' keys, every position of a neighbour list is picked k/deg of the time, for
// degrees on both sides of powers of two, and every pair of positions equally often.
TEST(UniformPick, IsUniformOverDegreesAndPairs) {
  const int64_t trials = 30000;
  for (const auto& [deg, k] : std::vector<std::pair<int64_t, int64_t>>{
           {2, 1}, {3, 2}, {17, 5}, {20, 5}, {31, 10}, {64, 15}, {100, 10}, {1000, 5}}) {
    std::vector<int> hits(static_cast<size_t>(deg), 0);
    for (int64_t t = 0; t < trials; ++t) {
      const uniform_pick::Permutation perm(static_cast<uint64_t>(deg),
                                           uniform_pick::node_key(3, 1, static_cast<uint64_t>(t)));
      for (int64_t j = 0; j < k; ++j) ++hits[perm(static_cast<uint64_t>(j))];
    }
    const double expected = static_cast<double>(trials * k) / deg;
    double chi2 = 0;
    for (const int h : hits) chi2 += (h - expected) * (h - expected) / expected;
    // deg - 1 degrees of freedom: the chi-square stays far below deg + 6 sqrt(2 deg).
    EXPECT_LT(chi2, static_cast<double>(deg) + 6 * std::sqrt(2.0 * deg)) << deg << " " << k;
  }
  // 2 of 6: each of the 15 pairs about trials / 15 times (a random draw's noise is 2% here; the
  // 6-round network measured within 12% over 6, 10 and 17 neighbours, where 4 rounds of the
  // earlier pick were off by over 100%).
  std::map<std::pair<uint64_t, uint64_t>, int> pairs;
  for (int64_t t = 0; t < trials; ++t) {
    const uniform_pick::Permutation perm(6, uniform_pick::node_key(5, 0, static_cast<uint64_t>(t)));
    const uint64_t a = perm(0), b = perm(1);
    ++pairs[{std::min(a, b), std::max(a, b)}];
  }
  ASSERT_EQ(pairs.size(), 15u);
  for (const auto& [pair, count] : pairs) EXPECT_NEAR(count, trials / 15.0, 0.25 * trials / 15);
  // pick() gives the same positions as one pick at a time.
  const uniform_pick::Permutation perm(37, 99);
  std::vector<int64_t> many(37);
  perm.pick(37, many.data());
  for (uint64_t j = 0; j < 37; ++j) EXPECT_EQ(many[j], static_cast<int64_t>(perm(j)));
}

TEST(RelabelFirstSeen, KeepsFirstAppearanceOrder) {
  auto longs = [](std::vector<int64_t> v) { return at::tensor(v, at::kLong); };
  auto [nodes, local] = relabel_first_seen(longs({9, 4, 9, 7, 4, 1, 7}));
  EXPECT_TRUE(nodes.equal(longs({9, 4, 7, 1})));
  EXPECT_TRUE(local.equal(longs({0, 1, 0, 2, 1, 3, 2})));
}

class SamplerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    PlantedPartitionOptions o;
    o.num_nodes = 3000;
    o.avg_degree = 14;
    dataset_ = new Dataset(make_planted_partition(o));
  }
  static void TearDownTestSuite() { delete dataset_; }
  static const CsrGraph& graph() { return dataset_->graph; }
  static Dataset* dataset_;
};
Dataset* SamplerTest::dataset_ = nullptr;

TEST_F(SamplerTest, KeepsTheInvariantsInBothModes) {
  const at::Tensor seeds = at::randperm(3000, at::kLong).narrow(0, 0, 100).clone();
  for (const SampleMode mode : {SampleMode::kFreshPerLayer, SampleMode::kOncePerNode}) {
    for (const std::vector<int64_t>& fanouts :
         {std::vector<int64_t>{6, 4, -1}, std::vector<int64_t>{40},
          std::vector<int64_t>{5, 3, 2}}) {
      const Sampler sampler(graph(), {fanouts, mode});
      expect_valid_batch(graph(), sampler.sample(seeds, 5), seeds, fanouts, mode);
    }
  }
}

TEST_F(SamplerTest, DeterministicForASeedWhateverTheThreadCount) {
  const Sampler sampler(graph(), {{10, 5}});
  const at::Tensor seeds = at::arange(100, 400, at::kLong);
  at::set_num_threads(1);
  const MiniBatch a = sampler.sample(seeds, 99);
  at::set_num_threads(2);
  const MiniBatch b = sampler.sample(seeds, 99), c = sampler.sample(seeds, 100);
  EXPECT_TRUE(a.input_nodes.equal(b.input_nodes));
  for (size_t l = 0; l < a.blocks.size(); ++l) {
    EXPECT_TRUE(a.blocks[l].indptr.equal(b.blocks[l].indptr));
    EXPECT_TRUE(a.blocks[l].indices.equal(b.blocks[l].indices));
  }
  EXPECT_FALSE(a.input_nodes.equal(c.input_nodes));
}

// PyG's hops: every node is drawn once, the blocks are prefixes of one CSR, and the edges of hop
// h reach only nodes first seen by hop h (trim_to_layer's premise).
TEST_F(SamplerTest, OncePerNodeKeepsPygHopSemantics) {
  const at::Tensor seeds = at::randperm(3000, at::kLong).narrow(0, 0, 50).clone();
  const MiniBatch batch = Sampler(graph(), {{6, 4, 3}, SampleMode::kOncePerNode}).sample(seeds, 3);
  const Block& outer = batch.blocks.front();
  int64_t nodes = batch.hop_nodes[0], edges = 0;
  for (size_t h = 0; h < batch.hop_edges.size(); ++h) {
    const Block& b = batch.blocks[batch.blocks.size() - 1 - h];
    EXPECT_TRUE(b.indptr.equal(outer.indptr.narrow(0, 0, b.num_dst + 1))) << "hop " << h;
    EXPECT_TRUE(b.indices.equal(outer.indices.narrow(0, 0, b.num_edges()))) << "hop " << h;
    const at::Tensor drawn = outer.indices.narrow(0, edges, batch.hop_edges[h]);
    nodes += batch.hop_nodes[h + 1];
    edges += batch.hop_edges[h];
    EXPECT_TRUE(drawn.numel() == 0 || drawn.max().item<int64_t>() < nodes) << "hop " << h;
  }
}

// Asked for them, both modes give each block's edge ids, and asking changes no pick.
TEST_F(SamplerTest, EdgeIdsInBothModes) {
  const at::Tensor seeds = at::randperm(3000, at::kLong).narrow(0, 0, 60).clone();
  for (const SampleMode mode : {SampleMode::kFreshPerLayer, SampleMode::kOncePerNode}) {
    SamplerOptions options{{6, 4, -1}, mode};
    const MiniBatch plain = Sampler(graph(), options).sample(seeds, 3);
    EXPECT_FALSE(plain.blocks.front().edge_ids.defined());
    options.edge_ids = true;
    const MiniBatch batch = Sampler(graph(), options).sample(seeds, 3);
    expect_edge_ids(graph(), batch);
    EXPECT_TRUE(batch.input_nodes.equal(plain.input_nodes));
    for (size_t l = 0; l < batch.blocks.size(); ++l) {
      EXPECT_TRUE(batch.blocks[l].indices.equal(plain.blocks[l].indices)) << l;
    }
  }
}

TEST_F(SamplerTest, EveryNeighbourReachesTheSameNodesInBothModes) {
  const at::Tensor seeds = at::arange(0, 3000, 97, at::kLong);
  const MiniBatch a = Sampler(graph(), {{-1, -1}}).sample(seeds, 1);
  const MiniBatch b = Sampler(graph(), {{-1, -1}, SampleMode::kOncePerNode}).sample(seeds, 1);
  EXPECT_TRUE(a.input_nodes.equal(b.input_nodes));
  EXPECT_EQ(a.hop_nodes, b.hop_nodes);
  // Fresh draws repeat the seeds' rows in the outer block; once-per-node draws do not.
  EXPECT_EQ(a.blocks.front().num_edges(), b.blocks.front().num_edges());
  EXPECT_EQ(a.hop_edges[0] + b.hop_edges[1], a.hop_edges[1]);
}

TEST_F(SamplerTest, BadSeedsAndFanOuts) {
  const Sampler sampler(graph(), {{3}});
  EXPECT_ERROR_CONTAINS(sampler.sample(at::tensor({1, 5000}, at::kLong), 0),
                        "seed node 5000 is out of range");
  EXPECT_ERROR_CONTAINS(sampler.sample(at::tensor({4, 4}, at::kLong), 0), "appears twice");
  EXPECT_ERROR_CONTAINS(sampler.sample(at::tensor({1.0}), 0), "int64 or int32");
  // The workspace is left clean after an error.
  EXPECT_EQ(sampler.sample(at::tensor({4}, at::kLong), 0).seeds.numel(), 1);
  EXPECT_ERROR_CONTAINS(Sampler(graph(), {{0}}), "fanouts: '0': 0 is invalid");
  EXPECT_ERROR_CONTAINS(Sampler(graph(), {{}}), "fanouts: the list is empty");
  EXPECT_ERROR_CONTAINS(parse_fanouts("10,10", 3), "has 2 value(s) but layers is 3");
  EXPECT_ERROR_CONTAINS(parse_fanouts("10,x", 2), "'x' is not an integer");
  EXPECT_ERROR_CONTAINS(parse_fanouts("10,-2", 2), "-2 is invalid");
  EXPECT_EQ(parse_fanouts("15,-1,5", 3), (std::vector<int64_t>{15, -1, 5}));
  EXPECT_ERROR_CONTAINS(check_seeds(at::tensor({2, 9, 2}, at::kLong), 10), "node 2 appears twice");
}

// The induced subgraph holds every edge of the graph between two of the nodes, grouped by
// destination in the nodes' order, and refuses ids out of range or repeated.
TEST_F(SamplerTest, InducedSubgraphHoldsEveryEdgeAmongTheNodes) {
  const at::Tensor nodes = at::randperm(3000, at::kLong).narrow(0, 0, 400).clone();
  const InducedEdges got = induced_subgraph(graph(), nodes);
  std::map<int64_t, int64_t> local;
  for (int64_t i = 0; i < nodes.numel(); ++i) local[nodes[i].item<int64_t>()] = i;
  const at::Tensor idx = graph().indices.to(at::kLong);
  std::vector<int64_t> want;
  for (int64_t i = 0; i < nodes.numel(); ++i) {
    const int64_t v = nodes[i].item<int64_t>();
    for (int64_t e = graph().indptr[v].item<int64_t>(); e < graph().indptr[v + 1].item<int64_t>();
         ++e) {
      if (local.count(idx[e].item<int64_t>())) want.push_back(e);
    }
  }
  ASSERT_EQ(got.edges.numel(), static_cast<int64_t>(want.size()));
  EXPECT_TRUE(got.edges.equal(at::tensor(want, at::kLong)));
  EXPECT_TRUE(nodes.index_select(0, got.src).equal(idx.index_select(0, got.edges)));
  EXPECT_ERROR_CONTAINS(induced_subgraph(graph(), at::tensor({1, 3000}, at::kLong)),
                        "node 3000 is out of range");
  EXPECT_ERROR_CONTAINS(induced_subgraph(graph(), at::tensor({4, 1, 4}, at::kLong)),
                        "node 4 appears twice");
}

TEST_F(SamplerTest, TheGpuSamplerNeedsAGpu) {
  if (gpu::available()) GTEST_SKIP() << "a GPU is present; GpuSampler below runs instead";
  const SamplerOptions on_gpu{{5}, SampleMode::kFreshPerLayer, c10::Device(c10::kCUDA, 0)};
  EXPECT_ERROR_CONTAINS(Sampler(graph(), on_gpu), "sampler: gpu needs a GPU");
}

// The GPU twin draws with the CPU twin's pick and relabels in the same order: the very same
// blocks, in both modes, from the graph pinned in host memory and copied to the GPU.
TEST(GpuSampler, MatchesTheCpuSamplerExactly) {
  if (!gpu::available()) GTEST_SKIP() << "no GPU here (" << gpu::unavailable_reason() << ")";
  PlantedPartitionOptions o;
  o.num_nodes = 5000;
  o.avg_degree = 15;
  const Dataset ds = make_planted_partition(o);
  const std::vector<int64_t> fanouts = {15, 10, 5};
  const at::Tensor seeds = at::randperm(5000, at::kLong).narrow(0, 0, 512).clone();
  for (const SampleMode mode : {SampleMode::kFreshPerLayer, SampleMode::kOncePerNode}) {
    SamplerOptions options{fanouts, mode};
    options.edge_ids = true;
    const MiniBatch expected = Sampler(ds.graph, options).sample(seeds, 9);
    for (const GraphPlacement placement : {GraphPlacement::kPinned, GraphPlacement::kDevice}) {
      options.device = c10::Device(c10::kCUDA, 0);
      options.graph = placement;
      const Sampler gpu_sampler(ds.graph, options);
      const MiniBatch got = gpu_sampler.sample(seeds, 9);
      expect_valid_batch(ds.graph, got, seeds, fanouts, mode);
      EXPECT_TRUE(got.input_nodes.cpu().equal(expected.input_nodes));
      EXPECT_EQ(got.hop_nodes, expected.hop_nodes);
      EXPECT_EQ(got.hop_edges, expected.hop_edges);
      ASSERT_EQ(got.blocks.size(), expected.blocks.size());
      for (size_t l = 0; l < got.blocks.size(); ++l) {
        EXPECT_TRUE(got.blocks[l].indptr.cpu().equal(expected.blocks[l].indptr)) << l;
        EXPECT_TRUE(got.blocks[l].indices.cpu().equal(expected.blocks[l].indices)) << l;
        EXPECT_TRUE(got.blocks[l].src_degree.cpu().equal(expected.blocks[l].src_degree)) << l;
        EXPECT_TRUE(got.blocks[l].edge_ids.cpu().equal(expected.blocks[l].edge_ids)) << l;
      }
      options.device = c10::Device(c10::kCPU);
    }
  }
}

}  // namespace
}  // namespace directgnn
