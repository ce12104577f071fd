#include "io/dataset.h"

#include <ATen/ATen.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "graph/planted_partition.h"
#include "io/npy.h"
#include "test_util.h"

namespace directgnn {
namespace {

using testing::TempDirectory;

Dataset small_dataset() {
  PlantedPartitionOptions o;
  o.num_nodes = 200;
  o.num_classes = 4;
  o.feat_dim = 6;
  return make_planted_partition(o);
}

TEST(DatasetDir, SaveThenLoadGivesTheSameDataset) {
  TempDirectory dir;
  const Dataset a = small_dataset();
  save_dataset_dir(a, dir.file("ds"));
  const Dataset b = load_dataset(dir.file("ds"));
  EXPECT_TRUE(a.graph.indptr.equal(b.graph.indptr));
  EXPECT_TRUE(a.graph.indices.equal(b.graph.indices));
  EXPECT_TRUE(a.features.equal(b.features));
  EXPECT_TRUE(a.labels.equal(b.labels));
  EXPECT_EQ(b.num_classes, 4);
  ASSERT_EQ(b.splits.size(), 1u);
  EXPECT_TRUE(a.splits[0].test.equal(b.splits[0].test));
  EXPECT_EQ(b.graph.indices.scalar_type(), at::kInt);
  // A directed graph is written in this build's orientation, format_version 2, and read back.
  Dataset directed = small_dataset();
  directed.directed = true;
  save_dataset_dir(directed, dir.file("directed"));
  EXPECT_TRUE(load_dataset(dir.file("directed")).directed);
}

TEST(DatasetDir, ConvertRefusesAnExistingOutputAndLeavesNoTemporaries) {
  TempDirectory dir;
  const Dataset a = small_dataset();
  save_dataset_dir(a, dir.file("ds"));
  EXPECT_ERROR_CONTAINS(save_dataset_dir(a, dir.file("ds")), "already exists");
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1);
}

// Writes a valid dataset, lets `mutate` break one file, and expects `needle` in the error.
template <typename Mutate>
void expect_load_error(Mutate mutate, const std::string& needle) {
  TempDirectory dir;
  const std::string path = dir.file("ds");
  save_dataset_dir(small_dataset(), path);
  mutate(path);
  EXPECT_ERROR_CONTAINS(load_dataset(path), needle);
}

using testing::edit_meta;

// A table checked finite as it was written is not scanned again on open, unless the file
// has changed since (another modification time, size or inode).
TEST(DatasetDir, FeaturesCheckedAtWriteAreNotScannedAgainUntilTheFileChanges) {
  TempDirectory dir;
  const std::string path = dir.file("ds");
  save_dataset_dir(small_dataset(), path);
  EXPECT_TRUE(load_dataset(path).features_checked);
  nlohmann::json meta;
  std::ifstream(path + "/meta.json") >> meta;
  EXPECT_EQ(meta["features_checked"]["bytes"].get<int64_t>(),
            static_cast<int64_t>(std::filesystem::file_size(path + "/features.npy")));
  // The same bytes, a later modification time: checked again (and still fine).
  const std::string features = path + "/features.npy";
  std::filesystem::last_write_time(
      features, std::filesystem::last_write_time(features) + std::chrono::seconds(1));
  EXPECT_FALSE(load_dataset(path).features_checked);
  edit_meta(path, [](nlohmann::json& m) { m["features_checked"] = 7; });
  EXPECT_ERROR_CONTAINS(load_dataset(path), "field 'features_checked' must be an object");
  edit_meta(path, [](nlohmann::json& m) { m["features_checked"] = {{"bytes", 1}}; });
  EXPECT_ERROR_CONTAINS(load_dataset(path), "(features_checked): missing field 'mtime_ns'");
}

// Writing checks every value: a NaN, or a value float16 cannot hold, fails the write naming
// row and column, and leaves no dataset behind.
TEST(DatasetDir, WritingRefusesFeaturesThatAreNotFiniteAsStored) {
  TempDirectory dir;
  Dataset ds = small_dataset();
  ds.features = ds.features.clone();
  ds.features[120][2] = 1e6f;
  EXPECT_ERROR_CONTAINS(
      save_dataset_dir(ds, dir.file("half"), feature_stream_of(ds.features, at::kHalf)),
      "features row 120 column 2 is inf once stored as float16");
  EXPECT_FALSE(std::filesystem::exists(dir.file("half")));
  save_dataset_dir(ds, dir.file("single"));  // float32 holds it
  ds.features[7][5] = std::nanf("");
  EXPECT_ERROR_CONTAINS(save_dataset_dir(ds, dir.file("nan")), "features row 7 column 5 is nan");
  EXPECT_FALSE(std::filesystem::exists(dir.file("nan")));
}

TEST(DatasetDir, BadInputsNameTheFileAndTheProblem) {
  expect_load_error([](const std::string& p) { std::filesystem::remove(p + "/features.npy"); },
                    "missing features.npy");
  expect_load_error([](const std::string& p) { std::filesystem::remove(p + "/meta.json"); },
                    "missing meta.json");
  expect_load_error(
      [](const std::string& p) { edit_meta(p, [](nlohmann::json& m) { m.erase("num_nodes"); }); },
      "missing field 'num_nodes'");
  expect_load_error(
      [](const std::string& p) { edit_meta(p, [](nlohmann::json& m) { m["feat_dim"] = "six"; }); },
      "field 'feat_dim' must be an integer, got \"six\"");
  expect_load_error([](const std::string& p) { std::ofstream(p + "/meta.json") << "{not json"; },
                    "not valid JSON");
  expect_load_error(
      [](const std::string& p) {
        at::Tensor labels = load_npy(p + "/labels.npy").clone();
        labels[17] = 9;
        save_npy(p + "/labels.npy", labels);
      },
      "labels[17] = 9 is not below num_classes = 4");
  expect_load_error(
      [](const std::string& p) {
        at::Tensor x = load_npy(p + "/features.npy").clone();
        x[42][3] = std::nanf("");
        save_npy(p + "/features.npy", x);
      },
      "features row 42 column 3");
  expect_load_error(
      [](const std::string& p) {
        save_npy(p + "/features.npy", load_npy(p + "/features.npy").narrow(0, 0, 150).clone());
      },
      "features has 150 rows but the graph has 200 nodes");
  expect_load_error(
      [](const std::string& p) {
        save_npy(p + "/features.npy", load_npy(p + "/features.npy").to(at::kInt));
      },
      "use float32 or float16");
  expect_load_error(
      [](const std::string& p) {
        at::Tensor ptr = load_npy(p + "/indptr.npy").clone();
        ptr[100] = ptr[99].item<int64_t>() - 1;
        save_npy(p + "/indptr.npy", ptr);
      },
      "indptr is not monotone: indptr[100]");
  expect_load_error(
      [](const std::string& p) {
        at::Tensor idx = load_npy(p + "/indices.npy").clone();
        idx[5] = 200;
        save_npy(p + "/indices.npy", idx);
      },
      "indices[5] = 200 is out of range for 200 nodes");
  expect_load_error(
      [](const std::string& p) {
        save_npy(p + "/labels.npy", load_npy(p + "/labels.npy").narrow(0, 0, 10).clone());
      },
      "labels has 10 entries but the graph has 200 nodes");
  expect_load_error(
      [](const std::string& p) { save_npy(p + "/train_idx.npy", at::empty({0}, at::kLong)); },
      "train split is empty");
  expect_load_error(
      [](const std::string& p) {
        save_npy(p + "/val_idx.npy", at::tensor({3, 500}, at::kLong));
      },
      "validation split[1] = 500 is out of range");
  expect_load_error(
      [](const std::string& p) {
        std::ofstream f(p + "/indices.npy", std::ios::binary | std::ios::trunc);
        f << "\x93NUMPY";
      },
      "indices.npy");
}

TEST(NpzImport, CoraInGnnBenchmarkLayout) {
  REQUIRE_DATASET(path, "cora.npz");
  const Dataset ds = load_dataset(path);
  EXPECT_EQ(ds.num_nodes(), 2708);
  EXPECT_EQ(ds.graph.num_edges(), 10556);
  EXPECT_EQ(ds.feat_dim(), 1433);
  EXPECT_EQ(ds.num_classes, 7);
  EXPECT_EQ(ds.features.sum().item<float>(), 49216.0f);
  EXPECT_TRUE(ds.splits.empty());
  EXPECT_EQ(at::bincount(ds.labels)[2].item<int64_t>(), 818);
}

TEST(NpzImport, TolokersInSavezLayoutWithTenSplits) {
  REQUIRE_DATASET(path, "tolokers.npz");
  const Dataset ds = load_dataset(path);
  EXPECT_EQ(ds.num_nodes(), 11758);
  EXPECT_EQ(ds.graph.num_edges(), 1038000);
  EXPECT_EQ(ds.num_classes, 2);
  ASSERT_EQ(ds.splits.size(), 10u);
  EXPECT_EQ(ds.splits[0].train.numel() + ds.splits[0].val.numel() + ds.splits[0].test.numel(),
            11758);
}

TEST(NpzImport, ConvertedCoraLoadsIdentically) {
  REQUIRE_DATASET(path, "cora.npz");
  TempDirectory dir;
  const Dataset a = load_dataset(path);
  save_dataset_dir(a, dir.file("cora"));
  const Dataset b = load_dataset(dir.file("cora"));
  EXPECT_TRUE(a.graph.indices.equal(b.graph.indices));
  EXPECT_TRUE(a.features.equal(b.features));
}

TEST(LoadDataset, UnknownPathsAndFormats) {
  TempDirectory dir;
  EXPECT_ERROR_CONTAINS(load_dataset(dir.file("nope")), "no such file or directory");
  std::ofstream(dir.file("x.xyz")) << "1,2\n";
  EXPECT_ERROR_CONTAINS(load_dataset(dir.file("x.xyz")),
                        "not a dataset directory, OGB raw directory, .npz file or edge list");
  std::ofstream(dir.file("x.csv")) << "1,2\n";
  EXPECT_FALSE(load_dataset(dir.file("x.csv")).has_labels());  // an edge list: link prediction
}

}  // namespace
}  // namespace directgnn
