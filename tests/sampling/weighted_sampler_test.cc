// Weighted neighbour sampling (sampling/weighted_pick.h): the draw's distribution, its rules for
// zero weights and small degrees, its determinism, the weights' validation and their place in a
// dataset directory; and the GPU twin against the CPU one (skipped without a GPU).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

#include "core/random.h"
#include "gpu/runtime.h"
#include "graph/planted_partition.h"
#include "io/dataset.h"
#include "io/npy.h"
#include "sampling/cpu/neighbor_sampler.h"
#include "sampling/sampler.h"
#include "sampling/sampler_checks.h"
#include "sampling/weighted_pick.h"
#include "test_util.h"

namespace directgnn {
namespace {

TEST(WeightedPick, ItsLogarithmIsTheLibrarys) {
  for (double x = 1e-15; x < 1.0; x *= 1.37) {
    EXPECT_NEAR(weighted_pick::log_unit(x), std::log(x), 4e-16 * std::fabs(std::log(x)) + 1e-17)
        << x;
  }
  EXPECT_EQ(weighted_pick::log_unit(1.0), 0.0);
  EXPECT_EQ(weighted_pick::log_unit(0.5), std::log(0.5));
}

// The keys are IEEE arithmetic rounded at every step, the GPU's bits: these are keys that a
// build fusing multiply-adds (g++'s default with -march=native) gets wrong in the last bits,
// with the values of an unfused build (-O0 -ffp-contract=off), checked as the CPU sampler's
// own file computes them and as this one does.
TEST(WeightedPick, KeysAreExactBits) {
  struct Case {
    uint64_t node_key;
    int64_t j;
    float w;
    uint64_t bits;
  };
  const Case cases[] = {{0xb54cda58fbbee87eULL, 0, 0x1.99999ap-4f, 0xc022088b4b6e303eULL},
                        {0xcc623af8783354e7ULL, 4, 0x1p-1f, 0xbfeeab204eed8408ULL},
                        {0x8d12e6b76c84d11ULL, 0, 0x1.99999ap-4f, 0xc02573c82afb5f7eULL},
                        {0xfa8cfc37711c2db9ULL, 1, 0x1.99999ap-3f, 0xc012f89015d8fc77ULL},
                        {0x11a25cd6ed909a22ULL, 4, 0x1p-1f, 0xc00d76c026b64a12ULL},
                        {0x3039ULL, 7, 0x1p-2f, 0xc0226089b559564bULL}};
  for (const Case& c : cases) {
    for (const double key :
         {cpu::weighted_key(c.node_key, c.j, c.w), weighted_pick::key(c.node_key, c.j, c.w)}) {
      uint64_t bits;
      std::memcpy(&bits, &key, sizeof bits);
      EXPECT_EQ(bits, c.bits) << std::hex << c.node_key << " position " << std::dec << c.j;
    }
  }
}

// The GPU kernel's warp pick, 32 LaneTop lanes run in turn: the same picks, in the same order,
// as sorting every key, for degrees below, at and far above the lanes' kept candidates.
TEST(WeightedPick, TheWarpsLanesPickAsTheSort) {
  at::manual_seed(11);
  for (const int64_t deg : {1, 5, 31, 33, 64, 300, 3000}) {
    for (int trial = 0; trial < 20; ++trial) {
      const at::Tensor wt = at::rand({deg}) * at::rand({deg}).gt(0.3);
      const float* w = wt.data_ptr<float>();
      const uint64_t node_key = mix64(static_cast<uint64_t>(deg), static_cast<uint64_t>(trial));
      std::vector<std::pair<double, int64_t>> all;
      for (int64_t j = 0; j < deg; ++j) {
        if (w[j] > 0) all.emplace_back(weighted_pick::key(node_key, j, w[j]), j);
      }
      std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
        return weighted_pick::before(a.first, a.second, b.first, b.second);
      });
      std::vector<weighted_pick::LaneTop> lanes(32);
      for (int l = 0; l < 32; ++l) lanes[l].fill(node_key, w, deg, l, 32);
      for (size_t r = 0; r < all.size(); ++r) {
        int owner = -1;
        for (int l = 0; l < 32; ++l) {
          const weighted_pick::LaneTop& t = lanes[l];
          if (t.empty()) continue;
          const weighted_pick::LaneTop* o = owner < 0 ? nullptr : &lanes[owner];
          if (o == nullptr || weighted_pick::before(t.key[t.head], t.pos[t.head], o->key[o->head],
                                                    o->pos[o->head])) {
            owner = l;
          }
        }
        ASSERT_GE(owner, 0) << "deg " << deg << " pick " << r;
        ASSERT_EQ(lanes[owner].pos[lanes[owner].head], all[r].second)
            << "deg " << deg << " trial " << trial << " pick " << r;
        lanes[owner].pop(node_key, w, deg, owner, 32);
      }
    }
  }
}

