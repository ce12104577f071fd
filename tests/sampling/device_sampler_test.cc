// The GPU sampler's algorithm, run on CPU tensors with the kernels' own pick arithmetic
// (sampling/uniform_pick.h); the same checks run on a GPU in tests/gpu_training_test.cc.
#include "sampling/device_sampler.h"

#include <ATen/ATen.h>

#include <map>
#include <numeric>
#include <set>

#include "graph/planted_partition.h"
#include "sampling/neighbor_sampler.h"
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

TEST(RelabelFirstSeen, KeepsFirstAppearanceOrder) {
  auto longs = [](std::vector<int64_t> v) { return at::tensor(v, at::kLong); };
  auto [nodes, local] = relabel_first_seen(longs({9, 4, 9, 7, 4, 1, 7}));
  EXPECT_TRUE(nodes.equal(longs({9, 4, 7, 1})));
  EXPECT_TRUE(local.equal(longs({0, 1, 0, 2, 1, 3, 2})));
}

class DeviceSamplerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    PlantedPartitionOptions o;
    o.num_nodes = 3000;
    o.avg_degree = 14;
    dataset_ = new Dataset(make_planted_partition(o));
  }
  static void TearDownTestSuite() { delete dataset_; }
  static Dataset* dataset_;
};
Dataset* DeviceSamplerTest::dataset_ = nullptr;

// The invariants every sampler here must keep (also checked for the CPU sampler).
// The hop that drew row i of block l (outermost first) of `layers` blocks.
size_t hop_of_row(const MiniBatch& batch, SampleMode mode, size_t l, int64_t i) {
  const size_t layers = batch.blocks.size();
  if (mode == SampleMode::kFreshPerLayer) return layers - 1 - l;
  size_t hop = 0;
  for (int64_t end = batch.hop_nodes[0]; i >= end; end += batch.hop_nodes[hop]) ++hop;
  return hop;
}

void expect_valid_batch(const CsrGraph& graph, const MiniBatch& batch, const at::Tensor& seeds,
                        const std::vector<int64_t>& fanouts,
                        SampleMode mode = SampleMode::kFreshPerLayer) {
  const at::Tensor ptr = graph.indptr, idx = graph.indices.to(at::kLong);
  const int64_t* p = ptr.data_ptr<int64_t>();
  const int64_t* ix = idx.data_ptr<int64_t>();
  ASSERT_EQ(batch.blocks.size(), fanouts.size());
  EXPECT_TRUE(batch.seeds.cpu().equal(seeds));
  // Layer l's destinations are the first num_dst of its sources, and the next layer's
  // sources are this layer's destinations.
  for (size_t l = 0; l + 1 < batch.blocks.size(); ++l) {
    EXPECT_EQ(batch.blocks[l].num_dst, batch.blocks[l + 1].num_src) << "layer " << l;
  }
  EXPECT_EQ(batch.blocks.back().num_dst, seeds.numel());
  EXPECT_EQ(batch.blocks.front().num_src, batch.input_nodes.numel());
  for (const Block& b : batch.blocks) {
    const at::Tensor bp = b.indptr.cpu(), bi = b.indices.cpu().to(at::kLong);
    ASSERT_EQ(bp.numel(), b.num_dst + 1);
    ASSERT_EQ(bi.numel(), bp[-1].item<int64_t>());
    EXPECT_TRUE(bi.numel() == 0 || bi.max().item<int64_t>() < b.num_src);
  }
  // input_nodes holds the outermost sources; every block's sources are a prefix of it.
  const at::Tensor all = batch.input_nodes.cpu();
  const int64_t* a = all.data_ptr<int64_t>();
  EXPECT_EQ(std::set<int64_t>(a, a + all.numel()).size(), static_cast<size_t>(all.numel()))
      << "input nodes repeat";
  EXPECT_TRUE(all.narrow(0, 0, seeds.numel()).equal(seeds)) << "seeds must come first";
  ASSERT_EQ(batch.hop_nodes.size(), fanouts.size() + 1);
  EXPECT_EQ(std::accumulate(batch.hop_nodes.begin(), batch.hop_nodes.end(), int64_t{0}),
            all.numel());
  for (size_t l = 0; l < batch.blocks.size(); ++l) {
    const Block& b = batch.blocks[l];
    const at::Tensor bp = b.indptr.cpu(), bi = b.indices.cpu().to(at::kLong);
    const int64_t* q = bp.data_ptr<int64_t>();
    const int64_t* li = bi.data_ptr<int64_t>();
    const at::Tensor sd = b.src_degree.cpu();
    for (int64_t i = 0; i < b.num_dst; ++i) {
      const int64_t u = a[i], deg = p[u + 1] - p[u];
      const int64_t fanout = fanouts[hop_of_row(batch, mode, l, i)];
      const std::set<int64_t> nbrs(ix + p[u], ix + p[u + 1]);
      EXPECT_EQ(q[i + 1] - q[i], fanout < 0 ? deg : std::min(deg, fanout)) << "node " << u;
      std::set<int64_t> picked;
      for (int64_t e = q[i]; e < q[i + 1]; ++e) {
        const int64_t v = a[li[e]];
        EXPECT_TRUE(nbrs.count(v)) << u << "->" << v << " is no edge";
        picked.insert(li[e]);
      }
      EXPECT_EQ(picked.size(), static_cast<size_t>(q[i + 1] - q[i])) << "repeated pick of " << u;
      EXPECT_EQ(sd[i].item<float>(), static_cast<float>(deg));
    }
  }
}

