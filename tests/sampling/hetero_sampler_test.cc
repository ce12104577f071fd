// The heterogeneous sampler (sampling/hetero_sampler.h): every sampled edge exists in its
// relation, per-relation fan-outs are honoured, the blocks are nested (destinations a prefix of
// sources, per type), and the result does not depend on the thread count. PyG's hops
// (sample_hops): each node is drawn from only at the hop after the one that first reached it,
// with exactly its fan-out of distinct edges, and new nodes come from that hop's picks.
#include "sampling/hetero_sampler.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <set>
#include <vector>

#include "gpu/runtime.h"
#include "graph/hetero_test_graph.h"
#include "sampling/gpu_hetero_sampler.h"
#include "sampling/uniform_pick.h"
#include "tensor_util.h"
#include "test_util.h"

namespace directgnn {
namespace {

std::set<int64_t> neighbours(const Relation& r, int64_t v) {
  const at::Tensor ptr = r.graph.indptr;
  const at::Tensor idx = r.graph.indices.to(at::kLong);
  std::set<int64_t> out;
  for (int64_t e = ptr[v].item<int64_t>(); e < ptr[v + 1].item<int64_t>(); ++e) {
    out.insert(idx[e].item<int64_t>());
  }
  return out;
}

// Checks every edge of every block against the graph and the fan-outs.
void check_batch(const HeteroDataset& ds, const HeteroSamplerOptions& o, const HeteroMiniBatch& b) {
  const size_t H = b.blocks.size();
  for (size_t l = 0; l < H; ++l) {
    const HeteroBlock& block = b.blocks[l];
    const size_t hop = H - 1 - l;
    for (size_t t = 0; t < ds.node_types.size(); ++t) {
      EXPECT_LE(block.num_dst[t], block.num_src[t]);
      if (l + 1 < H) {
        EXPECT_EQ(block.num_dst[t], b.blocks[l + 1].num_src[t]);
      }
    }
    for (size_t r = 0; r < ds.relations.size(); ++r) {
      const Relation& rel = ds.relations[r];
      const Block& blk = block.relations[r];
      ASSERT_EQ(blk.num_dst, block.num_dst[rel.dst_type]);
      ASSERT_EQ(blk.num_src, block.num_src[rel.src_type]);
      const at::Tensor ptr = blk.indptr;
      const at::Tensor idx = blk.indices.to(at::kLong);
      for (int64_t i = 0; i < blk.num_dst; ++i) {
        const int64_t v = b.input_nodes[rel.dst_type][i].item<int64_t>();
        const std::set<int64_t> nbr = neighbours(rel, v);
        const int64_t fanout = o.fanouts[r][hop];
        const int64_t want =
            fanout < 0 ? static_cast<int64_t>(nbr.size()) : std::min<int64_t>(fanout, nbr.size());
        const int64_t lo = ptr[i].item<int64_t>(), hi = ptr[i + 1].item<int64_t>();
        ASSERT_EQ(hi - lo, want) << rel.key() << " hop " << hop << " node " << v;
        std::set<int64_t> seen;
        for (int64_t e = lo; e < hi; ++e) {
          const int64_t local = idx[e].item<int64_t>();
          ASSERT_LT(local, blk.num_src);
          const int64_t u = b.input_nodes[rel.src_type][local].item<int64_t>();
          EXPECT_TRUE(nbr.count(u)) << rel.key() << ": " << u << " -> " << v << " is no edge";
          EXPECT_TRUE(seen.insert(u).second) << "neighbour drawn twice";
        }
      }
    }
  }
}

TEST(HeteroSampler, EveryEdgeExistsAndFanOutsAreHonoured) {
  const HeteroDataset ds = testing::random_hetero(3);
  const HeteroSamplerOptions o =
      parse_hetero_fanouts(ds, "3,2", "paper,cites,paper=2,-1;rev_writes=1,4", 2);
  const HeteroSampler sampler(ds, o);
  const at::Tensor seeds = at::arange(0, 60, 7, at::kLong);
  const HeteroMiniBatch b = sampler.sample(0, seeds, 11);
  ASSERT_EQ(b.blocks.size(), 2u);
  EXPECT_TRUE(at::equal(b.input_nodes[0].narrow(0, 0, seeds.numel()), seeds));
  EXPECT_EQ(b.blocks.back().num_dst[0], seeds.numel());
  EXPECT_EQ(b.blocks.back().num_dst[1], 0);
  check_batch(ds, o, b);
}

TEST(HeteroSampler, DoesNotDependOnTheThreadCount) {
  const HeteroDataset ds = testing::random_hetero(5, 3000, 2000, 50);
  const HeteroSamplerOptions o = parse_hetero_fanouts(ds, "4,3", "", 2);
  const HeteroSampler sampler(ds, o);
  const at::Tensor seeds = at::arange(0, 3000, 3, at::kLong);
  const int before = at::get_num_threads();
  at::set_num_threads(1);
  const HeteroMiniBatch one = sampler.sample(0, seeds, 9);
  at::set_num_threads(2);
  const HeteroMiniBatch two = sampler.sample(0, seeds, 9);
  at::set_num_threads(before);
  for (size_t t = 0; t < one.input_nodes.size(); ++t) {
    EXPECT_TRUE(at::equal(one.input_nodes[t], two.input_nodes[t]));
  }
  for (size_t l = 0; l < one.blocks.size(); ++l) {
    for (size_t r = 0; r < ds.relations.size(); ++r) {
      EXPECT_TRUE(
          at::equal(one.blocks[l].relations[r].indices, two.blocks[l].relations[r].indices));
    }
  }
  const HeteroMiniBatch other = sampler.sample(0, seeds, 10);
  EXPECT_FALSE(at::equal(one.input_nodes[1], other.input_nodes[1]));
}

// Seeds of two types: each type's seeds lead its nodes, every edge exists; with every edge of
// the seed pairs excluded (author -> paper directed in writes, paper -> author in rev_writes)
// none of them is drawn, though each row keeps its other neighbours.
TEST(HeteroSampler, SeedsOfSeveralTypesAndExcludedPairs) {
  const HeteroDataset ds = testing::random_hetero(4);
  const HeteroSamplerOptions o = parse_hetero_fanouts(ds, "-1,-1", "", 2);
  const HeteroSampler sampler(ds, o);
  const int writes = ds.relation_index("author,writes,paper", "test");
  const int rev = ds.relation_index("rev_writes", "test");
  // Every author -> paper edge of papers 0..9 is a seed pair.
  const Relation& w = ds.relations[writes];
  std::vector<int64_t> pairs, authors, papers;
  for (int64_t p = 0; p < 10; ++p) {
    papers.push_back(p);
    for (int64_t a : neighbours(w, p)) pairs.insert(pairs.end(), {a, p});
  }
  for (size_t i = 0; i < pairs.size(); i += 2) authors.push_back(pairs[i]);
  std::sort(authors.begin(), authors.end());
  authors.erase(std::unique(authors.begin(), authors.end()), authors.end());
  std::vector<at::Tensor> seeds(ds.node_types.size());
  seeds[0] = at::tensor(papers);
  seeds[1] = at::tensor(authors);
  const HeteroMiniBatch all = sampler.sample(seeds, 3);
  EXPECT_EQ(all.num_seeds, (std::vector<int64_t>{10, static_cast<int64_t>(authors.size()), 0}));
  EXPECT_TRUE(at::equal(all.input_nodes[1].narrow(0, 0, seeds[1].numel()), seeds[1]));
  check_batch(ds, o, all);
  const at::Tensor p = at::tensor(pairs).view({-1, 2});
  std::vector<ExcludedPairs> exclude(ds.relations.size());
  exclude[writes] = ExcludedPairs(p, false);
  exclude[rev] = ExcludedPairs(p.flip(1), false);
  const HeteroMiniBatch cut = sampler.sample(seeds, 3, &exclude);
  for (const int r : {writes, rev}) {
    const Relation& rel = ds.relations[r];
    const Block& kept = cut.blocks.back().relations[r];
    const Block& before = all.blocks.back().relations[r];
    const at::Tensor src = cut.input_nodes[rel.src_type], dst = cut.input_nodes[rel.dst_type];
    for (int64_t i = 0; i < kept.num_dst; ++i) {
      const int64_t v = dst[i].item<int64_t>();
      for (int64_t e = kept.indptr[i].item<int64_t>(); e < kept.indptr[i + 1].item<int64_t>();
           ++e) {
        const int64_t u = src[kept.indices[e].item<int64_t>()].item<int64_t>();
        EXPECT_FALSE(exclude[r].contains(u, v)) << rel.key() << ": " << u << " -> " << v;
      }
    }
    const int64_t dropped = before.indices.numel() - kept.indices.numel();
    EXPECT_EQ(dropped, p.size(0)) << rel.key();
  }
}

using testing::values;

// Checks PyG's hop semantics: per-hop counts, edges against the graph and the fan-outs, and
// that the nodes first reached at hop h + 1 are the new sources of hop h's picks, in order.
void check_hops(const HeteroDataset& ds, const HeteroSamplerOptions& o, const at::Tensor& seeds,
                int seed_type, const HeteroHops& b) {
  const size_t T = ds.node_types.size(), H = o.fanouts[0].size();
  std::vector<std::vector<int64_t>> nodes, start(T);
  for (size_t t = 0; t < T; ++t) {
    nodes.push_back(values(b.nodes[t]));
    ASSERT_EQ(b.hop_nodes[t].size(), H + 1);
    start[t].push_back(0);
    for (int64_t c : b.hop_nodes[t]) start[t].push_back(start[t].back() + c);
    ASSERT_EQ(start[t].back(), static_cast<int64_t>(nodes[t].size()));
    EXPECT_EQ(std::set<int64_t>(nodes[t].begin(), nodes[t].end()).size(), nodes[t].size());
  }
  EXPECT_EQ(values(b.nodes[seed_type].narrow(0, 0, seeds.numel())), values(seeds));
  std::vector<std::vector<std::set<int64_t>>> sources(H, std::vector<std::set<int64_t>>(T));
  for (size_t r = 0; r < ds.relations.size(); ++r) {
    const Relation& rel = ds.relations[r];
    const std::vector<int64_t> src = values(b.src[r]), dst = values(b.dst[r]),
                               edge = values(b.edge[r]), ptr = values(rel.graph.indptr),
                               idx = values(rel.graph.indices);
    ASSERT_EQ(src.size(), edge.size());
    ASSERT_EQ(dst.size(), edge.size());
    size_t e = 0;
    for (size_t h = 0; h < H; ++h) {
      const int64_t lo = start[rel.dst_type][h], hi = start[rel.dst_type][h + 1];
      std::vector<std::set<int64_t>> drawn(static_cast<size_t>(hi - lo));
      for (int64_t k = 0; k < b.hop_edges[r][h]; ++k, ++e) {
        ASSERT_TRUE(dst[e] >= lo && dst[e] < hi) << rel.key() << " hop " << h;
        const int64_t v = nodes[rel.dst_type][dst[e]];
        ASSERT_TRUE(edge[e] >= ptr[v] && edge[e] < ptr[v + 1]) << rel.key() << ": no edge of " << v;
        EXPECT_EQ(nodes[rel.src_type][src[e]], idx[edge[e]]);
        EXPECT_TRUE(drawn[dst[e] - lo].insert(edge[e]).second) << "edge drawn twice";
        EXPECT_LT(src[e], start[rel.src_type][h + 2]);
        sources[h][rel.src_type].insert(src[e]);
      }
      for (int64_t i = lo; i < hi; ++i) {
        const int64_t v = nodes[rel.dst_type][i];
        const int64_t want = uniform_pick::pick_count(ptr[v + 1] - ptr[v], o.fanouts[r][h]);
        EXPECT_EQ(static_cast<int64_t>(drawn[i - lo].size()), want) << rel.key() << " hop " << h;
      }
    }
    EXPECT_EQ(e, edge.size());
  }
  for (size_t h = 0; h < H; ++h) {
    for (size_t t = 0; t < T; ++t) {
      for (int64_t i = start[t][h + 1]; i < start[t][h + 2]; ++i) {
        EXPECT_TRUE(sources[h][t].count(i)) << "node " << i << " of type " << t << " is new at hop "
                                            << h + 1 << " but no pick of hop " << h;
      }
    }
  }
}

TEST(HeteroSampler, HopsDrawEachNodeOnceAtTheHopAfterItIsReached) {
  const HeteroDataset ds = testing::random_hetero(3);
  HeteroSamplerOptions o =
      parse_hetero_fanouts(ds, "3,2,2", "paper,cites,paper=2,-1,1;rev_writes=1,4,2", 3);
  o.fanouts[ds.relation_index("author,writes,paper", "test")] = {0, 2, -1};
  const HeteroSampler sampler(ds, o);
  const at::Tensor seeds = at::arange(0, 60, 7, at::kLong);
  const HeteroHops b = sampler.sample_hops(0, seeds, 11);
  check_hops(ds, o, seeds, 0, b);
  EXPECT_EQ(b.hop_nodes[1][1], 0);  // authors are reached through writes only, 0 at hop 0
  const at::Tensor fields = at::arange(0, 7, 2, at::kLong);
  check_hops(ds, o, fields, 2, sampler.sample_hops(2, fields, 12));
  EXPECT_ERROR_CONTAINS(HeteroSampler(ds, parse_hetero_fanouts(ds, "2", "", 1))
                            .sample_hops(0, at::tensor(std::vector<int64_t>{3, 3}), 0),
                        "appears twice");
}

TEST(HeteroSampler, HopsDoNotDependOnTheThreadCount) {
  const HeteroDataset ds = testing::random_hetero(5, 3000, 2000, 50);
  const HeteroSamplerOptions o = parse_hetero_fanouts(ds, "4,3", "", 2);
  const HeteroSampler sampler(ds, o);
  const at::Tensor seeds = at::arange(0, 3000, 3, at::kLong);
  const int before = at::get_num_threads();
  at::set_num_threads(1);
  const HeteroHops one = sampler.sample_hops(0, seeds, 9);
  at::set_num_threads(2);
  const HeteroHops two = sampler.sample_hops(0, seeds, 9);
  at::set_num_threads(before);
  check_hops(ds, o, seeds, 0, two);
  for (size_t t = 0; t < one.nodes.size(); ++t) EXPECT_TRUE(at::equal(one.nodes[t], two.nodes[t]));
  for (size_t r = 0; r < ds.relations.size(); ++r) {
    EXPECT_TRUE(at::equal(one.src[r], two.src[r]));
    EXPECT_TRUE(at::equal(one.dst[r], two.dst[r]));
    EXPECT_TRUE(at::equal(one.edge[r], two.edge[r]));
  }
  EXPECT_FALSE(at::equal(one.nodes[1], sampler.sample_hops(0, seeds, 10).nodes[1]));
}

TEST(HeteroSampler, FanOutsNameTheRelationAndTheFix) {
  const HeteroDataset ds = testing::random_hetero(1);
  EXPECT_ERROR_CONTAINS(parse_hetero_fanouts(ds, "2,2", "paper,likes,paper=3,3", 2),
                        "no relation 'paper,likes,paper'; the relations are");
  EXPECT_ERROR_CONTAINS(parse_hetero_fanouts(ds, "", "paper,cites,paper=3,3", 2),
                        "no fan-outs for relation author,writes,paper");
  EXPECT_ERROR_CONTAINS(parse_hetero_fanouts(ds, "2,2", "rev_writes=3", 2), "rev_writes");
  EXPECT_ERROR_CONTAINS(parse_hetero_fanouts(ds, "2,2", "cites", 2), "src,rel,dst=F1,F2");
  const HeteroSampler sampler(ds, parse_hetero_fanouts(ds, "2", "", 1));
  EXPECT_ERROR_CONTAINS(sampler.sample(0, at::tensor(std::vector<int64_t>{0, 60}), 0), "60");
}

// One rule with PyG's num_neighbors: a relation's fan-out may be 0, none at that hop; the
// fan-outs of every relation at once may not.
TEST(HeteroSampler, ARelationsFanOutMayBeZeroAndItsHopDrawsNothing) {
  const HeteroDataset ds = testing::random_hetero(1);
  const HeteroSamplerOptions o = parse_hetero_fanouts(ds, "2,2", "paper,cites,paper=0,3", 2);
  const int cites = ds.relation_index("paper,cites,paper", "test");
  EXPECT_EQ(o.fanouts[cites], (std::vector<int64_t>{0, 3}));
  const HeteroSampler sampler(ds, o);
  const HeteroMiniBatch b = sampler.sample(0, at::arange(0, 40, 3, at::kLong), 5);
  ASSERT_EQ(b.blocks.size(), 2u);
  EXPECT_EQ(b.blocks.back().relations[cites].num_edges(), 0) << "the seed hop draws no citation";
  EXPECT_GT(b.blocks.front().relations[cites].num_edges(), 0);
  EXPECT_ERROR_CONTAINS(parse_hetero_fanouts(ds, "2,2", "paper,cites,paper=-2,3", 2),
                        "must be positive, or -1 for all neighbours, or 0 for none");
  EXPECT_ERROR_CONTAINS(parse_hetero_fanouts(ds, "2,0", "", 2),
                        "'2,0': 0 is invalid; each fan-out must be positive, or -1 for all");
}

// The relations' whole-graph degrees ride on the blocks when asked for (the gcn model's).
TEST(HeteroSampler, BlocksCarryEachRelationsWholeGraphDegreesWhenAsked) {
  const HeteroDataset ds = testing::random_hetero(2);
  HeteroSamplerOptions o = parse_hetero_fanouts(ds, "3,2", "", 2);
  o.degrees = true;
  const HeteroMiniBatch b = HeteroSampler(ds, o).sample(0, at::arange(0, 50, 5, at::kLong), 3);
  const std::vector<RelationDegrees> degrees = relation_degrees(ds);
  for (const HeteroBlock& block : b.blocks) {
    for (size_t r = 0; r < ds.relations.size(); ++r) {
      const Relation& rel = ds.relations[r];
      const Block& got = block.relations[r];
      const at::Tensor dst = b.input_nodes[rel.dst_type].narrow(0, 0, got.num_dst);
      const at::Tensor src = b.input_nodes[rel.src_type].narrow(0, 0, got.num_src);
      EXPECT_TRUE(got.dst_degree.equal(degrees[r].in.index_select(0, dst))) << r;
      EXPECT_TRUE(got.src_degree.equal(degrees[r].out.index_select(0, src))) << r;
    }
  }
  // In-degrees are the CSR's row lengths; out-degrees count each source over the relation.
  const Relation& cites = ds.relations[ds.relation_index("paper,cites,paper", "test")];
  const at::Tensor out =
      at::bincount(cites.graph.indices.to(at::kLong), {}, ds.node_types[0].count);
  EXPECT_TRUE(
      degrees[ds.relation_index("paper,cites,paper", "test")].out.equal(out.to(at::kFloat)));
  EXPECT_FALSE(HeteroSampler(ds, parse_hetero_fanouts(ds, "3,2", "", 2))
                   .sample(0, at::arange(0, 5, at::kLong), 3)
                   .blocks[0]
                   .relations[0]
                   .src_degree.defined());
}

// The GPU twin (sampling/gpu_hetero_sampler.h) draws the CPU sampler's neighbours and relabels
// them in its order: the very same batch, from the relations pinned and copied to the GPU, with
// a relation whose fan-out is 0 at a hop and one taking every neighbour.
TEST(GpuHeteroSampler, MatchesTheCpuSamplerExactly) {
  if (!gpu::available()) GTEST_SKIP() << "no GPU here (" << gpu::unavailable_reason() << ")";
  const HeteroDataset ds = testing::random_hetero(4);
  HeteroSamplerOptions o = parse_hetero_fanouts(ds, "4,3", "paper,cites,paper=0,-1", 2);
  o.degrees = true;
  const at::Tensor seeds = at::randperm(ds.node_types[0].count, at::kLong).narrow(0, 0, 37);
  const HeteroMiniBatch want = HeteroSampler(ds, o).sample(0, seeds, 11);
  for (const GraphPlacement placement : {GraphPlacement::kPinned, GraphPlacement::kDevice}) {
    const gpu::HeteroNeighborSampler twin(ds, o, c10::Device(c10::kCUDA, 0), placement);
    const HeteroMiniBatch got = twin.sample(0, seeds, 11);
    EXPECT_TRUE(got.seeds.cpu().equal(want.seeds));
    EXPECT_EQ(got.num_seeds, want.num_seeds);
    ASSERT_EQ(got.input_nodes.size(), want.input_nodes.size());
    for (size_t t = 0; t < got.input_nodes.size(); ++t) {
      EXPECT_TRUE(got.input_nodes[t].is_cuda());
      EXPECT_TRUE(got.input_nodes[t].cpu().equal(want.input_nodes[t])) << t;
    }
    ASSERT_EQ(got.blocks.size(), want.blocks.size());
    for (size_t l = 0; l < got.blocks.size(); ++l) {
      EXPECT_EQ(got.blocks[l].num_src, want.blocks[l].num_src) << l;
      EXPECT_EQ(got.blocks[l].num_dst, want.blocks[l].num_dst) << l;
      for (size_t r = 0; r < ds.relations.size(); ++r) {
        const Block& g = got.blocks[l].relations[r];
        const Block& w = want.blocks[l].relations[r];
        EXPECT_TRUE(g.indptr.cpu().equal(w.indptr)) << l << " " << r;
        EXPECT_TRUE(g.indices.cpu().equal(w.indices)) << l << " " << r;
        EXPECT_TRUE(g.src_degree.cpu().equal(w.src_degree)) << l << " " << r;
        EXPECT_TRUE(g.dst_degree.cpu().equal(w.dst_degree)) << l << " " << r;
      }
    }
  }
  const gpu::HeteroNeighborSampler twin(ds, o, c10::Device(c10::kCUDA, 0));
  EXPECT_ERROR_CONTAINS(twin.sample(0, at::tensor(std::vector<int64_t>{0, 9999}), 1), "9999");
  EXPECT_ERROR_CONTAINS(twin.sample(0, at::tensor(std::vector<int64_t>{3, 3}), 1), "repeat");
}

TEST(GpuHeteroSampler, NeedsAGpu) {
  if (gpu::available()) GTEST_SKIP() << "a GPU is present; the twin runs above";
  const HeteroDataset ds = testing::random_hetero(1);
  EXPECT_ERROR_CONTAINS(gpu::HeteroNeighborSampler(ds, parse_hetero_fanouts(ds, "2", "", 1),
                                                   c10::Device(c10::kCUDA, 0)),
                        "sampler: gpu needs a GPU");
}

}  // namespace
}  // namespace directgnn
