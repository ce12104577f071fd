#include "graph/hetero_graph.h"

#include <ATen/ATen.h>

#include <vector>

#include "tensor_util.h"
#include "test_util.h"

namespace directgnn {
namespace {

using testing::ids;
using testing::values;

// Authors write papers, papers cite papers; papers are labelled, authors have no features.
HeteroDataset small_hetero() {
  HeteroDataset ds;
  ds.name = "tiny";
  ds.source = "tiny";
  ds.node_types.resize(2);
  ds.node_types[0].name = "author";
  ds.node_types[0].count = 3;
  ds.node_types[1].name = "paper";
  ds.node_types[1].count = 4;
  ds.node_types[1].features = at::arange(12, at::kFloat).reshape({4, 3});
  Relation writes;
  writes.src = "author";
  writes.rel = "writes";
  writes.dst = "paper";
  writes.graph = build_relation_csr(ids({0, 0, 1, 2}), ids({0, 1, 1, 3}), 3, 4, "writes");
  Relation cites;
  cites.src = cites.dst = "paper";
  cites.rel = "cites";
  cites.graph = build_relation_csr(ids({0, 1, 2}), ids({1, 2, 3}), 4, 4, "cites");
  ds.relations = {writes, cites};
  ds.target_type = 1;
  ds.labels = ids({0, 1, 0, 1});
  ds.splits.push_back({ids({0, 1}), ids({2}), ids({3})});
  return ds;
}

TEST(HeteroGraph, ValidSmallDatasetPassesAndResolvesTypes) {
  HeteroDataset ds = small_hetero();
  validate_hetero(ds, "tiny");
  EXPECT_EQ(ds.relations[0].src_type, 0);
  EXPECT_EQ(ds.relations[0].dst_type, 1);
  EXPECT_EQ(ds.num_classes, 2);
  EXPECT_EQ(ds.num_nodes(), 7);
  EXPECT_EQ(ds.num_edges(), 7);
  EXPECT_EQ(ds.relation_index("writes", "test"), 0);
  EXPECT_EQ(ds.relation_index("paper,cites,paper", "test"), 1);
  EXPECT_ERROR_CONTAINS(ds.relation_index("reads", "test"), "author,writes,paper");
}

TEST(HeteroGraph, BuildRelationCsrListsSourcesByDestinationSortedWithoutDuplicates) {
  // Papers 0..2 receive from authors; the duplicate 1->1 edge is kept once.
  const CsrGraph g =
      build_relation_csr(ids({2, 0, 1, 1, 0}), ids({1, 1, 1, 1, 2}), 3, 4, "edges.csv");
  EXPECT_EQ(values(g.indptr), (std::vector<int64_t>{0, 0, 3, 4, 4}));
  EXPECT_EQ(values(g.indices), (std::vector<int64_t>{0, 1, 2, 0}));
  EXPECT_EQ(g.indices.scalar_type(), at::kInt);
  EXPECT_ERROR_CONTAINS(build_relation_csr(ids({0, 3}), ids({0, 0}), 3, 4, "edges.csv"),
                        "edges.csv: source[1] = 3 is out of range for 3 nodes");
  EXPECT_ERROR_CONTAINS(build_relation_csr(ids({0}), ids({4}), 3, 4, "edges.csv"),
                        "destination[0] = 4 is out of range for 4 nodes");
  EXPECT_ERROR_CONTAINS(build_relation_csr(ids({0, 1}), ids({0}), 3, 4, "edges.csv"),
                        "2 sources but 1 destinations");
}

TEST(HeteroGraph, TransposeRelationListsDestinationsBySource) {
  const CsrGraph g = build_relation_csr(ids({0, 0, 1, 2}), ids({0, 1, 1, 3}), 3, 4, "writes");
  const CsrGraph t = transpose_relation(g, 3);
  EXPECT_EQ(values(t.indptr), (std::vector<int64_t>{0, 2, 3, 4}));
  EXPECT_EQ(values(t.indices), (std::vector<int64_t>{0, 1, 1, 3}));
  // Transposing twice gives the relation back.
  const CsrGraph back = transpose_relation(t, 4);
  EXPECT_TRUE(back.indptr.equal(g.indptr));
  EXPECT_TRUE(back.indices.to(at::kLong).equal(g.indices.to(at::kLong)));
}

TEST(HeteroGraph, AddReverseRelationsTransposesAndSymmetrises) {
  HeteroDataset ds = small_hetero();
  validate_hetero(ds, "tiny");
  add_reverse_relations(ds);
  validate_hetero(ds, "tiny", true);
  ASSERT_EQ(ds.relations.size(), 3u);
  const Relation& rev = ds.relations[ds.relation_index("paper,rev_writes,author", "test")];
  EXPECT_EQ(rev.src_type, 1);
  EXPECT_EQ(rev.dst_type, 0);
  EXPECT_EQ(values(rev.graph.indptr), (std::vector<int64_t>{0, 2, 3, 4}));
  EXPECT_EQ(values(rev.graph.indices), (std::vector<int64_t>{0, 1, 1, 3}));
  // The chain 0-1-2-3 of citations, in both directions; no rev_cites is added.
  const Relation& cites = ds.relations[ds.relation_index("cites", "test")];
  EXPECT_EQ(values(cites.graph.indptr), (std::vector<int64_t>{0, 1, 3, 5, 6}));
  EXPECT_EQ(values(cites.graph.indices), (std::vector<int64_t>{1, 0, 2, 1, 3, 2}));
}

TEST(HeteroGraph, AddReverseRelationsRefusesATakenName) {
  HeteroDataset ds = small_hetero();
  Relation clash;
  clash.src = "paper";
  clash.rel = "rev_writes";
  clash.dst = "author";
  clash.graph = build_relation_csr(ids({0}), ids({0}), 4, 3, "clash");
  ds.relations.push_back(clash);
  validate_hetero(ds, "tiny");
  EXPECT_ERROR_CONTAINS(add_reverse_relations(ds),
                        "cannot add the reverse of author,writes,paper: relation "
                        "paper,rev_writes,author already exists");
}

TEST(HeteroGraph, ValidateNamesTheRelationForAnUnknownType) {
  HeteroDataset ds = small_hetero();
  ds.relations[0].src = "writer";
  EXPECT_ERROR_CONTAINS(validate_hetero(ds, "tiny"),
                        "tiny (relation writer,writes,paper): names node type 'writer', which is "
                        "not among the types (author, paper); add the type or fix the relation");
}

TEST(HeteroGraph, ValidateNamesTheRelationForSourceIdsOutOfRange) {
  HeteroDataset ds = small_hetero();
  // Built for 5 authors, but the type has 3.
  ds.relations[0].graph = build_relation_csr(ids({4}), ids({0}), 5, 4, "writes");
  EXPECT_ERROR_CONTAINS(validate_hetero(ds, "tiny"),
                        "tiny (relation author,writes,paper): indices[0] = 4 is out of range for "
                        "3 source nodes");
  // A CSR with a row too many for its destination type.
  HeteroDataset rows = small_hetero();
  rows.relations[0].graph = build_relation_csr(ids({0}), ids({0}), 3, 5, "writes");
  EXPECT_ERROR_CONTAINS(validate_hetero(rows, "tiny"),
                        "destination type 'paper' has 4 nodes; a relation's CSR has one row per "
                        "destination node (5 entries)");
}

TEST(HeteroGraph, ValidateNamesTheTypeOfAFeatureTableOfTheWrongLength) {
  HeteroDataset ds = small_hetero();
  ds.node_types[1].features = at::zeros({5, 3}, at::kFloat);
  EXPECT_ERROR_CONTAINS(validate_hetero(ds, "tiny"),
                        "tiny (features of node type 'paper'): has shape [5, 3] but the type has 4 "
                        "nodes; give one row per node, [4, F]");
  HeteroDataset nan = small_hetero();
  nan.node_types[1].features[2][1] = NAN;
  EXPECT_ERROR_CONTAINS(validate_hetero(nan, "tiny"), "features row 2 column 1 is nan");
}

TEST(HeteroGraph, ValidateWantsLabelsForTheTargetType) {
  HeteroDataset ds = small_hetero();
  ds.labels = at::Tensor();
  EXPECT_ERROR_CONTAINS(validate_hetero(ds, "tiny"),
                        "tiny: target node type 'paper' has no labels; give labels for it (one "
                        "per node, -1 for unlabelled)");
  HeteroDataset split = small_hetero();
  split.splits[0].test = ids({4});
  EXPECT_ERROR_CONTAINS(validate_hetero(split, "tiny"), "labels of node type 'paper'");
}

TEST(HeteroGraph, WithoutALabelledTypeTheTargetSaysHowToNameOne) {
  HeteroDataset ds = small_hetero();
  ds.target_type = -1;
  ds.source = "recsys/";
  EXPECT_ERROR_CONTAINS(ds.target(), "recsys/: no node type is labelled");
  EXPECT_ERROR_CONTAINS(ds.target(), "(task link, target_relation SRC,REL,DST)");
}

TEST(HeteroGraph, ValidateRefusesADuplicateType) {
  HeteroDataset ds = small_hetero();
  ds.node_types.push_back(ds.node_types[0]);
  EXPECT_ERROR_CONTAINS(validate_hetero(ds, "tiny"), "tiny: node type 'author' appears twice");
  HeteroDataset rel = small_hetero();
  rel.relations.push_back(rel.relations[1]);
  EXPECT_ERROR_CONTAINS(validate_hetero(rel, "tiny"),
                        "tiny (relation paper,cites,paper): appears twice");
}

}  // namespace
}  // namespace directgnn