TEST_F(DeviceSamplerTest, KeepsTheSamplerInvariantsOnTheCpu) {
  const std::vector<int64_t> fanouts = {6, 4, -1};
  const DeviceSampler sampler(dataset_->graph, fanouts, c10::Device(c10::kCPU));
  const at::Tensor seeds = at::randperm(3000, at::kLong).narrow(0, 0, 100).clone();
  const MiniBatch batch = sampler.sample(seeds, 5);
  expect_valid_batch(dataset_->graph, batch, seeds, fanouts);
  // The CPU sampler keeps the same invariants.
  const NeighborSampler cpu(dataset_->graph, fanouts);
  expect_valid_batch(dataset_->graph, cpu.sample(seeds, 5), seeds, fanouts);
  // Deterministic for a seed, different across seeds.
  const MiniBatch again = sampler.sample(seeds, 5), other = sampler.sample(seeds, 6);
  EXPECT_TRUE(again.input_nodes.equal(batch.input_nodes));
  EXPECT_FALSE(other.input_nodes.equal(batch.input_nodes));
}

// PyG's hops: every node is drawn once, the blocks are prefixes of one CSR, the edges of hop
// h reach only nodes first seen by hop h (trim_to_layer's premise), and on the CPU each
// edge's id is its position in the graph.
void expect_pyg_hops(const CsrGraph& graph, const MiniBatch& batch) {
  const Block& outer = batch.blocks.front();
  const at::Tensor indptr = outer.indptr.cpu(), indices = outer.indices.cpu();
  int64_t nodes = batch.hop_nodes[0], edges = 0;
  for (size_t h = 0; h < batch.hop_edges.size(); ++h) {
    const Block& b = batch.blocks[batch.blocks.size() - 1 - h];
    EXPECT_TRUE(b.indptr.cpu().equal(indptr.narrow(0, 0, b.num_dst + 1))) << "hop " << h;
    EXPECT_TRUE(b.indices.cpu().equal(indices.narrow(0, 0, b.num_edges()))) << "hop " << h;
    const at::Tensor drawn = indices.narrow(0, edges, batch.hop_edges[h]);
    nodes += batch.hop_nodes[h + 1];
    edges += batch.hop_edges[h];
    EXPECT_TRUE(drawn.numel() == 0 || drawn.max().item<int64_t>() < nodes) << "hop " << h;
    EXPECT_EQ(b.num_edges(), edges);
  }
  if (!batch.edge_ids.defined()) return;
  ASSERT_EQ(batch.edge_ids.numel(), edges);
  const at::Tensor targets = graph.indices.to(at::kLong).index_select(0, batch.edge_ids);
  EXPECT_TRUE(targets.equal(batch.input_nodes.cpu().index_select(0, indices)));
  const at::Tensor counts = indptr.narrow(0, 1, outer.num_dst) - indptr.narrow(0, 0, outer.num_dst);
  const at::Tensor rows =
      at::repeat_interleave(batch.input_nodes.cpu().narrow(0, 0, outer.num_dst), counts);
  EXPECT_TRUE(batch.edge_ids.ge(graph.indptr.index_select(0, rows)).all().item<bool>());
  EXPECT_TRUE(batch.edge_ids.lt(graph.indptr.index_select(0, rows + 1)).all().item<bool>());
}

TEST_F(DeviceSamplerTest, OncePerNodeKeepsPygHopSemantics) {
  const std::vector<int64_t> fanouts = {6, 4, 3};
  const at::Tensor seeds = at::randperm(3000, at::kLong).narrow(0, 0, 50).clone();
  const NeighborSampler cpu(dataset_->graph, fanouts, SampleMode::kOncePerNode);
  const DeviceSampler twin(dataset_->graph, fanouts, c10::Device(c10::kCPU),
                           GraphPlacement::kPinned, SampleMode::kOncePerNode);
  for (const MiniBatch& batch : {cpu.sample(seeds, 3), twin.sample(seeds, 3)}) {
    expect_valid_batch(dataset_->graph, batch, seeds, fanouts, SampleMode::kOncePerNode);
    expect_pyg_hops(dataset_->graph, batch);
  }
  EXPECT_TRUE(cpu.sample(seeds, 3).edge_ids.defined());
  EXPECT_FALSE(twin.sample(seeds, 3).edge_ids.defined());
}

TEST_F(DeviceSamplerTest, EveryNeighbourReachesTheSameNodesInBothModes) {
  const std::vector<int64_t> fanouts = {-1, -1};
  const at::Tensor seeds = at::arange(0, 3000, 97, at::kLong);
  const NeighborSampler fresh(dataset_->graph, fanouts);
  const NeighborSampler once(dataset_->graph, fanouts, SampleMode::kOncePerNode);
  const MiniBatch a = fresh.sample(seeds, 1), b = once.sample(seeds, 1);
  EXPECT_TRUE(a.input_nodes.equal(b.input_nodes));
  EXPECT_EQ(a.hop_nodes, b.hop_nodes);
  // Fresh draws repeat the seeds' rows in the outer block; once-per-node draws do not.
  EXPECT_EQ(a.blocks.front().num_edges(), b.blocks.front().num_edges());
  EXPECT_EQ(a.hop_edges[0] + b.hop_edges[1], a.hop_edges[1]);
}

TEST_F(DeviceSamplerTest, GpuPlacementsNeedAGpu) {
  if (at::hasCUDA()) GTEST_SKIP() << "a GPU is present: tests/gpu_training_test.cc covers this";
  EXPECT_THROW(DeviceSampler(dataset_->graph, {5}, c10::Device(c10::kCUDA, 0)), Error);
}

}  // namespace
}  // namespace directgnn
