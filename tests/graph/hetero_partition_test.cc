#include "graph/hetero_partition.h"

#include <ATen/ATen.h>

#include <map>
#include <string>
#include <vector>

#include "graph/mag_generator.h"
#include "graph/node_order.h"
#include "io/dataset_reorder.h"
#include "io/hetero_dir.h"
#include "test_util.h"

namespace directgnn {
namespace {

HeteroDataset small_mag() {
  MagOptions o;
  o.scale = 0.005;
  o.num_classes = 8;
  o.feat_dim = 16;
  o.seed = 3;
  return generate_mag(o);
}

// A relation's edges as sorted keys src * (dst count) + dst, in ids mapped through `src_ids`
// and `dst_ids` (original ids of stored nodes; undefined: as stored).
at::Tensor edge_keys(const Relation& r, const at::Tensor& src_ids, const at::Tensor& dst_ids) {
  at::Tensor dst = at::repeat_interleave(r.graph.degrees());
  at::Tensor src = r.graph.indices.to(at::kLong);
  if (src_ids.defined()) src = src_ids.index_select(0, src);
  if (dst_ids.defined()) dst = dst_ids.index_select(0, dst);
  return std::get<0>((src * r.graph.num_nodes() + dst).sort());
}

PartitionOptions options(PartitionMethod method, int64_t parts, const HeteroDataset& ds) {
  PartitionOptions o;
  o.parts = parts;
  o.method = method;
  o.seed = 7;
  o.seeds = ds.splits[0].train;
  return o;
}

// Every type owns contiguous ranges in each part, and the renumbered graph, labels and split
// are the original's read through each type's node_ids.
void expect_renumbered(const HeteroDataset& before, const HeteroDataset& after, int64_t parts) {
  for (size_t t = 0; t < after.node_types.size(); ++t) {
    const NodeType& type = after.node_types[t];
    ASSERT_EQ(type.partition.parts(), parts) << type.name;
    EXPECT_EQ(type.partition.offsets.back(), type.count) << type.name;
    EXPECT_TRUE(std::get<0>(type.node_ids.sort()).equal(at::arange(type.count, at::kLong)))
        << type.name << ": node_ids must be a permutation";
  }
  for (size_t r = 0; r < after.relations.size(); ++r) {
    const Relation& a = after.relations[r];
    const at::Tensor mapped =
        edge_keys(a, after.node_types[a.src_type].node_ids, after.node_types[a.dst_type].node_ids);
    EXPECT_TRUE(mapped.equal(edge_keys(before.relations[r], {}, {}))) << a.key();
  }
  const at::Tensor& ids = after.target().node_ids;
  EXPECT_TRUE(after.labels.equal(before.labels.index_select(0, ids)));
  EXPECT_TRUE(
      ids.index_select(0, after.splits[0].train).equal(before.splits[0].train.to(at::kLong)));
  EXPECT_TRUE(ids.index_select(0, after.splits[0].test).equal(before.splits[0].test.to(at::kLong)));
}

int64_t total_cut(const HeteroDataset& ds) {
  int64_t cut = 0;
  for (const NodeType& t : ds.node_types) cut += t.partition.edge_cut;
  return cut;
}

TEST(HeteroPartition, RandomRenumbersEveryTypeIntoContiguousPartsKeepingTheGraph) {
  const HeteroDataset before = small_mag();
  HeteroDataset ds = small_mag();
  const HeteroPartitionReport r =
      partition_hetero(ds, options(PartitionMethod::kRandom, 3, ds), true);
  expect_renumbered(before, ds, 3);
  int64_t edges = 0, seeds = 0;
  for (const NodeType& t : ds.node_types) {
    for (int64_t k = 0; k < 3; ++k) {
      edges += t.partition.edges[k];
      seeds += t.partition.seeds[k];
    }
  }
  EXPECT_EQ(edges, ds.num_edges());
  EXPECT_EQ(seeds, before.splits[0].train.numel());
  EXPECT_EQ(total_cut(ds), r.stats.edge_cut);
  // Features are left for the caller, in the orders returned.
  ASSERT_EQ(r.orders.size(), ds.node_types.size());
  EXPECT_TRUE(ds.target().node_ids.equal(r.orders[static_cast<size_t>(ds.target_type)]));
  EXPECT_TRUE(ds.target().partition.features_by_part);
  EXPECT_FALSE(ds.node_types[1].partition.features_by_part);  // a featureless type
}

TEST(HeteroPartition, MetisBalancesEachTypeAndCutsFewerEdgesThanRandom) {
  if (!metis_available()) GTEST_SKIP() << "this build has no METIS";
  const HeteroDataset before = small_mag();
  HeteroDataset metis = small_mag(), random = small_mag();
  const HeteroPartitionReport m =
      partition_hetero(metis, options(PartitionMethod::kMetis, 2, metis), true);
  partition_hetero(random, options(PartitionMethod::kRandom, 2, random), true);
  expect_renumbered(before, metis, 2);
  EXPECT_LT(total_cut(metis) * 2, total_cut(random));
  for (size_t t = 0; t < metis.node_types.size(); ++t) {
    EXPECT_LT(m.type_node_imbalance[t], 1.1) << metis.node_types[t].name;
  }
  EXPECT_LT(m.stats.seed_imbalance, 1.1);
}

// Written by part with each type's original ids, read back whole (the tables joined in memory)
// or one part's rows only, as a rank of a sharded run loads it.
TEST(HeteroPartition, DirectoryKeepsTheBookIdsAndEachPartsRows) {
  const HeteroDataset before = small_mag();
  HeteroDataset ds = small_mag();
  const HeteroPartitionReport r =
      partition_hetero(ds, options(PartitionMethod::kRandom, 2, ds), true);
  std::map<std::string, FeatureStream> tables;
  const size_t paper = static_cast<size_t>(ds.target_type);
  tables.emplace("paper",
                 permuted_features(ds.node_types[paper].features, r.orders[paper], at::kFloat));
  ds.node_types[paper].features = at::Tensor();
  TempDirectory dir2;
  save_hetero_dir(ds, dir2.file("parts"), tables);
  const HeteroDataset whole = load_hetero_dir(dir2.file("parts"));
  expect_renumbered(before, whole, 2);
  const NodeType& p = whole.node_types[paper];
  EXPECT_TRUE(p.features_path.empty()) << "joined from its parts in memory";
  EXPECT_TRUE(p.features.equal(before.node_types[paper].features.index_select(0, p.node_ids)));
  const HeteroDataset one = load_hetero_dir(dir2.file("parts"), 1, 2);
  const NodeType& q = one.node_types[paper];
  EXPECT_EQ(q.feature_part, 1);
  EXPECT_NE(q.features_path.find("part-1/features.npy"), std::string::npos) << q.features_path;
  EXPECT_TRUE(q.features.equal(
      p.features.narrow(0, p.partition.offsets[1], p.count - p.partition.offsets[1])));
  // Another number of ranks than parts reads the whole table.
  EXPECT_EQ(load_hetero_dir(dir2.file("parts"), 1, 3).node_types[paper].feature_part, -1);
}

}  // namespace
}  // namespace directgnn
