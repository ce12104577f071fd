#include "io/hetero_dir.h"

#include <ATen/ATen.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "io/dataset.h"
#include "io/npy.h"
#include "tensor_util.h"
#include "test_util.h"

namespace directgnn {
namespace {

namespace fs = std::filesystem;
using testing::TempDirectory;

using testing::ids;
using testing::values;
using testing::write_text;

using testing::write_gz;

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Authors (no features) write papers (float32 features), papers cite papers; papers labelled.
HeteroDataset labelled_hetero() {
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
  ds.labels = ids({0, 1, 2, 1});
  ds.class_names = {"a", "b", "c"};
  ds.num_classes = 3;
  ds.splits.push_back({ids({0, 1}), ids({2}), ids({3})});
  validate_hetero(ds, "tiny");
  return ds;
}

void expect_same(const HeteroDataset& a, const HeteroDataset& b) {
  ASSERT_EQ(a.node_types.size(), b.node_types.size());
  for (size_t t = 0; t < a.node_types.size(); ++t) {
    EXPECT_EQ(a.node_types[t].name, b.node_types[t].name);
    EXPECT_EQ(a.node_types[t].count, b.node_types[t].count);
    EXPECT_EQ(a.node_types[t].has_features(), b.node_types[t].has_features());
    if (a.node_types[t].has_features()) {
      EXPECT_TRUE(a.node_types[t].features.equal(b.node_types[t].features));
    }
  }
  ASSERT_EQ(a.relations.size(), b.relations.size());
  for (size_t r = 0; r < a.relations.size(); ++r) {
    EXPECT_EQ(a.relations[r].key(), b.relations[r].key());
    EXPECT_TRUE(a.relations[r].graph.indptr.equal(b.relations[r].graph.indptr));
    EXPECT_EQ(values(a.relations[r].graph.indices), values(b.relations[r].graph.indices));
  }
  EXPECT_EQ(a.target_type, b.target_type);
  EXPECT_EQ(a.num_classes, b.num_classes);
  EXPECT_EQ(a.class_names, b.class_names);
  if (a.labels.defined()) {
    EXPECT_TRUE(a.labels.equal(b.labels));
  }
  ASSERT_EQ(a.splits.size(), b.splits.size());
  for (size_t k = 0; k < a.splits.size(); ++k) {
    EXPECT_TRUE(a.splits[k].train.equal(b.splits[k].train));
    EXPECT_TRUE(a.splits[k].val.equal(b.splits[k].val));
    EXPECT_TRUE(a.splits[k].test.equal(b.splits[k].test));
  }
}

TEST(HeteroDir, SaveThenLoadGivesTheSameDataset) {
  TempDirectory tmp;
  const HeteroDataset a = labelled_hetero();
  save_hetero_dir(a, tmp.file("ds"));
  EXPECT_TRUE(is_hetero_dir(tmp.file("ds")));
  const HeteroDataset b = load_hetero_dir(tmp.file("ds"));
  expect_same(a, b);
  EXPECT_EQ(b.name, "tiny");
  EXPECT_EQ(b.node_types[1].features_path, tmp.file("ds") + "/nodes/paper/features.npy");
  EXPECT_TRUE(fs::exists(tmp.file("ds/relations/author___writes___paper/indices.npy")));
  // Only the type with a table has its check stamped.
  const auto meta = nlohmann::json::parse(read_text(tmp.file("ds/meta.json")));
  EXPECT_EQ(meta["kind"], "heterogeneous");
  EXPECT_TRUE(meta["node_types"][1].contains("features_checked"));
  EXPECT_FALSE(meta["node_types"][0].contains("features_checked"));
  EXPECT_EQ(meta["node_types"][0]["feat_dim"], 0);
  // float16 tables and an unlabelled dataset round-trip too.
  HeteroDataset half = labelled_hetero();
  half.node_types[1].features = half.node_types[1].features.to(at::kHalf);
  half.target_type = -1;
  half.labels = at::Tensor();
  half.splits.clear();
  half.class_names.clear();
  half.num_classes = 0;
  save_hetero_dir(half, tmp.file("half"));
  expect_same(half, load_hetero_dir(tmp.file("half")));
}

TEST(HeteroDir, SaveRefusesAnExistingOutputAndNamesWhatOverflowsFloat16) {
  TempDirectory tmp;
  const HeteroDataset a = labelled_hetero();
  save_hetero_dir(a, tmp.file("ds"));
  EXPECT_ERROR_CONTAINS(save_hetero_dir(a, tmp.file("ds")), "already exists");
  HeteroDataset big = labelled_hetero();
  big.node_types[1].features[1][2] = 1e6f;
  big.node_types[1].features = big.node_types[1].features.to(at::kHalf);
  EXPECT_ERROR_CONTAINS(save_hetero_dir(big, tmp.file("big")),
                        "nodes/paper/features.npy: features row 1 column 2 is inf once stored as "
                        "float16");
  EXPECT_FALSE(fs::exists(tmp.file("big")));
  EXPECT_FALSE(is_hetero_dir(tmp.file("none")));
}

TEST(HeteroDir, LoadNamesTheFileAndFieldOfAMismatch) {
  TempDirectory tmp;
  const std::string dir = tmp.file("ds");
  save_hetero_dir(labelled_hetero(), dir);
  const std::string indptr = dir + "/relations/author___writes___paper/indptr.npy";
  save_npy(indptr, ids({0, 0, 2, 3}));
  EXPECT_ERROR_CONTAINS(load_hetero_dir(dir),
                        dir +
                            "/relations/author___writes___paper/indptr.npy: has 4 entries but "
                            "node type 'paper' has 4 nodes (meta.json count)");
  save_npy(indptr, ids({0, 2, 3, 3, 4}));
  save_npy(dir + "/nodes/paper/features.npy", at::zeros({4, 2}, at::kFloat));
  EXPECT_ERROR_CONTAINS(load_hetero_dir(dir),
                        "nodes/paper/features.npy: has shape [4, 2] but meta.json gives node type "
                        "'paper' count = 4 and feat_dim = 3");
  // A table rewritten since it was stamped is scanned again.
  at::Tensor nan = at::zeros({4, 3}, at::kFloat);
  nan[3][0] = NAN;
  save_npy(dir + "/nodes/paper/features.npy", nan);
  EXPECT_ERROR_CONTAINS(load_hetero_dir(dir), "features row 3 column 0 is nan");
  save_npy(dir + "/nodes/paper/features.npy", at::zeros({4, 3}, at::kFloat));
  save_npy(dir + "/labels.npy", ids({0, 1, 2}));
  EXPECT_ERROR_CONTAINS(load_hetero_dir(dir),
                        "labels.npy: has shape [3] but target type 'paper' has 4 nodes");
  save_npy(dir + "/labels.npy", ids({0, 1, 2, 1}));
  EXPECT_EQ(load_hetero_dir(dir).node_types[1].features.sum().item<float>(), 0.f);
}

TEST(HeteroDir, LoadChecksMetaJson) {
  TempDirectory tmp;
  const std::string dir = tmp.file("ds");
  save_hetero_dir(labelled_hetero(), dir);
  const std::string text = read_text(dir + "/meta.json");
  auto with = [&](const std::function<void(nlohmann::json&)>& edit) {
    auto meta = nlohmann::json::parse(text);
    edit(meta);
    write_text(dir + "/meta.json", meta.dump());
  };
  with([](nlohmann::json& m) { m["relations"][0]["dst"] = "book"; });
  EXPECT_ERROR_CONTAINS(load_hetero_dir(dir),
                        "meta.json (relations[0]): names node type 'book', which node_types does "
                        "not list (author, paper)");
  with([](nlohmann::json& m) { m["node_types"][0]["count"] = "3"; });
  EXPECT_ERROR_CONTAINS(load_hetero_dir(dir),
                        "meta.json (node_types[0]): field 'count' must be an integer");
  with([](nlohmann::json& m) { m["relations"][1]["num_edges"] = 4; });
  EXPECT_ERROR_CONTAINS(load_hetero_dir(dir),
                        "paper___cites___paper/indices.npy: has shape [3] but meta.json gives "
                        "paper,cites,paper num_edges = 4");
  with([](nlohmann::json& m) { m["format_version"] = 3; });
  EXPECT_ERROR_CONTAINS(load_hetero_dir(dir), "format_version 3 is not supported");
  // A homogeneous directory is no heterogeneous one.
  Dataset homo;
  homo.graph.indptr = ids({0, 1, 2});
  homo.graph.indices = ids({1, 0}).to(at::kInt);
  homo.features = at::zeros({2, 1});
  save_dataset_dir(homo, tmp.file("homo"));
  EXPECT_FALSE(is_hetero_dir(tmp.file("homo")));
  EXPECT_ERROR_CONTAINS(load_hetero_dir(tmp.file("homo")), "field 'kind' must be");
}

TEST(HeteroDir, MetaJsonIsCheckedBeforeAnyFileIsOpened) {
  const std::string head = R"({"format_version": 2, "kind": "heterogeneous", "node_types": [)";
  const HeteroMeta meta = parse_hetero_meta(
      head + R"({"name": "a", "count": 2}, {"name": "p", "count": 3, "feat_dim": 4}],
        "relations": [{"src": "a", "rel": "w", "dst": "p", "num_edges": 5}],
        "target": {"type": "p", "num_classes": 2}, "num_splits": 1})",
      "m.json");
  ASSERT_EQ(meta.node_types.size(), 2u);
  EXPECT_EQ(meta.node_types[1].feat_dim, 4);
  ASSERT_EQ(meta.relations.size(), 1u);
  EXPECT_EQ(meta.relations[0].num_edges, 5);
  EXPECT_EQ(meta.target, 1);
  // Names become paths: one that would leave the directory is refused before it is opened.
  EXPECT_ERROR_CONTAINS(
      parse_hetero_meta(head + R"({"name": "a", "count": 1}], "relations": [{"src": "a",
        "rel": "../../x", "dst": "a", "num_edges": 0}]})",
                        "m.json"),
      "m.json (relations[0]): relation '../../x' cannot name a directory");
  EXPECT_ERROR_CONTAINS(
      parse_hetero_meta(head + R"({"name": "../a", "count": 1}], "relations": []})", "m.json"),
      "m.json (node_types[0]): node type '../a' cannot name a directory");
  EXPECT_ERROR_CONTAINS(parse_hetero_meta(head + R"({"name": "a", "count": 1},
        {"name": "a", "count": 2}], "relations": []})",
                                          "m.json"),
                        "m.json (node_types[1]): node type 'a' is listed twice");
  EXPECT_ERROR_CONTAINS(parse_hetero_meta(head + R"({"name": "a", "count": 1}], "relations": [],
        "target": {"type": "b", "num_classes": 2}})",
                                          "m.json"),
                        "m.json (target): names node type 'b', which node_types does not list (a)");
  EXPECT_ERROR_CONTAINS(parse_hetero_meta(head + R"({"name": "a", "count": 1}], "relations": [{
        "src": "a", "rel": "r", "dst": "a", "num_edges": -1}]})",
                                          "m.json"),
                        "num_edges must not be negative, got -1");
}