// `stars` nodes, each with the same `weights.size()` leaves (ids stars, stars + 1, ...) as its
// neighbours in order, weighted `weights`; the leaves have no neighbours.
CsrGraph stars_graph(int64_t stars, const std::vector<float>& weights) {
  const auto d = static_cast<int64_t>(weights.size());
  CsrGraph g;
  g.indptr =
      at::cat({at::arange(0, stars * d + 1, d, at::kLong), at::full({d}, stars * d, at::kLong)});
  g.indices = (at::arange(d, at::kLong) + stars).repeat({stars});
  g.weights = at::tensor(weights, at::kFloat).repeat({stars});
  validate_csr(g, "stars");
  return g;
}

// How often each leaf (by position) is drawn over every star, at `fanout`.
std::vector<int64_t> leaf_counts(const CsrGraph& g, int64_t stars, int64_t fanout,
                                 uint64_t seed = 1) {
  SamplerOptions options{{fanout}};
  options.weighted = true;
  const MiniBatch batch = Sampler(g, options).sample(at::arange(stars, at::kLong), seed);
  const at::Tensor global =
      batch.input_nodes.index_select(0, batch.blocks[0].indices.to(at::kLong)) - stars;
  std::vector<int64_t> counts(static_cast<size_t>(g.num_nodes() - stars), 0);
  for (int64_t i = 0; i < global.numel(); ++i) ++counts[global[i].item<int64_t>()];
  return counts;
}

TEST(WeightedSampler, DrawsInProportionToTheWeights) {
  const int64_t stars = 40000;
  const CsrGraph g = stars_graph(stars, {1, 2, 3, 4, 0, 10});
  const std::vector<int64_t> counts = leaf_counts(g, stars, 1);
  EXPECT_EQ(counts[4], 0) << "a zero weight is never drawn";
  double chi2 = 0;
  for (size_t j = 0; j < counts.size(); ++j) {
    const double p = std::vector<double>{1, 2, 3, 4, 0, 10}[j] / 20.0;
    if (p == 0) continue;
    chi2 += std::pow(counts[j] - stars * p, 2) / (stars * p);
  }
  EXPECT_LT(chi2, 20.5) << "chi-square with 4 degrees of freedom (p = 0.0004)";
}

// Without replacement: the second pick is drawn from what the first left, so the pair {0, 1}
// of weights {1, 1, 2} comes 1/6 of the time and each pair with position 2 5/12.
TEST(WeightedSampler, DrawsWithoutReplacementAsSuccessiveDraws) {
  const int64_t stars = 30000;
  const CsrGraph g = stars_graph(stars, {1, 1, 2});
  SamplerOptions options{{2}};
  options.weighted = true;
  const MiniBatch batch = Sampler(g, options).sample(at::arange(stars, at::kLong), 5);
  const at::Tensor picks =
      batch.input_nodes.index_select(0, batch.blocks[0].indices.to(at::kLong)).view({stars, 2});
  std::map<int64_t, int64_t> pairs;
  for (int64_t s = 0; s < stars; ++s) {
    const int64_t a = picks[s][0].item<int64_t>() - stars, b = picks[s][1].item<int64_t>() - stars;
    ASSERT_NE(a, b);
    ++pairs[1 << a | 1 << b];
  }
  EXPECT_NEAR(pairs[0b011] / double(stars), 1.0 / 6, 0.01);
  EXPECT_NEAR(pairs[0b101] / double(stars), 5.0 / 12, 0.01);
  EXPECT_NEAR(pairs[0b110] / double(stars), 5.0 / 12, 0.01);
}

TEST(WeightedSampler, ZeroWeightsAndSmallDegrees) {
  // Fewer positive weights than the fan-out: just those.
  EXPECT_EQ(leaf_counts(stars_graph(10, {0, 0, 3, 0, 0}), 10, 2),
            (std::vector<int64_t>{0, 0, 10, 0, 0}));
  // Degree <= fan-out keeps every neighbour, zero weights too (pyg-lib's rule).
  EXPECT_EQ(leaf_counts(stars_graph(10, {0, 1}), 10, 2), (std::vector<int64_t>{10, 10}));
  EXPECT_EQ(leaf_counts(stars_graph(10, {0, 1, 0}), 10, -1), (std::vector<int64_t>{10, 10, 10}));
  // All zero: no neighbour.
  EXPECT_EQ(leaf_counts(stars_graph(10, {0, 0, 0}), 10, 1), (std::vector<int64_t>{0, 0, 0}));
}

// A planted-partition graph with random weights, some zero.
CsrGraph weighted_graph(const Dataset& ds) {
  CsrGraph g = ds.graph;
  at::manual_seed(3);
  g.weights = at::rand({g.num_edges()}) * at::rand({g.num_edges()}).gt(0.2);
  validate_csr(g, "weighted");
  return g;
}

Dataset planted(int64_t nodes) {
  PlantedPartitionOptions o;
  o.num_nodes = nodes;
  o.avg_degree = 15;
  return make_planted_partition(o);
}

