#include "graph/partition.h"

#include <ATen/ATen.h>

#include <filesystem>
#include <utility>
#include <vector>

#include "dist/hop_exchange.h"
#include "graph/planted_partition.h"
#include "io/dataset_reorder.h"
#include "io/npy.h"
#include "test_util.h"

namespace directgnn {
namespace {

using testing::TempDirectory;

// Two 6-cliques joined by one edge (5 - 6), both directions stored.
CsrGraph two_cliques() {
  std::vector<std::vector<int64_t>> rows(12);
  for (int64_t base : {0, 6}) {
    for (int64_t u = base; u < base + 6; ++u) {
      for (int64_t v = base; v < base + 6; ++v) {
        if (u != v) rows[v].push_back(u);
      }
    }
  }
  rows[5].push_back(6);
  rows[6].push_back(5);
  std::vector<int64_t> indptr{0}, indices;
  for (auto& row : rows) {
    std::sort(row.begin(), row.end());
    indices.insert(indices.end(), row.begin(), row.end());
    indptr.push_back(static_cast<int64_t>(indices.size()));
  }
  return {at::tensor(indptr, at::kLong), at::tensor(indices, at::kLong).to(at::kInt), {}};
}

TEST(Partition, RandomIsKeyedInRangeAndNearlyEven) {
  PlantedPartitionOptions po;
  po.num_nodes = 20000;
  const Dataset ds = make_planted_partition(po);
  PartitionOptions o;
  o.parts = 4;
  o.method = PartitionMethod::kRandom;
  o.seed = 3;
  o.seeds = ds.splits[0].train;
  const Partition a = partition_graph(ds.graph, o), b = partition_graph(ds.graph, o);
  EXPECT_TRUE(a.owner.equal(b.owner));
  EXPECT_GE(a.owner.min().item<int32_t>(), 0);
  EXPECT_LE(a.owner.max().item<int32_t>(), 3);
  EXPECT_LT(a.stats.node_imbalance, 1.05);
  EXPECT_LT(a.stats.seed_imbalance, 1.1);
  o.seed = 4;
  EXPECT_FALSE(partition_graph(ds.graph, o).owner.equal(a.owner));
  // A random cut keeps about 3/4 of the edges between parts.
  EXPECT_NEAR(static_cast<double>(a.stats.edge_cut) / ds.graph.num_edges(), 0.75, 0.03);
}

TEST(Partition, StatsCountNodesEdgesSeedsAndTheCut) {
  const CsrGraph g = two_cliques();
  at::Tensor owner = at::zeros({12}, at::kInt);
  owner.narrow(0, 6, 6).fill_(1);
  const PartitionStats s = partition_stats(g, owner, 2, at::tensor({0, 1, 7}, at::kLong));
  EXPECT_EQ(s.nodes, (std::vector<int64_t>{6, 6}));
  EXPECT_EQ(s.edges, (std::vector<int64_t>{31, 31}));
  EXPECT_EQ(s.seeds, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(s.edge_cut, 2);
  EXPECT_DOUBLE_EQ(s.seed_imbalance, 2.0 / 1.5);
}

TEST(Partition, OrderGivesEachPartAContiguousRangeInIdOrder) {
  const at::Tensor owner = at::tensor({1, 0, 2, 1, 0, 1}, at::kInt);
  const PartitionOrder o = partition_order(owner, 3);
  EXPECT_TRUE(o.order.equal(at::tensor({1, 4, 0, 3, 5, 2}, at::kLong)));
  EXPECT_EQ(o.offsets, (std::vector<int64_t>{0, 2, 5, 6}));
}

TEST(Partition, MetisCutsTheBridgeBetweenTwoCliques) {
  PartitionOptions o;
  o.parts = 2;
  if (!metis_available()) {
    EXPECT_ERROR_CONTAINS(partition_graph(two_cliques(), o), "libmetis-dev");
    GTEST_SKIP() << "this build has no METIS";
  }
  const Partition p = partition_graph(two_cliques(), o);
  EXPECT_EQ(p.stats.edge_cut, 2);
  EXPECT_EQ(p.stats.nodes, (std::vector<int64_t>{6, 6}));
}

TEST(Partition, MetisCutsFewerEdgesThanRandomOnAPlantedPartition) {
  if (!metis_available()) GTEST_SKIP() << "this build has no METIS";
  PlantedPartitionOptions po;
  po.num_nodes = 4000;
  po.num_classes = 4;
  po.homophily = 0.9;
  const Dataset ds = make_planted_partition(po);
  PartitionOptions o;
  o.parts = 4;
  o.seeds = ds.splits[0].train;
  const Partition metis = partition_graph(ds.graph, o);
  o.method = PartitionMethod::kRandom;
  const Partition random = partition_graph(ds.graph, o);
  EXPECT_LT(metis.stats.edge_cut * 2, random.stats.edge_cut);
  EXPECT_LT(metis.stats.node_imbalance, 1.1);
  EXPECT_LT(metis.stats.seed_imbalance, 1.15);
}

// A planted-partition graph of `nodes` nodes in 3 random parts, renumbered by part and written
// to `out` with its book (the features by part or in one file), as `directgnn partition` does.
struct Written {
  Dataset source;
  Partition p;
  PartitionOrder order;
};
Written write_partitioned(const std::string& out, int64_t nodes, bool features_by_part,
                          bool structure_by_part = false) {
  PlantedPartitionOptions po;
  po.num_nodes = nodes;
  Written w{make_planted_partition(po), {}, {}};
  PartitionOptions o;
  o.parts = 3;
  o.method = PartitionMethod::kRandom;
  w.p = partition_graph(w.source.graph, o);
  w.order = partition_order(w.p.owner, 3);
  Dataset ds = w.source;
  renumber_dataset(ds, w.order.order, "random");
  ds.partition = {"random",
                  w.order.offsets,
                  w.p.stats.edges,
                  w.p.stats.seeds,
                  w.p.stats.edge_cut,
                  features_by_part,
                  {},
                  structure_by_part};
  save_dataset_dir(ds, out, permuted_features(ds.features, w.order.order, at::kFloat));
  return w;
}

TEST(Partition, APartitionedDatasetKeepsItsBookAndOriginalIds) {
  TempDirectory dir;
  const auto [source, p, order] = write_partitioned(dir.file("parts"), 500, false);
  const Dataset back = load_dataset(dir.file("parts"));
  EXPECT_EQ(back.partition.offsets, order.offsets);
  EXPECT_EQ(back.partition.edge_cut, p.stats.edge_cut);
  EXPECT_TRUE(back.features.equal(source.features.index_select(0, back.node_ids)));
  // Stored id v belongs to the part whose range holds it: the owner of its original node.
  const at::Tensor owners = p.owner.index_select(0, back.node_ids);
  for (int64_t k = 0; k < 3; ++k) {
    const at::Tensor range =
        owners.narrow(0, order.offsets[k], order.offsets[k + 1] - order.offsets[k]);
    EXPECT_TRUE(range.eq(k).all().item<bool>()) << "part " << k;
  }
  // Renumbering a partitioned dataset again drops its book.
  Dataset again = back;
  reorder_dataset(again, NodeOrder::kDegree);
  EXPECT_TRUE(again.partition.method.empty());
}

// Features stored by part: each part's rows in its own file, the whole table when one process
// loads it, one part's rows for a rank of a sharded run, and a part file of the wrong shape
// named.
TEST(Partition, FeaturesStoredByPartLoadWholeOrOnePart) {
  TempDirectory dir;
  const std::string out = dir.file("parts");
  const auto [source, p, order] = write_partitioned(out, 300, true);
  EXPECT_FALSE(std::filesystem::exists(out + "/features.npy"));
  const Dataset whole = load_dataset(out);
  EXPECT_TRUE(whole.partition.features_by_part);
  EXPECT_EQ(whole.partition.checked.size(), 3u);
  EXPECT_TRUE(whole.features_checked);
  EXPECT_EQ(whole.feature_part, -1);
  EXPECT_TRUE(whole.features.equal(source.features.index_select(0, whole.node_ids)));
  ImportOptions rank1;
  rank1.feature_part = 1;
  rank1.feature_parts = 3;
  const Dataset one = load_dataset(out, rank1);
  EXPECT_EQ(one.feature_part, 1);
  EXPECT_TRUE(one.features_checked);
  const int64_t lo = order.offsets[1], rows = order.offsets[2] - lo;
  EXPECT_TRUE(one.features.equal(whole.features.narrow(0, lo, rows)));
  // Another number of ranks than parts loads the whole table.
  rank1.feature_parts = 2;
  EXPECT_EQ(load_dataset(out, rank1).feature_part, -1);
  // A part file that does not match the book is named.
  save_npy(out + "/part-2/features.npy", at::zeros({3, source.feat_dim()}));
  EXPECT_ERROR_CONTAINS(load_dataset(out), "part-2/features.npy: has shape [3,");
}

// The structure stored by part: each part's in-edges in its own files, the whole graph when one
// process loads it, one part's edges (every node keeping its row) for a rank of a run that
// shards the structure, and a part file that disagrees with the book named.
TEST(Partition, StructureStoredByPartLoadsWholeOrOnePart) {
  TempDirectory dir;
  const std::string out = dir.file("parts");
  write_partitioned(out, 300, false, true);
  const std::string reference = dir.file("whole");
  write_partitioned(reference, 300, false, false);
  EXPECT_FALSE(std::filesystem::exists(out + "/indptr.npy"));
  EXPECT_TRUE(std::filesystem::exists(out + "/part-2/indices.npy"));
  const Dataset whole = load_dataset(reference);
  const Dataset joined = load_dataset(out);
  EXPECT_TRUE(joined.partition.structure_by_part);
  EXPECT_EQ(joined.structure_part, -1);
  EXPECT_TRUE(joined.graph.indptr.equal(whole.graph.indptr));
  EXPECT_TRUE(joined.graph.indices.equal(whole.graph.indices));
  ImportOptions rank1;
  rank1.structure_part = 1;
  rank1.structure_parts = 3;
  const Dataset one = load_dataset(out, rank1);
  EXPECT_EQ(one.structure_part, 1);
  const std::vector<int64_t>& offsets = whole.partition.offsets;
  const CsrGraph expected = partitioned_rows(whole.graph, offsets[1], offsets[2]);
  EXPECT_TRUE(one.graph.indptr.equal(expected.indptr));
  EXPECT_TRUE(one.graph.indices.equal(expected.indices));
  // Another number of ranks than parts loads the whole graph.
  rank1.structure_parts = 2;
  EXPECT_EQ(load_dataset(out, rank1).structure_part, -1);
  // A part whose edges disagree with the book is named.
  save_npy(out + "/part-0/indptr.npy", at::zeros({3}, at::kLong));
  EXPECT_ERROR_CONTAINS(load_dataset(out), "part-0/indptr.npy: has shape [3]");
}

}  // namespace
}  // namespace directgnn