TEST(HeteroImport, NodeTableAndRelationFileNames) {
  const auto types = parse_node_table("type,count\n# c\n\nauthor, 3\npaper,4", "nodes.csv");
  ASSERT_EQ(types.size(), 2u);
  EXPECT_EQ(types[0].name, "author");
  EXPECT_EQ(types[1].count, 4);
  EXPECT_ERROR_CONTAINS(parse_node_table("a,1\nb,x\n", "nodes.csv"),
                        "nodes.csv line 2: expected \"type,count\", got 'b,x'");
  std::string names[3];
  ASSERT_TRUE(relation_file_names("author___writes___paper.tsv.gz", names));
  EXPECT_EQ(names[1], "writes");
  EXPECT_FALSE(relation_file_names("author___paper.csv", names));
  EXPECT_FALSE(relation_file_names("a___r___b.npy", names));
}

// ogbn-mag's layout in miniature, with files the importer ignores (node_year, edge_reltype).
void write_ogb_mag(const std::string& dir) {
  write_gz(dir + "/raw/num-node-dict.csv.gz", "paper,author\n4,3\n");
  write_gz(dir + "/raw/triplet-type-list.csv.gz", "paper,cites,paper\nauthor,writes,paper\n");
  const std::string writes = dir + "/raw/relations/author___writes___paper/";
  write_gz(writes + "edge.csv.gz", "0,0\n0,1\n1,1\n2,3\n");
  write_gz(writes + "num-edge-list.csv.gz", "4\n");
  write_gz(writes + "edge_reltype.csv.gz", "1\n1\n1\n1\n");
  const std::string cites = dir + "/raw/relations/paper___cites___paper/";
  write_gz(cites + "edge.csv.gz", "0,1\n1,2\n2,3\n");
  write_gz(cites + "num-edge-list.csv.gz", "3\n");
  write_gz(dir + "/raw/node-feat/paper/node-feat.csv.gz", "0,1\n2,3\n4,5\n6,7.5\n");
  write_gz(dir + "/raw/node-feat/paper/node_year.csv.gz", "2010\n2011\n2012\n2013\n");
  write_gz(dir + "/raw/nodetype-has-label.csv.gz", "author,paper\nFalse,True\n");
  write_gz(dir + "/raw/node-label/paper/node-label.csv.gz", "0\n1\n2\n1\n");
  write_gz(dir + "/split/time/nodetype-has-split.csv.gz", "author,paper\nFalse,True\n");
  write_gz(dir + "/split/time/paper/train.csv.gz", "0\n1\n");
  write_gz(dir + "/split/time/paper/valid.csv.gz", "2\n");
  write_gz(dir + "/split/time/paper/test.csv.gz", "3\n");
}

