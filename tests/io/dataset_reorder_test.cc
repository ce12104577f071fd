#include "io/dataset_reorder.h"

#include <ATen/ATen.h>

#include <filesystem>
#include <fstream>

#include "graph/link_split.h"
#include "graph/partition.h"
#include "graph/planted_partition.h"
#include "graph/splits.h"
#include "io/npy.h"
#include "test_util.h"

namespace directgnn {
namespace {

using testing::TempDirectory;

Dataset reorder_source() {
  PlantedPartitionOptions o;
  o.num_nodes = 300;
  o.num_classes = 3;
  o.feat_dim = 5;
  return make_planted_partition(o);
}

// The dataset renumbered `how` and written, read back.
Dataset reordered_copy(const Dataset& source, NodeOrder how, const std::string& out) {
  Dataset ds = source;
  const at::Tensor order = reorder_dataset(ds, how);
  save_dataset_dir(ds, out, permuted_features(ds.features, order, at::kFloat));
  return load_dataset(out);
}

TEST(DatasetReorder, EveryArrayFollowsTheNodesAndTheMapLeadsBack) {
  TempDirectory dir;
  const Dataset a = reorder_source();
  for (const NodeOrder how : {NodeOrder::kDegree, NodeOrder::kRcm, NodeOrder::kMetis}) {
    if (how == NodeOrder::kMetis && !metis_available()) continue;
    const std::string name = node_order_name(how);
    const Dataset b = reordered_copy(a, how, dir.file(name));
    ASSERT_TRUE(b.node_ids.defined()) << name;
    EXPECT_EQ(b.node_order, name);
    const at::Tensor& ids = b.node_ids;
    EXPECT_FALSE(ids.equal(at::arange(a.num_nodes(), at::kLong))) << name;
    EXPECT_TRUE(b.features.equal(a.features.index_select(0, ids))) << name;
    EXPECT_TRUE(b.labels.equal(a.labels.index_select(0, ids))) << name;
    // The split holds the same nodes, in the same order, by original id.
    EXPECT_TRUE(ids.index_select(0, b.splits[0].train).equal(a.splits[0].train)) << name;
    EXPECT_TRUE(ids.index_select(0, b.splits[0].test).equal(a.splits[0].test)) << name;
    EXPECT_EQ(b.graph.num_edges(), a.graph.num_edges());
    // Degrees travel with their nodes.
    EXPECT_TRUE(b.graph.degrees().equal(a.graph.degrees().index_select(0, ids))) << name;
    EXPECT_TRUE(
        stored_of_original(b).index_select(0, ids).equal(at::arange(a.num_nodes(), at::kLong)));
  }
}

TEST(DatasetReorder, RenumberingTwiceComposesTheMap) {
  TempDirectory dir;
  const Dataset a = reorder_source();
  const Dataset once = reordered_copy(a, NodeOrder::kDegree, dir.file("once"));
  const Dataset twice = reordered_copy(once, NodeOrder::kRcm, dir.file("twice"));
  EXPECT_EQ(twice.node_order, "rcm");
  EXPECT_TRUE(twice.features.equal(a.features.index_select(0, twice.node_ids)));
  EXPECT_TRUE(twice.labels.equal(a.labels.index_select(0, twice.node_ids)));
}

TEST(DatasetReorder, TheDefaultSplitPicksTheNodesItPicksBeforeRenumbering) {
  TempDirectory dir;
  Dataset a = reorder_source();
  a.splits.clear();
  const Dataset b = reordered_copy(a, NodeOrder::kRcm, dir.file("rcm"));
  const ChosenSplit before = choose_split(a, 0, 7), after = choose_split(b, 0, 7);
  for (const auto& [x, y] : {std::pair{before.split.train, after.split.train},
                             std::pair{before.split.val, after.split.val},
                             std::pair{before.split.test, after.split.test}}) {
    EXPECT_TRUE(b.node_ids.index_select(0, y).equal(x));
  }
  EXPECT_NE(after.description.find("original node ids"), std::string::npos);
}

TEST(DatasetReorder, ALinkSplitFollowsTheNodes) {
  TempDirectory dir;
  Dataset a = reorder_source();
  LinkSplitOptions o;
  RandomLinkSplit split = random_link_split(a.graph, a.directed, o);
  a.graph = split.graph;
  a.link = split.split;
  const Dataset b = reordered_copy(a, NodeOrder::kDegree, dir.file("link"));
  const at::Tensor& ids = b.node_ids;
  const auto original = [&](const at::Tensor& t) {
    return ids.index_select(0, t.reshape(-1).to(at::kLong)).reshape(t.sizes());
  };
  EXPECT_TRUE(original(b.link.train).equal(a.link.train.to(at::kLong)));
  EXPECT_TRUE(original(b.link.test).equal(a.link.test.to(at::kLong)));
  EXPECT_TRUE(original(b.link.test_neg).equal(a.link.test_neg.to(at::kLong)));
}

TEST(DatasetReorder, AMapThatIsNotAPermutationIsRefusedOnLoad) {
  TempDirectory dir;
  const Dataset b = reordered_copy(reorder_source(), NodeOrder::kDegree, dir.file("ds"));
  at::Tensor bad = b.node_ids.clone();
  bad[1] = bad[0];
  save_npy(dir.file("ds") + "/node_ids.npy", bad);
  EXPECT_ERROR_CONTAINS(load_dataset(dir.file("ds")), "node_ids.npy: entries 0 and 1 both map");
  std::filesystem::remove(dir.file("ds") + "/node_ids.npy");
  EXPECT_ERROR_CONTAINS(load_dataset(dir.file("ds")), "missing node_ids.npy");
}

}  // namespace
}  // namespace directgnn
