#include "sampling/link_sampler.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <set>
#include <utility>

#include "gpu/runtime.h"
#include "graph/coo_builder.h"
#include "graph/edge_lookup.h"
#include "test_util.h"

namespace directgnn {
namespace {

using Pair = std::pair<int64_t, int64_t>;

CsrGraph random_link_graph(int64_t n, int64_t edges, uint64_t seed) {
  at::manual_seed(seed);
  return build_csr_from_coo(at::randint(n, {edges}, at::kLong), at::randint(n, {edges}, at::kLong),
                            n, {true, true}, "random");
}

SamplerOptions fanouts(std::vector<int64_t> f) {
  SamplerOptions o;
  o.fanouts = std::move(f);
  return o;
}

// `count` edges of the graph as positives: every node's first neighbour, from node `from` on.
at::Tensor first_edges(const CsrGraph& g, int64_t count, int64_t from = 0) {
  std::vector<int64_t> pairs;
  const at::Tensor ptr = g.indptr, ids = g.indices.to(at::kLong);
  for (int64_t v = from; v < g.num_nodes() && static_cast<int64_t>(pairs.size()) < 2 * count; ++v) {
    if (ptr[v + 1].item<int64_t>() > ptr[v].item<int64_t>()) {
      pairs.insert(pairs.end(), {ids[ptr[v].item<int64_t>()].item<int64_t>(), v});
    }
  }
  return at::tensor(pairs, at::kLong).view({-1, 2});
}

// Every sampled edge of every block as a global (src, dst) pair.
std::set<Pair> sampled_edges(const MiniBatch& b) {
  std::set<Pair> out;
  const at::Tensor nodes = b.input_nodes;
  for (const Block& block : b.blocks) {
    const at::Tensor ptr = block.indptr, ids = block.indices.to(at::kLong);
    for (int64_t d = 0; d < block.num_dst; ++d) {
      for (int64_t e = ptr[d].item<int64_t>(); e < ptr[d + 1].item<int64_t>(); ++e) {
        out.insert({nodes[ids[e].item<int64_t>()].item<int64_t>(), nodes[d].item<int64_t>()});
      }
    }
  }
  return out;
}

TEST(LinkSampler, BinaryPairsIndexTheSeedsAndLabelPositivesFirst) {
  const CsrGraph g = random_link_graph(300, 1500, 1);
  LinkSamplerOptions o;
  o.neg_ratio = 3;
  const LinkSampler sampler(g, fanouts({5, 5}), o);
  const at::Tensor pos = first_edges(g, 20);
  const LinkBatch b = sampler.sample(pos, 7);
  ASSERT_EQ(b.edge_label_index.sizes(), (at::IntArrayRef{2, 80}));
  EXPECT_TRUE(b.edge_label.narrow(0, 0, 20).eq(1).all().item<bool>());
  EXPECT_TRUE(b.edge_label.narrow(0, 20, 60).eq(0).all().item<bool>());
  const at::Tensor nodes = b.sample.input_nodes;
  const at::Tensor global = nodes.index_select(0, b.edge_label_index.view(-1)).view({2, -1});
  EXPECT_TRUE(global.narrow(1, 0, 20).t().equal(pos));  // each positive's endpoints are seeds
  const int64_t seeds = b.sample.blocks.back().num_dst;
  EXPECT_LT(b.edge_label_index.max().item<int64_t>(), seeds);
  EXPECT_EQ(std::get<0>(at::_unique(nodes.narrow(0, 0, seeds))).numel(), seeds);  // distinct
}

TEST(LinkSampler, TripletShapesAndSources) {
  const CsrGraph g = random_link_graph(200, 1000, 2);
  LinkSamplerOptions o;
  o.mode = NegativeMode::kTriplet;
  o.neg_ratio = 4;
  const LinkSampler sampler(g, fanouts({3}), o);
  const at::Tensor pos = first_edges(g, 12);
  const LinkBatch b = sampler.sample(pos, 1);
  EXPECT_EQ(b.src_index.sizes(), (at::IntArrayRef{12}));
  EXPECT_EQ(b.dst_pos_index.sizes(), (at::IntArrayRef{12}));
  EXPECT_EQ(b.dst_neg_index.sizes(), (at::IntArrayRef{12, 4}));
  const at::Tensor nodes = b.sample.input_nodes;
  EXPECT_TRUE(nodes.index_select(0, b.src_index).equal(pos.select(1, 0)));
  EXPECT_TRUE(nodes.index_select(0, b.dst_pos_index).equal(pos.select(1, 1)));
  EXPECT_FALSE(b.edge_label_index.defined());
}

TEST(LinkSampler, SeedEdgesAndTheirReversesNeverAppearUnlessKept) {
  // Every neighbour (fan-out -1), so that a kept seed edge must appear.
  const CsrGraph g = random_link_graph(150, 600, 3);
  const at::Tensor pos = first_edges(g, 30);
  LinkSamplerOptions o;
  const LinkBatch b = LinkSampler(g, fanouts({-1, -1}), o).sample(pos, 2);
  const std::set<Pair> edges = sampled_edges(b.sample);
  for (int64_t i = 0; i < pos.size(0); ++i) {
    const int64_t u = pos[i][0].item<int64_t>(), v = pos[i][1].item<int64_t>();
    EXPECT_EQ(edges.count({u, v}) + edges.count({v, u}), 0u) << u << " " << v;
  }
  o.exclude_seed_edges = false;
  const std::set<Pair> kept =
      sampled_edges(LinkSampler(g, fanouts({-1, -1}), o).sample(pos, 2).sample);
  for (int64_t i = 0; i < pos.size(0); ++i) {
    const int64_t u = pos[i][0].item<int64_t>(), v = pos[i][1].item<int64_t>();
    EXPECT_EQ(kept.count({u, v}) + kept.count({v, u}), 2u);
  }
  EXPECT_GT(kept.size(), edges.size());
}

TEST(LinkSampler, ExactNegativesAreNeverEdges) {
  const CsrGraph g = random_link_graph(60, 700, 4);  // dense: a random pair is often an edge
  const EdgeLookup lookup(g);
  for (const NegativeMode mode : {NegativeMode::kBinary, NegativeMode::kTriplet}) {
    LinkSamplerOptions o;
    o.mode = mode;
    o.neg_ratio = 5;
    o.exact_negatives = true;
    const LinkBatch b = LinkSampler(g, fanouts({2}), o).sample(first_edges(g, 40), 3);
    const at::Tensor nodes = b.sample.input_nodes;
    if (mode == NegativeMode::kBinary) {
      const at::Tensor pairs = nodes.index_select(0, b.edge_label_index.view(-1)).view({2, -1});
      for (int64_t i = 40; i < pairs.size(1); ++i) {
        const int64_t u = pairs[0][i].item<int64_t>(), v = pairs[1][i].item<int64_t>();
        EXPECT_TRUE(u != v && !lookup.connects(u, v));
      }
    } else {
      for (int64_t i = 0; i < 40; ++i) {
        const int64_t u = nodes[b.src_index[i].item<int64_t>()].item<int64_t>();
        for (int64_t k = 0; k < 5; ++k) {
          const int64_t v = nodes[b.dst_neg_index[i][k].item<int64_t>()].item<int64_t>();
          EXPECT_TRUE(u != v && !lookup.connects(u, v));
        }
      }
    }
  }
}

TEST(LinkSampler, SameBatchForASeedWhateverTheThreadCount) {
  const CsrGraph g = random_link_graph(5000, 40000, 5);
  LinkSamplerOptions o;
  o.neg_ratio = 2;
  o.dist = NegativeDist::kDegree;
  const LinkSampler sampler(g, fanouts({10, 5}), o);
  const at::Tensor pos = first_edges(g, 1500);
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  const LinkBatch a = sampler.sample(pos, 11);
  at::set_num_threads(2);
  const LinkBatch b = sampler.sample(pos, 11);
  at::set_num_threads(threads);
  EXPECT_TRUE(a.edge_label_index.equal(b.edge_label_index));
  EXPECT_TRUE(a.sample.input_nodes.equal(b.sample.input_nodes));
  EXPECT_TRUE(a.sample.blocks[0].indices.equal(b.sample.blocks[0].indices));
  EXPECT_FALSE(sampler.sample(pos, 12).edge_label_index.equal(a.edge_label_index));
}

TEST(LinkSampler, DegreeNegativesFavourHubsAsDegreeToTheThreeQuarters) {
  // A star: node 0 joined to the 400 others, and a ring among those (degree 3 each).
  std::vector<int64_t> src, dst;
  for (int64_t v = 1; v <= 400; ++v) {
    src.insert(src.end(), {0, v});
    dst.insert(dst.end(), {v, v % 400 + 1});
  }
  const CsrGraph g = build_csr_from_coo(at::tensor(src, at::kLong), at::tensor(dst, at::kLong), 401,
                                        {true, true}, "star");
  LinkSamplerOptions o;
  o.mode = NegativeMode::kTriplet;
  o.neg_ratio = 200;
  o.dist = NegativeDist::kDegree;
  const LinkBatch b = LinkSampler(g, fanouts({1}), o).sample(first_edges(g, 20, 1), 0);
  const at::Tensor neg = b.sample.input_nodes.index_select(0, b.dst_neg_index.view(-1));
  const double hub = neg.eq(0).to(at::kDouble).mean().item<double>();
  const double want = std::pow(400.0, 0.75) / (std::pow(400.0, 0.75) + 400 * std::pow(3.0, 0.75));
  EXPECT_NEAR(hub, want, 0.02);  // 4000 draws; uniform would give 1/401
  o.dist = NegativeDist::kUniform;
  const LinkBatch u = LinkSampler(g, fanouts({1}), o).sample(first_edges(g, 20, 1), 0);
  EXPECT_LT(
      u.sample.input_nodes.index_select(0, u.dst_neg_index.view(-1)).eq(0).sum().item<int64_t>(),
      40);
}

TEST(LinkSampler, BadInputIsRefusedByName) {
  const CsrGraph g = random_link_graph(100, 400, 6);
  LinkSamplerOptions o;
  o.neg_ratio = 0;
  EXPECT_ERROR_CONTAINS(LinkSampler(g, fanouts({2}), o), "at least 1");
  o.neg_ratio = 1;
  const LinkSampler sampler(g, fanouts({2}), o);
  EXPECT_ERROR_CONTAINS(sampler.sample(at::zeros({3}, at::kLong), 0), "[B, 2]");
  EXPECT_ERROR_CONTAINS(sampler.sample(at::full({2, 2}, 100, at::kLong), 0), "out of range");
  EXPECT_ERROR_CONTAINS(sampler.sample(at::zeros({2, 2}, at::kFloat), 0), "int64 or int32");
  EXPECT_ERROR_CONTAINS(parse_negative_mode("pairs"), "binary");
  EXPECT_ERROR_CONTAINS(parse_negative_dist("zipf"), "degree^0.75");
  // A complete graph: no pair is a non-edge.
  std::vector<int64_t> src, dst;
  for (int64_t u = 0; u < 10; ++u) {
    for (int64_t v = 0; v < 10; ++v) {
      if (u != v) {
        src.push_back(u);
        dst.push_back(v);
      }
    }
  }
  const CsrGraph full = build_csr_from_coo(at::tensor(src, at::kLong), at::tensor(dst, at::kLong),
                                           10, {false, true}, "complete");
  o.exact_negatives = true;
  EXPECT_ERROR_CONTAINS(LinkSampler(full, fanouts({2}), o).sample(first_edges(full, 3), 0),
                        "too dense for exact negatives");
}

TEST(LinkSampler, TheGpuTwinNeedsAGpu) {
  if (gpu::available()) GTEST_SKIP() << "a GPU is present; GpuLinkSampler below runs instead";
  const CsrGraph g = random_link_graph(100, 400, 1);
  SamplerOptions on_gpu = fanouts({3});
  on_gpu.device = c10::Device(c10::kCUDA, 0);
  EXPECT_ERROR_CONTAINS(LinkSampler(g, on_gpu, {}), "sampler: gpu needs a GPU");
}

// One GPU link batch against the CPU's: pair indices, labels, input nodes and blocks.
void expect_same_batch(const LinkBatch& got, const LinkBatch& want, const std::string& what) {
  for (const auto& [a, b] : {std::pair{got.edge_label_index, want.edge_label_index},
                             {got.edge_label, want.edge_label},
                             {got.src_index, want.src_index},
                             {got.dst_pos_index, want.dst_pos_index},
                             {got.dst_neg_index, want.dst_neg_index}}) {
    ASSERT_EQ(a.defined(), b.defined()) << what;
    if (a.defined()) {
      EXPECT_TRUE(a.cpu().equal(b)) << what;
    }
  }
  EXPECT_TRUE(got.sample.input_nodes.cpu().equal(want.sample.input_nodes)) << what;
  EXPECT_EQ(got.sample.hop_edges, want.sample.hop_edges) << what;
  ASSERT_EQ(got.sample.blocks.size(), want.sample.blocks.size()) << what;
  for (size_t l = 0; l < got.sample.blocks.size(); ++l) {
    const Block &x = got.sample.blocks[l], &y = want.sample.blocks[l];
    EXPECT_TRUE(x.indptr.cpu().equal(y.indptr)) << what << ", block " << l;
    EXPECT_TRUE(x.indices.cpu().equal(y.indices)) << what << ", block " << l;
    EXPECT_TRUE(x.edge_ids.cpu().equal(y.edge_ids)) << what << ", block " << l;
  }
}

// The GPU twin (negatives kernel, relabelling and exclusion on the GPU) gives the CPU's
// batches: both negative modes, uniform and degree draws, exact or not, seed edges excluded or
// kept, both sampling modes, the graph pinned (exact negatives read its rows in place) or
// copied to the GPU (they copy the sorted rows too).
TEST(GpuLinkSampler, MatchesTheCpuLinkSamplerExactly) {
  if (!gpu::available()) GTEST_SKIP() << "no GPU here (" << gpu::unavailable_reason() << ")";
  const CsrGraph g = random_link_graph(3000, 30000, 4);
  const at::Tensor positives = first_edges(g, 400);
  for (int bits = 0; bits < 32; ++bits) {
    LinkSamplerOptions link;
    link.mode = bits & 1 ? NegativeMode::kTriplet : NegativeMode::kBinary;
    link.dist = bits & 2 ? NegativeDist::kDegree : NegativeDist::kUniform;
    link.exact_negatives = (bits & 4) != 0;
    link.exclude_seed_edges = (bits & 8) == 0;
    link.neg_ratio = 3;
    SamplerOptions options = fanouts({10, 5});
    options.mode = bits & 16 ? SampleMode::kOncePerNode : SampleMode::kFreshPerLayer;
    options.edge_ids = true;
    const LinkBatch want = LinkSampler(g, options, link).sample(positives, 21);
    options.device = c10::Device(c10::kCUDA, 0);
    options.graph = bits % 3 == 0 ? GraphPlacement::kDevice : GraphPlacement::kPinned;
    const LinkBatch got = LinkSampler(g, options, link).sample(positives, 21);
    expect_same_batch(got, want, "case " + std::to_string(bits));
  }
}

TEST(MessagePassingGraph, ADirectedGraphGainsEveryReverse) {
  const CsrGraph g = build_csr_from_coo(at::tensor(std::vector<int64_t>{0, 1, 2}, at::kLong),
                                        at::tensor(std::vector<int64_t>{1, 2, 1}, at::kLong), 3,
                                        {false, true}, "directed");
  const CsrGraph mp = message_passing_graph(g, true);
  const EdgeLookup lookup(mp);
  EXPECT_EQ(mp.num_edges(), 4);  // 0-1 both ways, 1-2 both ways (2 -> 1 was there already)
  EXPECT_TRUE(lookup.contains(1, 0) && lookup.contains(2, 1) && lookup.contains(1, 2));
  EXPECT_EQ(message_passing_graph(g, false).num_edges(), 3);
}

}  // namespace
}  // namespace directgnn