TEST(HeteroImport, OgbHeteroLayoutAsOgbnMagShipsIt) {
  TempDirectory tmp;
  const std::string dir = tmp.file("ogbn_mag");
  write_ogb_mag(dir);
  EXPECT_TRUE(looks_like_ogb_hetero(dir));
  EXPECT_FALSE(looks_like_ogb(dir));
  HeteroDataset ds = import_ogb_hetero(dir, {});
  EXPECT_EQ(ds.name, "ogbn_mag");
  // Types and relations sorted by name, as OGB lists them.
  ASSERT_EQ(ds.node_types.size(), 2u);
  EXPECT_EQ(ds.node_types[0].name, "author");
  EXPECT_FALSE(ds.node_types[0].has_features());
  EXPECT_EQ(ds.node_types[1].features.size(0), 4);
  EXPECT_EQ(ds.node_types[1].features.size(1), 2);
  EXPECT_FLOAT_EQ(ds.node_types[1].features[3][1].item<float>(), 7.5f);
  ASSERT_EQ(ds.relations.size(), 2u);
  EXPECT_EQ(ds.relations[0].key(), "author,writes,paper");
  EXPECT_EQ(values(ds.relations[0].graph.indptr), (std::vector<int64_t>{0, 1, 3, 3, 4}));
  EXPECT_EQ(values(ds.relations[0].graph.indices), (std::vector<int64_t>{0, 0, 1, 2}));
  EXPECT_EQ(ds.target().name, "paper");
  EXPECT_EQ(ds.num_classes, 3);
  ASSERT_EQ(ds.splits.size(), 1u);
  EXPECT_EQ(values(ds.splits[0].train), (std::vector<int64_t>{0, 1}));
  // Saved and loaded back unchanged.
  save_hetero_dir(ds, tmp.file("out"));
  expect_same(ds, load_hetero_dir(tmp.file("out")));

  HeteroImportOptions inverse;
  inverse.add_inverse_edges = true;
  const HeteroDataset both = import_ogb_hetero(dir + "/raw", inverse);
  EXPECT_EQ(both.name, "ogbn_mag");
  ASSERT_EQ(both.relations.size(), 3u);
  EXPECT_EQ(both.relations[2].key(), "paper,rev_writes,author");
  EXPECT_EQ(both.relations[1].num_edges(), 6);
  EXPECT_EQ(both.splits.size(), 1u);
}