TEST(WeightedSampler, ValidEdgeIdsAndDeterministicWhateverTheThreads) {
  const Dataset ds = planted(3000);
  const CsrGraph g = weighted_graph(ds);
  const at::Tensor seeds = at::arange(0, 3000, 11, at::kLong);
  for (const SampleMode mode : {SampleMode::kFreshPerLayer, SampleMode::kOncePerNode}) {
    SamplerOptions options{{8, 4}, mode};
    options.weighted = options.edge_ids = true;
    const Sampler sampler(g, options);
    at::set_num_threads(1);
    const MiniBatch a = sampler.sample(seeds, 4);
    at::set_num_threads(2);
    const MiniBatch b = sampler.sample(seeds, 4);
    expect_chained_blocks(a, seeds, 2);
    expect_edge_ids(g, a);
    EXPECT_TRUE(a.input_nodes.equal(b.input_nodes));
    for (size_t l = 0; l < a.blocks.size(); ++l) {
      const Block& block = a.blocks[l];
      EXPECT_TRUE(block.indices.equal(b.blocks[l].indices)) << l;
      // A zero-weight edge is drawn only by a node that keeps all its neighbours (degree at
      // most the largest fan-out).
      const at::Tensor bp = block.indptr;
      const at::Tensor rows =
          at::repeat_interleave(a.input_nodes.narrow(0, 0, block.num_dst),
                                bp.narrow(0, 1, block.num_dst) - bp.narrow(0, 0, block.num_dst));
      const at::Tensor deg = g.indptr.index_select(0, rows + 1) - g.indptr.index_select(0, rows);
      const at::Tensor zero = g.weights.index_select(0, block.edge_ids).eq(0);
      EXPECT_TRUE(deg.masked_select(zero).le(8).all().item<bool>()) << l;
    }
  }
}

TEST(WeightedSampler, BadWeightsAreRefused) {
  const Dataset ds = planted(200);
  CsrGraph g = ds.graph;
  g.weights = at::ones({g.num_edges() - 1});
  EXPECT_ERROR_CONTAINS(validate_csr(g, "w"), "edge weights have shape");
  g.weights = at::ones({g.num_edges()});
  g.weights[7] = -1.0;
  EXPECT_ERROR_CONTAINS(validate_csr(g, "w"), "w: edge weight 7 is -1");
  g.weights[7] = NAN;
  EXPECT_ERROR_CONTAINS(validate_csr(g, "w"), "must be finite and >= 0");
  g.weights = at::ones({g.num_edges()}, at::kLong);
  EXPECT_ERROR_CONTAINS(validate_csr(g, "w"), "use float32");
  SamplerOptions options{{3}};
  options.weighted = true;
  EXPECT_ERROR_CONTAINS(Sampler(ds.graph, options), "weighted: weighted sampling draws by edge");
}

TEST(WeightedSampler, DatasetDirectoriesKeepTheWeights) {
  Dataset ds = planted(300);
  ds.graph = weighted_graph(ds);
  testing::TempDirectory tmp;
  save_dataset_dir(ds, tmp.file("d"));
  const Dataset back = load_dataset_dir(tmp.file("d"));
  ASSERT_TRUE(back.graph.weights.defined());
  EXPECT_TRUE(back.graph.weights.equal(ds.graph.weights));
  save_npy(tmp.file("d/edge_weights.npy"), at::full({ds.graph.num_edges()}, -2.0f));
  EXPECT_ERROR_CONTAINS(load_dataset_dir(tmp.file("d")), "d/edge_weights.npy: edge weight 0 is -2");
}

TEST(GpuSampler, WeightedMatchesTheCpuSamplerExactly) {
  if (!gpu::available()) GTEST_SKIP() << "no GPU here (" << gpu::unavailable_reason() << ")";
  const Dataset ds = planted(5000);
  const CsrGraph g = weighted_graph(ds);
  const at::Tensor seeds = at::randperm(5000, at::kLong).narrow(0, 0, 512).clone();
  for (const SampleMode mode : {SampleMode::kFreshPerLayer, SampleMode::kOncePerNode}) {
    SamplerOptions options{{15, 10, 5}, mode};
    options.weighted = options.edge_ids = true;
    const MiniBatch expected = Sampler(g, options).sample(seeds, 9);
    for (const GraphPlacement placement : {GraphPlacement::kPinned, GraphPlacement::kDevice}) {
      options.device = c10::Device(c10::kCUDA, 0);
      options.graph = placement;
      const MiniBatch got = Sampler(g, options).sample(seeds, 9);
      EXPECT_TRUE(got.input_nodes.cpu().equal(expected.input_nodes));
      EXPECT_EQ(got.hop_edges, expected.hop_edges);
      for (size_t l = 0; l < got.blocks.size(); ++l) {
        EXPECT_TRUE(got.blocks[l].indptr.cpu().equal(expected.blocks[l].indptr)) << l;
        EXPECT_TRUE(got.blocks[l].indices.cpu().equal(expected.blocks[l].indices)) << l;
        EXPECT_TRUE(got.blocks[l].edge_ids.cpu().equal(expected.blocks[l].edge_ids)) << l;
      }
    }
  }
}

}  // namespace
}  // namespace directgnn
