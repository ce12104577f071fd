// Link-prediction datasets on disk: link/ arrays, optional labels, and what a loader refuses.
#include <ATen/ATen.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "graph/planted_partition.h"
#include "graph/splits.h"
#include "io/dataset.h"
#include "io/npy.h"
#include "test_util.h"

namespace directgnn {
namespace {

using testing::TempDirectory;

// A planted-partition graph with a random link split and no labels.
Dataset link_dataset(int64_t neg_per_source) {
  PlantedPartitionOptions o;
  o.num_nodes = 300;
  o.feat_dim = 5;
  Dataset ds = make_planted_partition(o);
  LinkSplitOptions split;
  split.neg_per_source = neg_per_source;
  RandomLinkSplit r = random_link_split(ds.graph, ds.directed, split);
  ds.graph = r.graph;
  ds.link = r.split;
  ds.labels = at::Tensor();
  ds.num_classes = 0;
  ds.splits.clear();
  return ds;
}

TEST(LinkDatasetDir, SaveThenLoadKeepsTheSplitWithoutLabels) {
  TempDirectory dir;
  for (const int64_t k : {0, 6}) {
    const Dataset a = link_dataset(k);
    const std::string path = dir.file("ds" + std::to_string(k));
    save_dataset_dir(a, path);
    EXPECT_FALSE(std::filesystem::exists(path + "/labels.npy"));
    EXPECT_EQ(load_npy(path + "/link/test_neg.npy").scalar_type(), at::kInt);  // ids fit
    const Dataset b = load_dataset(path);
    EXPECT_FALSE(b.has_labels());
    EXPECT_EQ(b.num_classes, 0);
    ASSERT_TRUE(b.link.defined());
    EXPECT_EQ(b.link.negatives, k ? LinkNegatives::kPerSource : LinkNegatives::kShared);
    EXPECT_TRUE(b.link.train.equal(a.link.train) && b.link.test_neg.equal(a.link.test_neg));
    EXPECT_EQ(b.link.train.scalar_type(), at::kLong);
    EXPECT_ERROR_CONTAINS(choose_split(b, 0, 0), "no node labels");
  }
}

using testing::edit_meta;

// Writes a valid link dataset, lets `mutate` break it, and expects `needle` in the error.
template <typename Mutate>
void expect_link_load_error(Mutate mutate, const std::string& needle) {
  TempDirectory dir;
  const std::string path = dir.file("ds");
  save_dataset_dir(link_dataset(0), path);
  mutate(path);
  EXPECT_ERROR_CONTAINS(load_dataset(path), needle);
}

TEST(LinkDatasetDir, BadSplitsNameTheFileAndTheFix) {
  expect_link_load_error([](const std::string& p) { std::filesystem::remove(p + "/link/val.npy"); },
                         "missing val.npy");
  expect_link_load_error(
      [](const std::string& p) {
        edit_meta(p, [](nlohmann::json& m) { m["link"]["negatives"] = "pairs"; });
      },
      "'shared'");
  expect_link_load_error(
      [](const std::string& p) { edit_meta(p, [](nlohmann::json& m) { m["num_classes"] = 1; }); },
      "num_classes >= 2");
  // A test edge also in the message-passing graph: the training edges' file given as tests.
  expect_link_load_error(
      [](const std::string& p) {
        std::filesystem::copy_file(p + "/link/train.npy", p + "/link/test.npy",
                                   std::filesystem::copy_options::overwrite_existing);
        const at::Tensor train = load_npy(p + "/link/train.npy");
        std::filesystem::remove(p + "/link/test_neg.npy");
        save_npy(p + "/link/test_neg.npy", train);
      },
      "link/test.npy: positive 0");
  // Training edges the graph lacks: the test edges given as training edges.
  expect_link_load_error(
      [](const std::string& p) {
        std::filesystem::copy_file(p + "/link/test.npy", p + "/link/train.npy",
                                   std::filesystem::copy_options::overwrite_existing);
      },
      "is no edge of the message-passing graph");
  expect_link_load_error(
      [](const std::string& p) {
        std::filesystem::remove(p + "/link/val_neg.npy");
        save_npy(p + "/link/val_neg.npy", at::zeros({4, 3}, at::kInt));
      },
      "val_neg.npy: has shape");
}

TEST(LinkDatasetDir, NodeSplitsWithoutLabelsAreRefused) {
  Dataset ds = link_dataset(0);
  ds.splits.push_back(
      {at::arange(3, at::kLong), at::arange(3, 6, at::kLong), at::arange(6, 9, at::kLong)});
  EXPECT_ERROR_CONTAINS(validate_dataset(ds, "mem"), "node splits need labels.npy");
}

TEST(EdgeListImport, WithoutLabelsTheGraphIsForLinkPrediction) {
  TempDirectory dir;
  {
    std::ofstream out(dir.file("g.txt"));
    for (int v = 0; v < 40; ++v)
      out << v << " " << (v + 1) % 40 << "\n" << v << " " << (v + 5) % 40 << "\n";
  }
  ImportOptions o;
  o.add_inverse_edges = true;
  const Dataset ds = load_dataset(dir.file("g.txt"), o);
  EXPECT_FALSE(ds.has_labels());
  EXPECT_EQ(ds.num_nodes(), 40);
  EXPECT_EQ(ds.graph.num_edges(), 160);
  EXPECT_EQ(choose_link_split(ds, 0).split.train.size(1), 2);
}

}  // namespace
}  // namespace directgnn