TEST(HeteroImport, OgbHeteroErrorsNameTheFile) {
  struct Case {
    const char* file;
    const char* text;
    const char* needle;
  };
  const Case cases[] = {
      {"raw/relations/author___writes___paper/num-edge-list.csv.gz", "5\n",
       "num-edge-list.csv.gz: says 5 edges (1 lines) but"},
      {"raw/relations/author___writes___paper/edge.csv.gz", "0,0\n3,1\n0,2\n0,3\n",
       "author___writes___paper/edge.csv.gz: source[1] = 3 is out of range for 3 nodes"},
      {"raw/node-label/paper/node-label.csv.gz", "0\n1\n",
       "node-label.csv.gz: has 2 lines but node type 'paper' has 4 nodes"},
      {"raw/triplet-type-list.csv.gz", "paper,cites,paper\nauthor,writes,book\n",
       "no node type 'book'; the types are author, paper"},
      {"raw/num-node-dict.csv.gz", "paper,author\n4,3\n4,3\n", "datasets of many graphs"},
      {"raw/node-feat/paper/node-feat.csv.gz", "1,2\n1,2\n", "has 2 lines for 4 nodes"},
  };
  for (const Case& c : cases) {
    TempDirectory tmp;
    write_ogb_mag(tmp.file("mag"));
    write_gz(tmp.file("mag/") + c.file, c.text);
    EXPECT_ERROR_CONTAINS(import_ogb_hetero(tmp.file("mag"), {}), c.needle);
  }
  // Without triplet-type-list.csv.gz the relations are the directories under relations/.
  TempDirectory tmp;
  write_ogb_mag(tmp.file("mag"));
  fs::remove(tmp.file("mag/raw/triplet-type-list.csv.gz"));
  EXPECT_EQ(import_ogb_hetero(tmp.file("mag"), {}).relations.size(), 2u);
  fs::remove_all(tmp.file("mag/split/time/paper"));
  EXPECT_ERROR_CONTAINS(import_ogb_hetero(tmp.file("mag"), {}),
                        "has no split of the labelled type 'paper'");
}

