// OGB raw directories and SNAP/CSV edge lists, from small hand-written fixtures.
#include <ATen/ATen.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "io/dataset.h"
#include "io/npy.h"
#include "test_util.h"

namespace directgnn {
namespace {

using testing::write_gz;
using testing::write_text;

// A 5-node OGB raw directory: a path 0-1-2-3-4, 3 features, node 4 unlabelled.
void write_ogb(const std::string& dir) {
  write_gz(dir + "/raw/num-node-list.csv.gz", "5\n");
  write_gz(dir + "/raw/edge.csv.gz", "0,1\n1,2\n2,3\n3,4\n");
  write_gz(dir + "/raw/node-feat.csv.gz", "0.5,1,2\n-1,0,3.25\n1e-3,2,2\n0,0,0\n7,8,9\n");
  write_gz(dir + "/raw/node-label.csv.gz", "0\n1\n1\n0\nnan\n");
  write_gz(dir + "/split/time/train.csv.gz", "0\n1\n");
  write_gz(dir + "/split/time/valid.csv.gz", "2\n");
  write_gz(dir + "/split/time/test.csv.gz", "3\n");
}

TEST(OgbImport, ReadsARawDirectory) {
  testing::TempDirectory tmp;
  const std::string dir = tmp.file("ogbn-tiny");
  write_ogb(dir);
  const Dataset ds = load_dataset(dir);
  EXPECT_EQ(ds.num_nodes(), 5);
  EXPECT_EQ(ds.graph.num_edges(), 4);
  EXPECT_TRUE(ds.directed);
  EXPECT_TRUE(ds.features.equal(
      at::tensor({0.5f, 1.f, 2.f, -1.f, 0.f, 3.25f, 1e-3f, 2.f, 2.f, 0.f, 0.f, 0.f, 7.f, 8.f, 9.f})
          .view({5, 3})));
  EXPECT_TRUE(ds.labels.equal(at::tensor({0, 1, 1, 0, -1}, at::kLong)));
  ASSERT_EQ(ds.splits.size(), 1u);
  EXPECT_TRUE(ds.splits[0].train.equal(at::tensor({0, 1}, at::kLong)));
  EXPECT_TRUE(ds.splits[0].test.equal(at::tensor({3}, at::kLong)));
  ImportOptions both_ways;
  both_ways.add_inverse_edges = true;
  const Dataset sym = load_dataset(dir, both_ways);
  EXPECT_EQ(sym.graph.num_edges(), 8);
  EXPECT_FALSE(sym.directed);
}

// The row of node v, as a vector of ids.
std::vector<int64_t> row_of(const CsrGraph& g, int64_t v) {
  const at::Tensor ids =
      g.indices.to(at::kLong).narrow(0, g.indptr[v].item<int64_t>(),
                                     g.indptr[v + 1].item<int64_t>() - g.indptr[v].item<int64_t>());
  return std::vector<int64_t>(ids.data_ptr<int64_t>(), ids.data_ptr<int64_t>() + ids.numel());
}

// A node's list holds the nodes it receives messages from: edge (src, dst) puts src in dst's
// row (docs/formats.md), for the directed path 0 -> 1 -> 2 -> 3 -> 4.
TEST(OgbImport, ListsHoldTheSourcesOfEachNodesInEdges) {
  testing::TempDirectory tmp;
  const std::string dir = tmp.file("ogbn-tiny");
  write_ogb(dir);
  const Dataset ds = load_dataset(dir);
  EXPECT_TRUE(row_of(ds.graph, 0).empty());
  for (int64_t v = 1; v < 5; ++v) EXPECT_EQ(row_of(ds.graph, v), std::vector<int64_t>{v - 1}) << v;
}

TEST(OgbImport, MalformedLinesNameFileAndLine) {
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"raw/edge.csv.gz", "0,1\n1,2\n2;3\n", "edge.csv.gz line 3: expected two node ids"},
      {"raw/edge.csv.gz", "0,1\n1,-2\n", "edge.csv.gz line 2: node ids must be non-negative"},
      {"raw/edge.csv.gz", "0,1\n1,9\n", "edge 1 has destination node id 9, out of range"},
      {"raw/node-feat.csv.gz", "1,2,3\n1,2,3\n1,2,3\n1,2\n1,2,3\n",
       "node-feat.csv.gz line 4: has 2 values"},
      {"raw/node-feat.csv.gz", "1,2,3\n1,abc,3\n1,2,3\n1,2,3\n1,2,3\n",
       "line 2: value 2 ('abc') is not a number"},
      {"raw/node-label.csv.gz", "0\nx\n1\n0\n1\n",
       "node-label.csv.gz line 2: expected one integer"},
      {"raw/num-node-list.csv.gz", "5\n7\n", "expected one line with the node count"},
      {"raw/node-feat.csv.gz", "1,2\n1,2\n1,2\n", "has 3 lines for 5 nodes"},
      {"raw/node-label.csv.gz", "0\n1\n", "has 2 lines for 5 nodes"},
  };
  for (const auto& [file, text, needle] : cases) {
    testing::TempDirectory tmp;
    const std::string dir = tmp.file("ogbn-bad");
    write_ogb(dir);
    write_gz(dir + "/" + file, text);
    EXPECT_ERROR_CONTAINS(load_dataset(dir), needle);
  }
  testing::TempDirectory tmp;
  write_ogb(tmp.file("d"));
  std::filesystem::remove(tmp.file("d/raw/node-feat.csv.gz"));
  EXPECT_ERROR_CONTAINS(load_dataset(tmp.file("d")), "node-feat.csv.gz not found");
}

