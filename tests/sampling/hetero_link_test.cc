// Link prediction on a relation of a heterogeneous graph: the random split of the target
// relation (graph/hetero_link_split.h) partitions its edges and takes the held-out ones out of
// the relation and its reverse; the link sampler (sampling/hetero_link_sampler.h) maps every
// scored pair to its endpoints, leaves the seed edges out of the neighbourhoods in both
// relations, draws negatives as asked, and does not depend on the thread count.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <set>
#include <utility>
#include <vector>

#include "graph/edge_lookup.h"
#include "graph/hetero_link_split.h"
#include "graph/hetero_test_graph.h"
#include "sampling/hetero_link_sampler.h"
#include "test_util.h"

namespace directgnn {
namespace {

using Pair = std::pair<int64_t, int64_t>;

std::set<Pair> pair_set(const at::Tensor& pairs) {
  std::set<Pair> out;
  const at::Tensor p = pairs.contiguous();
  for (int64_t i = 0; i < p.size(0); ++i) {
    out.emplace(p[i][0].item<int64_t>(), p[i][1].item<int64_t>());
  }
  return out;
}

HeteroDataset graph() { return testing::random_hetero(4, 300, 200, 20); }

TEST(HeteroLinkSplit, PartitionsTheRelationAndTakesHeldOutEdgesFromItsReverse) {
  const HeteroDataset ds = graph();
  const HeteroLinkTarget t = find_link_target(ds, "author,writes,paper", "test");
  EXPECT_EQ(t.reverse, ds.relation_index("rev_writes", "test"));
  EXPECT_FALSE(t.undirected);
  LinkSplitOptions o;
  o.val = 0.1;
  o.test = 0.2;
  o.seed = 3;
  const HeteroLinkSplit s = random_hetero_link_split(ds, t, o);
  const std::set<Pair> all = pair_set(target_edges(ds, t));
  std::set<Pair> seen;
  for (const at::Tensor* part : {&s.split.train, &s.split.val, &s.split.test}) {
    for (const Pair& p : pair_set(*part)) EXPECT_TRUE(seen.insert(p).second);
  }
  EXPECT_EQ(seen, all);
  // Every stored edge is a positive, those whose author and paper ids are equal included.
  const Relation& stored = ds.relations[t.relation];
  EXPECT_EQ(static_cast<int64_t>(all.size()), stored.num_edges());
  bool equal_ids = false;
  for (const Pair& p : all) equal_ids = equal_ids || p.first == p.second;
  EXPECT_TRUE(equal_ids) << "the test graph should hold an edge a -> p with a == p";
  EXPECT_EQ(s.split.val.size(0), static_cast<int64_t>(all.size() / 10));
  const EdgeLookup writes(s.graph.relations[t.relation].graph);
  const EdgeLookup rev(s.graph.relations[t.reverse].graph);
  for (const Pair& p : pair_set(s.split.train)) {
    EXPECT_TRUE(writes.contains(p.first, p.second));
    EXPECT_TRUE(rev.contains(p.second, p.first));
  }
  for (const at::Tensor* held : {&s.split.val, &s.split.test}) {
    for (const Pair& p : pair_set(*held)) {
      EXPECT_FALSE(writes.contains(p.first, p.second));
      EXPECT_FALSE(rev.contains(p.second, p.first));
    }
  }
  ASSERT_EQ(s.split.negatives, LinkNegatives::kShared);
  ASSERT_EQ(s.split.val_neg.sizes(), s.split.val.sizes());
  const EdgeLookup original(ds.relations[t.relation].graph);
  for (const Pair& p : pair_set(s.split.test_neg)) {
    EXPECT_FALSE(original.contains(p.first, p.second));
    EXPECT_LT(p.first, 200);
    EXPECT_LT(p.second, 300);
  }
  // The seed alone decides the split, whatever the thread count.
  const int before = at::get_num_threads();
  at::set_num_threads(1);
  const HeteroLinkSplit again = random_hetero_link_split(ds, t, o);
  at::set_num_threads(before);
  EXPECT_TRUE(at::equal(again.split.train, s.split.train));
  EXPECT_TRUE(at::equal(again.split.test_neg, s.split.test_neg));
  o.seed = 4;
  EXPECT_FALSE(at::equal(random_hetero_link_split(ds, t, o).split.val, s.split.val));
}

TEST(HeteroLinkSplit, ARelationWithinOneTypeIsSplitByPairs) {
  const HeteroDataset ds = graph();
  const HeteroLinkTarget t = find_link_target(ds, "cites", "test");
  EXPECT_TRUE(t.undirected);
  EXPECT_EQ(t.reverse, -1);
  LinkSplitOptions o;
  o.neg_per_source = 3;
  const HeteroLinkSplit s = random_hetero_link_split(ds, t, o);
  const EdgeLookup cites(s.graph.relations[t.relation].graph);
  const EdgeLookup original(ds.relations[t.relation].graph);
  for (const Pair& p : pair_set(s.split.val)) {
    EXPECT_LT(p.first, p.second);
    EXPECT_FALSE(cites.contains(p.first, p.second) || cites.contains(p.second, p.first));
  }
  ASSERT_EQ(s.split.negatives, LinkNegatives::kPerSource);
  ASSERT_EQ(s.split.val_neg.size(0), s.split.val.size(0));
  ASSERT_EQ(s.split.val_neg.size(1), 3);
  for (int64_t i = 0; i < s.split.val.size(0); ++i) {
    const int64_t src = s.split.val[i][0].item<int64_t>();
    for (int64_t k = 0; k < 3; ++k) {
      const int64_t dst = s.split.val_neg[i][k].item<int64_t>();
      EXPECT_NE(src, dst);
      EXPECT_FALSE(original.contains(src, dst) || original.contains(dst, src));
    }
  }
}

// One type, directed citations with some reciprocal pairs and an explicit reverse relation: a
// held-out pair leaves both relations in both directions; rev_cites as the target pairs with
// cites.
TEST(HeteroLinkSplit, WithinOneTypeAHeldOutPairLeavesBothRelationsBothWays) {
  HeteroDataset ds;
  ds.name = ds.source = "cites";
  ds.node_types = {{"p", 40, at::Tensor(), ""}};
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(11);
  at::Tensor src = at::randint(40, {300}, gen), dst = at::randint(40, {300}, gen);
  src = at::cat({src, dst.narrow(0, 0, 80)});  // reciprocal pairs
  dst = at::cat({dst, src.narrow(0, 0, 80)});
  Relation cites, rev;
  cites.src = cites.dst = rev.src = rev.dst = "p";
  cites.rel = "cites";
  rev.rel = "rev_cites";
  cites.graph = build_relation_csr(src, dst, 40, 40, "cites");
  rev.graph = build_relation_csr(dst, src, 40, 40, "rev_cites");
  ds.relations = {cites, rev};
  validate_hetero(ds, "cites");
  const HeteroLinkTarget t = find_link_target(ds, "cites", "test");
  EXPECT_EQ(t.reverse, 1);
  EXPECT_TRUE(t.undirected);
  EXPECT_EQ(find_link_target(ds, "rev_cites", "test").reverse, 0);
  LinkSplitOptions o;
  o.val = o.test = 0.2;
  const HeteroLinkSplit s = random_hetero_link_split(ds, t, o);
  const EdgeLookup kept(s.graph.relations[0].graph), kept_rev(s.graph.relations[1].graph);
  for (const at::Tensor* held : {&s.split.val, &s.split.test}) {
    for (const Pair& p : pair_set(*held)) {
      EXPECT_LE(p.first, p.second);
      for (const EdgeLookup* g : {&kept, &kept_rev}) {
        EXPECT_FALSE(g->contains(p.first, p.second) || g->contains(p.second, p.first));
      }
    }
  }
  const EdgeLookup original(ds.relations[0].graph);
  for (const Pair& p : pair_set(s.split.train)) {
    EXPECT_EQ(kept.contains(p.first, p.second), original.contains(p.first, p.second));
    EXPECT_EQ(kept.contains(p.second, p.first), original.contains(p.second, p.first));
  }
}

TEST(HeteroLinkSplit, AReverseRelationAsTheTargetPairsWithItsForward) {
  const HeteroDataset ds = graph();
  const HeteroLinkTarget t = find_link_target(ds, "rev_writes", "test");
  EXPECT_EQ(t.reverse, ds.relation_index("author,writes,paper", "test"));
  EXPECT_FALSE(t.undirected);
}

TEST(HeteroLinkSplit, AnUnknownRelationListsTheRelations) {
  const HeteroDataset ds = graph();
  EXPECT_ERROR_CONTAINS(find_link_target(ds, "author,likes,paper", "mag"),
                        "mag: no relation 'author,likes,paper'; the relations are");
}

struct LinkSetup {
  HeteroDataset ds = graph();
  HeteroLinkTarget target = find_link_target(ds, "author,writes,paper", "test");
  HeteroLinkSplit split = random_hetero_link_split(ds, target, LinkSplitOptions());
};

// Whether any block of `b` has an edge u -> v of relation r with (u, v) in `pairs`.
bool has_pair(const HeteroDataset& ds, const HeteroMiniBatch& b, int r,
              const std::set<Pair>& pairs) {
  const Relation& rel = ds.relations[r];
  for (const HeteroBlock& block : b.blocks) {
    const Block& blk = block.relations[r];
    for (int64_t i = 0; i < blk.num_dst; ++i) {
      const int64_t v = b.input_nodes[rel.dst_type][i].item<int64_t>();
      for (int64_t e = blk.indptr[i].item<int64_t>(); e < blk.indptr[i + 1].item<int64_t>(); ++e) {
        const int64_t u =
            b.input_nodes[rel.src_type][blk.indices[e].item<int64_t>()].item<int64_t>();
        if (pairs.count({u, v})) return true;
      }
    }
  }
  return false;
}

TEST(HeteroLinkSampler, PairsMapToTheirEndpointsAndSeedEdgesAreLeftOut) {
  LinkSetup s;
  const HeteroSamplerOptions fanouts = parse_hetero_fanouts(s.split.graph, "-1,-1", "", 2);
  LinkSamplerOptions link;
  link.neg_ratio = 2;
  const HeteroLinkSampler sampler(s.split.graph, s.target, fanouts, link);
  const at::Tensor pos = s.split.split.train.narrow(0, 0, 32);
  const HeteroLinkBatch b = sampler.sample(pos, 7);
  ASSERT_EQ(b.edge_label_index.sizes(), (at::IntArrayRef{2, 96}));
  EXPECT_EQ(b.edge_label.sum().item<double>(), 32);
  const at::Tensor src = b.sample.input_nodes[1].index_select(0, b.edge_label_index[0]);
  const at::Tensor dst = b.sample.input_nodes[0].index_select(0, b.edge_label_index[1]);
  EXPECT_TRUE(at::equal(src.narrow(0, 0, 32), pos.select(1, 0)));
  EXPECT_TRUE(at::equal(dst.narrow(0, 0, 32), pos.select(1, 1)));
  EXPECT_EQ(b.sample.num_seeds[1], std::get<0>(at::_unique2(src)).numel());
  std::set<Pair> forward = pair_set(pos), backward = pair_set(pos.flip(1));
  EXPECT_FALSE(has_pair(s.split.graph, b.sample, s.target.relation, forward));
  EXPECT_FALSE(has_pair(s.split.graph, b.sample, s.target.reverse, backward));
  link.exclude_seed_edges = false;
  const HeteroLinkBatch kept =
      HeteroLinkSampler(s.split.graph, s.target, fanouts, link).sample(pos, 7);
  EXPECT_TRUE(has_pair(s.split.graph, kept.sample, s.target.relation, forward));
  EXPECT_TRUE(has_pair(s.split.graph, kept.sample, s.target.reverse, backward));
}

TEST(HeteroLinkSampler, TripletsExactAndByDegree) {
  LinkSetup s;
  const HeteroSamplerOptions fanouts = parse_hetero_fanouts(s.split.graph, "3,2", "", 2);
  LinkSamplerOptions link;
  link.mode = NegativeMode::kTriplet;
  link.neg_ratio = 4;
  link.exact_negatives = true;
  link.dist = NegativeDist::kDegree;
  const HeteroLinkSampler sampler(s.split.graph, s.target, fanouts, link);
  const at::Tensor pos = s.split.split.train.narrow(0, 10, 50);
  const HeteroLinkBatch b = sampler.sample(pos, 1);
  ASSERT_EQ(b.dst_neg_index.sizes(), (at::IntArrayRef{50, 4}));
  const at::Tensor authors = b.sample.input_nodes[1], papers = b.sample.input_nodes[0];
  EXPECT_TRUE(at::equal(authors.index_select(0, b.src_index), pos.select(1, 0)));
  EXPECT_TRUE(at::equal(papers.index_select(0, b.dst_pos_index), pos.select(1, 1)));
  const Relation& writes = s.split.graph.relations[s.target.relation];
  const EdgeLookup edges(writes.graph);
  const at::Tensor neg = papers.index_select(0, b.dst_neg_index.reshape(-1)).view({50, 4});
  for (int64_t i = 0; i < 50; ++i) {
    for (int64_t k = 0; k < 4; ++k) {
      const int64_t d = neg[i][k].item<int64_t>();
      EXPECT_FALSE(edges.contains(pos[i][0].item<int64_t>(), d));
      // By degree^0.75: a paper no author writes is never drawn.
      EXPECT_GT(writes.graph.indptr[d + 1].item<int64_t>() - writes.graph.indptr[d].item<int64_t>(),
                0);
    }
  }
}

TEST(HeteroLinkSampler, DoesNotDependOnTheThreadCount) {
  LinkSetup s;
  const HeteroSamplerOptions fanouts = parse_hetero_fanouts(s.split.graph, "4,3", "", 2);
  const HeteroLinkSampler sampler(s.split.graph, s.target, fanouts, LinkSamplerOptions());
  const at::Tensor pos = s.split.split.train.narrow(0, 0, 200);
  const int before = at::get_num_threads();
  at::set_num_threads(1);
  const HeteroLinkBatch one = sampler.sample(pos, 5);
  at::set_num_threads(2);
  const HeteroLinkBatch two = sampler.sample(pos, 5);
  at::set_num_threads(before);
  EXPECT_TRUE(at::equal(one.edge_label_index, two.edge_label_index));
  for (size_t t = 0; t < one.sample.input_nodes.size(); ++t) {
    EXPECT_TRUE(at::equal(one.sample.input_nodes[t], two.sample.input_nodes[t]));
  }
  EXPECT_FALSE(at::equal(one.edge_label_index, sampler.sample(pos, 6).edge_label_index));
  EXPECT_ERROR_CONTAINS(sampler.sample(at::tensor(std::vector<int64_t>{0, 300}).view({1, 2}), 0),
                        "destination ids must be in [0, 300) of node type 'paper'");
}

}  // namespace
}  // namespace directgnn