void write_typed_csv(const std::string& dir) {
  write_text(dir + "/nodes.csv", "# node types\ntype,count\nauthor,3\npaper,4\n");
  write_text(dir + "/author___writes___paper.csv", "src,dst\n0,0\n0,1\n1,1\n2,3\n");
  write_gz(dir + "/paper___cites___paper.txt.gz", "# citations\n0 1\n1 2\n2 3\n");
  write_text(dir + "/README.md", "not a relation\n");
  save_npy(dir + "/paper.features.npy", at::arange(8, at::kDouble).reshape({4, 2}));
  write_text(dir + "/target.txt", "paper\n");
  save_npy(dir + "/labels.npy", ids({0, 1, -1, 1}));
  save_npy(dir + "/train_idx.npy", ids({0}));
  save_npy(dir + "/val_idx.npy", ids({1}));
  save_npy(dir + "/test_idx.npy", ids({3}));
}

TEST(HeteroImport, TypedCsvDirectory) {
  TempDirectory tmp;
  const std::string dir = tmp.file("typed");
  write_typed_csv(dir);
  HeteroDataset ds = import_hetero_csv(dir, {});
  EXPECT_EQ(ds.name, "typed");
  ASSERT_EQ(ds.node_types.size(), 2u);
  EXPECT_EQ(ds.node_types[1].features.scalar_type(), at::kFloat);
  ASSERT_EQ(ds.relations.size(), 2u);
  EXPECT_EQ(ds.relations[0].key(), "author,writes,paper");
  EXPECT_EQ(values(ds.relations[0].graph.indices), (std::vector<int64_t>{0, 0, 1, 2}));
  EXPECT_EQ(ds.relations[1].key(), "paper,cites,paper");
  EXPECT_EQ(ds.target().name, "paper");
  EXPECT_EQ(ds.num_classes, 2);
  ASSERT_EQ(ds.splits.size(), 1u);
  HeteroImportOptions inverse;
  inverse.add_inverse_edges = true;
  EXPECT_EQ(import_hetero_csv(dir, inverse).relations.size(), 3u);

  write_text(dir + "/author___reads___book.csv", "0,0\n");
  EXPECT_ERROR_CONTAINS(import_hetero_csv(dir, {}),
                        "author___reads___book.csv: no node type 'book'; the types are author, "
                        "paper");
  fs::remove(dir + "/author___reads___book.csv");
  write_text(dir + "/author___writes___paper.csv", "0,0\n0,4\n");
  EXPECT_ERROR_CONTAINS(import_hetero_csv(dir, {}),
                        "author___writes___paper.csv: destination[1] = 4 is out of range for 4");
  write_text(dir + "/author___writes___paper.csv", "0,0\n");
  fs::remove(dir + "/target.txt");
  EXPECT_ERROR_CONTAINS(import_hetero_csv(dir, {}),
                        "labels.npy: needs target.txt naming the labelled node type");
  write_text(dir + "/nodes.csv", "author,3\npaper;4\n");
  EXPECT_ERROR_CONTAINS(import_hetero_csv(dir, {}), "nodes.csv line 2: expected \"type,count\"");
}

}  // namespace
}  // namespace directgnn
