#include "graph/node_order.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <utility>
#include <vector>

#include "graph/partition.h"
#include "test_util.h"

namespace directgnn {
namespace {

// An undirected graph from (u, v) pairs: both directions stored, rows sorted.
CsrGraph order_test_graph(int64_t n, const std::vector<std::pair<int64_t, int64_t>>& edges,
                          bool weighted = false) {
  std::vector<std::vector<std::pair<int64_t, float>>> rows(n);
  for (size_t e = 0; e < edges.size(); ++e) {
    const auto [u, v] = edges[e];
    rows[v].push_back({u, static_cast<float>(e)});
    rows[u].push_back({v, static_cast<float>(e) + 0.5f});
  }
  std::vector<int64_t> indptr{0}, indices;
  std::vector<float> weights;
  for (auto& row : rows) {
    std::sort(row.begin(), row.end());
    for (const auto& [u, w] : row) {
      indices.push_back(u);
      weights.push_back(w);
    }
    indptr.push_back(static_cast<int64_t>(indices.size()));
  }
  CsrGraph g{at::tensor(indptr, at::kLong), at::tensor(indices, at::kLong).to(at::kInt), {}};
  if (weighted) g.weights = at::tensor(weights, at::kFloat);
  return g;
}

// Every edge as (source, destination, weight), in the ids `ids` gives each row's node.
std::set<std::tuple<int64_t, int64_t, float>> edge_set(const CsrGraph& g, const at::Tensor& ids) {
  std::set<std::tuple<int64_t, int64_t, float>> out;
  const int64_t* ptr = g.indptr.data_ptr<int64_t>();
  const at::Tensor idx = g.indices.to(at::kLong);
  const int64_t* map = ids.data_ptr<int64_t>();
  for (int64_t v = 0; v < g.num_nodes(); ++v) {
    for (int64_t e = ptr[v]; e < ptr[v + 1]; ++e) {
      const float w = g.weights.defined() ? g.weights[e].item<float>() : 0.0f;
      out.insert({map[idx[e].item<int64_t>()], map[v], w});
    }
  }
  return out;
}

int64_t bandwidth(const CsrGraph& g) {
  const int64_t* ptr = g.indptr.data_ptr<int64_t>();
  const at::Tensor idx = g.indices.to(at::kLong);
  int64_t widest = 0;
  for (int64_t v = 0; v < g.num_nodes(); ++v) {
    for (int64_t e = ptr[v]; e < ptr[v + 1]; ++e) {
      widest = std::max(widest, std::abs(idx[e].item<int64_t>() - v));
    }
  }
  return widest;
}

TEST(NodeOrder, DegreePutsTheLargestInDegreeFirstAndBreaksTiesById) {
  // Node 3 has 3 neighbours, nodes 1 and 4 two, nodes 0, 2 and 5 one.
  const CsrGraph g = order_test_graph(6, {{3, 1}, {3, 4}, {3, 0}, {1, 2}, {4, 5}});
  const at::Tensor order = node_order(g, NodeOrder::kDegree);
  EXPECT_EQ(std::vector<int64_t>(order.data_ptr<int64_t>(), order.data_ptr<int64_t>() + 6),
            (std::vector<int64_t>{3, 1, 4, 0, 2, 5}));
}

TEST(NodeOrder, RcmGivesAShuffledPathBandwidthOne) {
  // A path 0-1-...-9 whose ids were shuffled: every edge joins ids far apart.
  const std::vector<int64_t> label{7, 2, 9, 0, 5, 3, 8, 1, 6, 4};
  std::vector<std::pair<int64_t, int64_t>> edges;
  for (size_t i = 0; i + 1 < label.size(); ++i) edges.push_back({label[i], label[i + 1]});
  const CsrGraph g = order_test_graph(10, edges);
  EXPECT_GT(bandwidth(g), 1);
  const at::Tensor order = node_order(g, NodeOrder::kRcm);
  const CsrGraph renumbered = renumber_graph(g, order, inverse_order(order));
  EXPECT_EQ(bandwidth(renumbered), 1);
}

// Two 6-cliques whose ids interleave (even ids one, odd the other), joined by the edge 0-1:
// METIS's two parts are the cliques, laid one after the other, each led by its bridge node
// (the largest in-degree), then by id.
TEST(NodeOrder, MetisLaysEachCommunityContiguouslyLedByItsLargestInDegree) {
  if (!metis_available()) GTEST_SKIP() << "this build has no METIS";
  std::vector<std::pair<int64_t, int64_t>> edges{{0, 1}};
  for (int64_t parity = 0; parity < 2; ++parity) {
    for (int64_t a = parity; a < 12; a += 2) {
      for (int64_t b = a + 2; b < 12; b += 2) edges.push_back({a, b});
    }
  }
  const CsrGraph g = order_test_graph(12, edges);
  const at::Tensor order = node_order(g, NodeOrder::kMetis, {2, false, 0});
  const std::vector<int64_t> o(order.data_ptr<int64_t>(), order.data_ptr<int64_t>() + 12);
  const int64_t first = o[0] % 2;
  EXPECT_TRUE(o[0] == 0 || o[0] == 1);
  EXPECT_EQ(o[6], 1 - o[0]);
  for (int64_t v = 0; v < 12; ++v) EXPECT_EQ(o[v] % 2, v < 6 ? first : 1 - first) << v;
  for (int64_t v = 1; v < 5; ++v) EXPECT_LT(o[v], o[v + 1]) << "ties go by id";
  EXPECT_EQ(metis_order_parts(12, 0), 2);
  EXPECT_EQ(metis_order_parts(1, 0), 1);
  EXPECT_EQ(metis_order_parts(100'000, 0), 7);
  EXPECT_EQ(metis_order_parts(int64_t{1} << 30, 0), 256);
  EXPECT_EQ(metis_order_parts(50, 9), 9);
  EXPECT_ERROR_CONTAINS(node_order(g, NodeOrder::kMetis, {13, false, 0}), "13 parts for 12 nodes");
}

TEST(NodeOrder, RenumberingKeepsEveryEdgeAndItsWeightAndSortsRows) {
  const CsrGraph g = order_test_graph(7, {{0, 6}, {1, 5}, {2, 6}, {3, 4}, {6, 5}, {0, 3}}, true);
  for (const NodeOrder how : {NodeOrder::kDegree, NodeOrder::kRcm, NodeOrder::kMetis}) {
    if (how == NodeOrder::kMetis && !metis_available()) continue;
    const at::Tensor order = node_order(g, how, {2, false, 0});
    const CsrGraph r = renumber_graph(g, order, inverse_order(order));
    EXPECT_EQ(edge_set(r, order), edge_set(g, at::arange(7, at::kLong))) << node_order_name(how);
    EXPECT_EQ(r.indices.scalar_type(), at::kInt);
    const at::Tensor idx = r.indices.to(at::kLong);
    const int64_t* ptr = r.indptr.data_ptr<int64_t>();
    for (int64_t v = 0; v < 7; ++v) {
      const at::Tensor row = idx.slice(0, ptr[v], ptr[v + 1]);
      EXPECT_TRUE(row.equal(std::get<0>(row.sort()))) << "row " << v;
    }
  }
}

TEST(NodeOrder, NodeIdsMustBeAPermutation) {
  EXPECT_TRUE(checked_node_ids(at::tensor({2, 0, 1}, at::kInt), 3, "m")
                  .equal(at::tensor({2, 0, 1}, at::kLong)));
  EXPECT_ERROR_CONTAINS(checked_node_ids(at::tensor({2, 0, 2}, at::kLong), 3, "ids.npy"),
                        "ids.npy: entries 0 and 2 both map to original id 2");
  EXPECT_ERROR_CONTAINS(checked_node_ids(at::tensor({0, 3, 1}, at::kLong), 3, "ids.npy"),
                        "entry 1 is 3, not an original node id (0 to 2)");
  EXPECT_ERROR_CONTAINS(checked_node_ids(at::tensor({0, 1}, at::kLong), 3, "ids.npy"),
                        "one integer per node (3)");
  EXPECT_ERROR_CONTAINS(checked_node_ids(at::tensor({0.0, 1.0, 2.0}), 3, "ids.npy"),
                        "one integer per node");
}

}  // namespace
}  // namespace directgnn