TEST(EdgeListImport, SkipsCommentsAndOneHeader) {
  testing::TempDirectory tmp;
  save_npy(tmp.file("labels.npy"), at::tensor({0, 1, 0, 1}, at::kLong));
  write_text(tmp.file("g.txt"),
             "# Directed graph: g.txt\n# Nodes: 4 Edges: 3\nFromNodeId\tToNodeId\n0\t1\n1\t2\n"
             "% comment\n\n2\t0\r\n");
  ImportOptions o;
  o.labels_path = tmp.file("labels.npy");
  const Dataset ds = load_dataset(tmp.file("g.txt"), o);
  EXPECT_EQ(ds.num_nodes(), 4);
  EXPECT_EQ(ds.graph.num_edges(), 3);
  EXPECT_EQ(ds.feat_dim(), 2);  // log-degree and a constant
  o.add_inverse_edges = true;
  write_gz(tmp.file("g.csv.gz"), "src,dst,weight\n0,1,0.5\n1,2,1\n2,0,2\n");
  EXPECT_EQ(load_dataset(tmp.file("g.csv.gz"), o).graph.num_edges(), 6);
  o.features_path = tmp.file("x.npy");
  save_npy(o.features_path, at::ones({4, 7}));
  EXPECT_EQ(load_dataset(tmp.file("g.csv.gz"), o).feat_dim(), 7);
}

TEST(EdgeListImport, ListsHoldTheSourcesOfEachNodesInEdges) {
  testing::TempDirectory tmp;
  save_npy(tmp.file("labels.npy"), at::tensor({0, 1, 0, 1}, at::kLong));
  write_text(tmp.file("g.txt"), "0 1\n0 2\n3 2\n");  // 0 -> 1, 0 -> 2, 3 -> 2
  ImportOptions o;
  o.labels_path = tmp.file("labels.npy");
  const Dataset ds = load_dataset(tmp.file("g.txt"), o);
  EXPECT_TRUE(row_of(ds.graph, 0).empty());
  EXPECT_EQ(row_of(ds.graph, 1), std::vector<int64_t>{0});
  EXPECT_EQ(row_of(ds.graph, 2), (std::vector<int64_t>{0, 3}));
  EXPECT_TRUE(row_of(ds.graph, 3).empty());
  o.add_inverse_edges = true;
  EXPECT_EQ(row_of(load_dataset(tmp.file("g.txt"), o).graph, 0), (std::vector<int64_t>{1, 2}));
}

TEST(EdgeListImport, ClearErrors) {
  testing::TempDirectory tmp;
  save_npy(tmp.file("labels.npy"), at::tensor({0, 1, 0}, at::kLong));
  ImportOptions o;
  o.labels_path = tmp.file("labels.npy");
  write_text(tmp.file("a.txt"), "0 1\nsource target\n1 2\n");
  EXPECT_ERROR_CONTAINS(load_dataset(tmp.file("a.txt"), o), "a.txt line 2");
  write_text(tmp.file("b.txt"), "0 1\n1 x\n");
  EXPECT_ERROR_CONTAINS(load_dataset(tmp.file("b.txt"), o), "b.txt line 2");
  write_text(tmp.file("c.txt"), "0 1\n1 5\n");
  EXPECT_ERROR_CONTAINS(load_dataset(tmp.file("c.txt"), o), "node id 5 needs at least 6 labels");
  write_text(tmp.file("d.txt"), "0 1\n");
  EXPECT_FALSE(load_dataset(tmp.file("d.txt")).has_labels());  // for link prediction
}

TEST(EdgeListImport, LineNumbersHoldAcrossParallelSlices) {
  testing::TempDirectory tmp;
  const int64_t n = 200000;
  std::string text;
  for (int64_t i = 0; i < n; ++i) {
    text += i == 150000 ? std::string("oops\n")
                        : std::to_string(i) + " " + std::to_string((i * 7 + 1) % n) + "\n";
  }
  write_text(tmp.file("big.txt"), text);
  save_npy(tmp.file("labels.npy"), at::zeros({n}, at::kLong).index_fill_(0, at::tensor({0L}), 1));
  ImportOptions o;
  o.labels_path = tmp.file("labels.npy");
  EXPECT_ERROR_CONTAINS(load_dataset(tmp.file("big.txt"), o), "big.txt line 150001");
  text.replace(text.find("oops"), 4, "1 2");
  write_text(tmp.file("big.txt"), text);
  EXPECT_EQ(load_dataset(tmp.file("big.txt"), o).graph.num_edges(), n);
}

}  // namespace
}  // namespace directgnn
