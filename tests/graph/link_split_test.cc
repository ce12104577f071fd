#include "graph/link_split.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <set>
#include <utility>

#include "graph/coo_builder.h"
#include "graph/edge_lookup.h"
#include "graph/splits.h"
#include "test_util.h"

namespace directgnn {
namespace {

using Pair = std::pair<int64_t, int64_t>;

CsrGraph graph_of(std::vector<int64_t> src, std::vector<int64_t> dst, int64_t n, bool symmetric,
                  bool keep_self_loops = false) {
  return build_csr_from_coo(at::tensor(src, at::kLong), at::tensor(dst, at::kLong), n,
                            {symmetric, !keep_self_loops}, "test");
}

std::set<Pair> pairs_of(const at::Tensor& pairs) {
  std::set<Pair> out;
  const at::Tensor p = pairs.contiguous();
  for (int64_t i = 0; i < p.size(0); ++i) {
    out.insert({p[i][0].item<int64_t>(), p[i][1].item<int64_t>()});
  }
  return out;
}

// Every edge src -> dst of a CSR graph (src in dst's list), multi-edges once.
std::set<Pair> edges_of(const CsrGraph& g) {
  std::set<Pair> out;
  const at::Tensor ptr = g.indptr, ids = g.indices.to(at::kLong);
  for (int64_t v = 0; v < g.num_nodes(); ++v) {
    for (int64_t e = ptr[v].item<int64_t>(); e < ptr[v + 1].item<int64_t>(); ++e) {
      out.insert({ids[e].item<int64_t>(), v});
    }
  }
  return out;
}

// A planted random graph of n nodes and about n * degree / 2 undirected edges.
CsrGraph random_graph(int64_t n, int64_t degree, uint64_t seed) {
  at::manual_seed(seed);
  const at::Tensor src = at::randint(n, {n * degree / 2}, at::kLong);
  const at::Tensor dst = at::randint(n, {n * degree / 2}, at::kLong);
  return build_csr_from_coo(src, dst, n, {true, true}, "random");
}

TEST(UniqueEdges, EachUndirectedPairOnceAndEachDirectedEdgeOnce) {
  // 0-1 twice (a multi-edge), 1-2, a self-loop on 3 kept in the graph.
  CsrGraph und = graph_of({0, 0, 1, 3}, {1, 1, 2, 3}, 4, true, /*keep_self_loops=*/true);
  EXPECT_EQ(pairs_of(unique_edges(und, false)), (std::set<Pair>{{0, 1}, {1, 2}}));
  EXPECT_EQ(unique_edges(und, false).size(0), 2);
  CsrGraph dir = graph_of({0, 0, 2, 1, 3}, {1, 1, 1, 0, 3}, 4, false, true);
  EXPECT_EQ(pairs_of(unique_edges(dir, true)), (std::set<Pair>{{0, 1}, {2, 1}, {1, 0}}));
  EXPECT_EQ(unique_edges(dir, true).size(0), 3);
}

TEST(EdgeLookup, FindsEdgesInSortedAndUnsortedRows) {
  CsrGraph g;
  g.indptr = at::tensor(std::vector<int64_t>{0, 3, 3, 5}, at::kLong);
  g.indices = at::tensor(std::vector<int32_t>{2, 0, 1, 1, 0}, at::kInt);  // row 0 unsorted
  const EdgeLookup lookup(g);
  EXPECT_FALSE(lookup.sorted_in_place());
  EXPECT_TRUE(lookup.contains(2, 0) && lookup.contains(0, 0) && lookup.contains(1, 2));
  EXPECT_FALSE(lookup.contains(0, 1) || lookup.contains(2, 2));
  EXPECT_TRUE(lookup.connects(2, 1));  // 1 -> 2 is an edge
  EXPECT_TRUE(EdgeLookup(random_graph(50, 4, 1)).sorted_in_place());
}

TEST(RandomLinkSplit, DisjointSplitsAndAGraphOfTrainingEdgesOnly) {
  const CsrGraph g = random_graph(400, 8, 3);
  const std::set<Pair> all = pairs_of(unique_edges(g, false));
  LinkSplitOptions o;
  o.seed = 5;
  const RandomLinkSplit r = random_link_split(g, false, o);
  const auto m = static_cast<int64_t>(all.size());
  EXPECT_EQ(r.split.val.size(0), static_cast<int64_t>(0.05 * m));
  EXPECT_EQ(r.split.test.size(0), static_cast<int64_t>(0.1 * m));
  const std::set<Pair> train = pairs_of(r.split.train), val = pairs_of(r.split.val),
                       test = pairs_of(r.split.test);
  EXPECT_EQ(train.size() + val.size() + test.size(), all.size());
  std::set<Pair> joined = train;
  joined.insert(val.begin(), val.end());
  joined.insert(test.begin(), test.end());
  EXPECT_EQ(joined, all);  // disjoint, and together every edge once
  // Message passing: the training edges in both directions, nothing else.
  std::set<Pair> want;
  for (const auto& [u, v] : train) {
    want.insert({u, v});
    want.insert({v, u});
  }
  EXPECT_EQ(edges_of(r.graph), want);
  EXPECT_EQ(r.graph.num_edges(), static_cast<int64_t>(want.size()));
  // Shared negatives: one pair per positive, none an edge of the whole graph.
  ASSERT_EQ(r.split.negatives, LinkNegatives::kShared);
  EXPECT_EQ(r.split.val_neg.size(0), r.split.val.size(0));
  EXPECT_EQ(r.split.test_neg.size(0), r.split.test.size(0));
  const EdgeLookup whole(g);
  for (const at::Tensor& neg : {r.split.val_neg, r.split.test_neg}) {
    for (const auto& [u, v] : pairs_of(neg)) EXPECT_TRUE(u != v && !whole.connects(u, v));
  }
}

TEST(RandomLinkSplit, SameSplitForASeedWhateverTheThreadCount) {
  const CsrGraph g = random_graph(300, 6, 4);
  LinkSplitOptions o;
  o.seed = 9;
  o.neg_per_source = 5;
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  const RandomLinkSplit a = random_link_split(g, false, o);
  at::set_num_threads(2);
  const RandomLinkSplit b = random_link_split(g, false, o);
  at::set_num_threads(threads);
  EXPECT_TRUE(a.split.test.equal(b.split.test) && a.split.test_neg.equal(b.split.test_neg));
  EXPECT_TRUE(a.graph.indices.equal(b.graph.indices));
  o.seed = 10;
  EXPECT_FALSE(random_link_split(g, false, o).split.test.equal(a.split.test));
}

TEST(RandomLinkSplit, PerSourceNegativesAndDirectedGraphs) {
  // A directed ring plus chords: 0 -> 1 -> ... -> 59 -> 0 and i -> i + 7.
  std::vector<int64_t> src, dst;
  for (int64_t i = 0; i < 60; ++i) {
    src.insert(src.end(), {i, i});
    dst.insert(dst.end(), {(i + 1) % 60, (i + 7) % 60});
  }
  const CsrGraph g = graph_of(src, dst, 60, false);
  LinkSplitOptions o;
  o.val = 0.1;
  o.test = 0.2;
  o.neg_per_source = 4;
  const RandomLinkSplit r = random_link_split(g, true, o);
  EXPECT_EQ(r.split.negatives, LinkNegatives::kPerSource);
  EXPECT_EQ(r.split.test_neg.sizes(), (at::IntArrayRef{r.split.test.size(0), 4}));
  const EdgeLookup whole(g);
  for (int64_t i = 0; i < r.split.test.size(0); ++i) {
    const int64_t u = r.split.test[i][0].item<int64_t>();
    for (int64_t k = 0; k < 4; ++k) {
      const int64_t v = r.split.test_neg[i][k].item<int64_t>();
      EXPECT_TRUE(v != u && !whole.contains(u, v));
    }
  }
  // Directed: the graph keeps each training edge in its own direction only.
  std::set<Pair> train = pairs_of(r.split.train);
  EXPECT_EQ(edges_of(r.graph), train);
}

TEST(RandomLinkSplit, BadFractionsAndDenseGraphsAreRefused) {
  LinkSplitOptions o;
  o.val = 0.6;
  o.test = 0.5;
  EXPECT_ERROR_CONTAINS(check_link_split_options(o), "leave edges for training");
  EXPECT_ERROR_CONTAINS(parse_link_fractions("0.8,0.1"), "TRAIN,VAL,TEST");
  EXPECT_ERROR_CONTAINS(parse_link_fractions("0.8,0.1,0.2"), "sum to 1");
  EXPECT_ERROR_CONTAINS(parse_link_fractions("a,b,c"), "TRAIN,VAL,TEST");
  EXPECT_EQ(parse_link_fractions("0.85,0.05,0.1").test, 0.1);
  // A complete graph of 12 nodes has no negative pair at all.
  std::vector<int64_t> src, dst;
  for (int64_t u = 0; u < 12; ++u) {
    for (int64_t v = u + 1; v < 12; ++v) {
      src.push_back(u);
      dst.push_back(v);
    }
  }
  EXPECT_ERROR_CONTAINS(random_link_split(graph_of(src, dst, 12, true), false, {}),
                        "too dense for exact negatives");
  EXPECT_ERROR_CONTAINS(random_link_split(graph_of({0}, {1}, 3, true), false, {}), "too few");
}

// A consistent split of `g` (undirected), for the validation tests to break.
LinkSplit valid_split(const CsrGraph& whole, CsrGraph& graph) {
  LinkSplitOptions o;
  o.neg_per_source = 3;
  RandomLinkSplit r = random_link_split(whole, false, o);
  graph = r.graph;
  return r.split;
}

TEST(ValidateLinkSplit, AcceptsItsOwnSplitsAndNamesEachFault) {
  const CsrGraph whole = random_graph(200, 6, 7);
  CsrGraph graph;
  LinkSplit s = valid_split(whole, graph);
  s.train = s.train.to(at::kInt);  // int32 is widened
  validate_link_split(s, graph, false, "d");
  EXPECT_EQ(s.train.scalar_type(), at::kLong);

  LinkSplit leak = s;  // a test edge that is also in the graph: leaks into message passing
  leak.test = at::cat({leak.test, leak.train.narrow(0, 0, 1)});
  leak.test_neg = at::cat({leak.test_neg, leak.test_neg.narrow(0, 0, 1)});
  EXPECT_ERROR_CONTAINS(validate_link_split(leak, graph, false, "d"), "d/link/test.npy");
  leak.test = s.test.clone();
  leak.test_neg = s.test_neg.clone();
  // The reverse of a training edge is a leak too for an undirected graph.
  leak.val = at::cat({s.val, s.train.narrow(0, 0, 1).flip({1})});
  leak.val_neg = at::cat({s.val_neg, s.val_neg.narrow(0, 0, 1)});
  EXPECT_ERROR_CONTAINS(validate_link_split(leak, graph, false, "d"), "either direction");
  leak.eval_edges_in_graph = true;  // pairs that interact again, as ogbl-collab's
  validate_link_split(leak, graph, false, "d");

  LinkSplit missing = s;  // a training positive the graph lacks
  missing.train = at::cat({s.train, s.test.narrow(0, 0, 1)});
  EXPECT_ERROR_CONTAINS(validate_link_split(missing, graph, false, "d"), "is no edge");

  LinkSplit shape = s;
  shape.val = s.val.narrow(1, 0, 1);
  EXPECT_ERROR_CONTAINS(validate_link_split(shape, graph, false, "d"), "d/link/val.npy: has shape");
  LinkSplit range = s;
  range.test_neg = s.test_neg.clone();
  range.test_neg[0][0] = 200;
  EXPECT_ERROR_CONTAINS(validate_link_split(range, graph, false, "d"), "out of range for 200");
  LinkSplit rows = s;
  rows.val_neg = s.val_neg.narrow(0, 0, s.val_neg.size(0) - 1);
  EXPECT_ERROR_CONTAINS(validate_link_split(rows, graph, false, "d"), "one row of K");
  LinkSplit floats = s;
  floats.train = s.train.to(at::kFloat);
  EXPECT_ERROR_CONTAINS(validate_link_split(floats, graph, false, "d"), "int32 or int64");
  EXPECT_ERROR_CONTAINS(parse_link_negatives("pairs", "m"), "'shared'");
}

// A hand-written split lists each evaluation positive once and draws negatives that are no
// edge; a published one (an OGB import) keeps both, counted when it was imported.
TEST(ValidateLinkSplit, RepeatedPositivesAndNegativesThatAreEdgesAreRefusedUnlessPublished) {
  const CsrGraph whole = random_graph(200, 6, 7);
  CsrGraph graph;
  const LinkSplit s = valid_split(whole, graph);

  LinkSplit repeat = s;  // test positive 0 again, reversed: the same pair when undirected
  repeat.test = at::cat({s.test, s.test.narrow(0, 0, 1).flip({1})});
  repeat.test_neg = at::cat({s.test_neg, s.test_neg.narrow(0, 0, 1)});
  const std::string row = std::to_string(s.test.size(0));
  EXPECT_ERROR_CONTAINS(validate_link_split(repeat, graph, false, "d"),
                        "d/link/test.npy: positive " + row);
  EXPECT_ERROR_CONTAINS(validate_link_split(repeat, graph, false, "d"),
                        "repeats positive 0 (either direction)");

  LinkSplit edge = s;  // a validation negative that is a training positive, either direction
  edge.val_neg = s.val_neg.clone();
  const int64_t src = s.val[0][0].item<int64_t>();
  const at::Tensor touching = s.train.eq(src).any(1).nonzero().flatten();
  ASSERT_GT(touching.numel(), 0);
  const at::Tensor pair = s.train[touching[0].item<int64_t>()];
  edge.val_neg[0][1] = pair[0].item<int64_t>() == src ? pair[1] : pair[0];
  EXPECT_ERROR_CONTAINS(validate_link_split(edge, graph, false, "d"),
                        "d/link/val_neg.npy: negative [0, 1]");
  EXPECT_ERROR_CONTAINS(validate_link_split(edge, graph, false, "d"), "is an edge");

  LinkSplit test_pair = s;  // a negative that is a test positive: no edge of the graph
  test_pair.test_neg = s.test_neg.clone();
  test_pair.test_neg[0][2] = s.test[0][1];
  EXPECT_ERROR_CONTAINS(validate_link_split(test_pair, graph, false, "d"),
                        "d/link/test_neg.npy: negative [0, 2]");

  for (LinkSplit* published : {&repeat, &edge, &test_pair}) {
    published->published = true;
    EXPECT_NO_THROW(validate_link_split(*published, graph, false, "d"));
  }
  // Counted, as an import of a published split reports them.
  EXPECT_EQ(count_link_split_faults(s, graph, false).repeated, 0);
  const LinkSplitFaults r = count_link_split_faults(repeat, graph, false);
  EXPECT_EQ(r.repeated, 1);
  EXPECT_EQ(r.in_graph, 0);
  EXPECT_EQ(r.negative_edges, 0);
  EXPECT_EQ(count_link_split_faults(edge, graph, false).negative_edges, 1);
  test_pair.test_neg[1][0] = s.test[1][1];
  EXPECT_EQ(count_link_split_faults(test_pair, graph, false).negative_edges, 2);
  LinkSplit leak = s;  // two validation positives that are training edges of the graph
  leak.val = at::cat({s.val, s.train.narrow(0, 0, 2)});
  leak.val_neg = at::cat({s.val_neg, s.val_neg.narrow(0, 0, 2)});
  leak.eval_edges_in_graph = true;
  EXPECT_EQ(count_link_split_faults(leak, graph, false).in_graph, 2);
}

TEST(ChooseLinkSplit, StoredSplitOrSeededRandomOne) {
  Dataset ds;
  ds.source = "mem";
  ds.graph = random_graph(100, 6, 2);
  const ChosenLinkSplit a = choose_link_split(ds, 3);
  EXPECT_NE(a.description.find("random link split 85/5/10 (seed 3)"), std::string::npos);
  EXPECT_TRUE(choose_link_split(ds, 3).split.val.equal(a.split.val));
  ds.graph = a.graph;
  ds.link = a.split;
  const ChosenLinkSplit b = choose_link_split(ds, 4);
  EXPECT_TRUE(b.split.val.equal(a.split.val));
  EXPECT_NE(b.description.find("the dataset's link split"), std::string::npos);
  EXPECT_ERROR_CONTAINS(choose_split(ds, 0, 0), "train link prediction");  // no labels
}

}  // namespace
}  // namespace directgnn
