// One test per fuzzer finding (scripts/fuzz.sh, docs/reliability.md), named after the case,
// plus the in-memory entry points the fuzz targets use. Under the sanitizer preset these
// replay the findings with AddressSanitizer and UndefinedBehaviorSanitizer watching.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>

#include "io/dataset.h"
#include "io/text_import.h"
#include "test_util.h"

namespace directgnn {
namespace {

TextSource text(const std::string& bytes) { return TextSource::memory(bytes, "mem.csv"); }

// fuzz_text crash-2063caa6: a label of 22 digits overflows int64 as an integer, then read
// as the integral float 6.7e21 and cast to int64 (undefined behaviour).
TEST(FuzzRegression, Text2063caa6HugeIntegralFloatLabel) {
  EXPECT_ERROR_CONTAINS(parse_int_column(text("1\n6666666666666666666666\n"), true),
                        "mem.csv line 2: expected one integer");
  EXPECT_ERROR_CONTAINS(parse_int_column(text("1e300\n"), true), "line 1");
  EXPECT_EQ(parse_int_column(text("nan\n4.0\n9007199254740991\n"), true),
            (std::vector<int64_t>{-1, 4, 9007199254740991}));
}

TEST(TextSource, MemoryMatchesTheFileReaders) {
  const EdgeColumns e = parse_edge_lines(text("# c\nsrc,dst\n0,1\r\n\n2\t3 0.5\n"), true);
  EXPECT_TRUE(e.src.equal(at::tensor({int64_t{0}, int64_t{2}})));
  EXPECT_TRUE(e.dst.equal(at::tensor({int64_t{1}, int64_t{3}})));
  EXPECT_ERROR_CONTAINS(parse_edge_lines(text("0,1\n# c\n"), false), "mem.csv line 2");
  const at::Tensor x = parse_feature_rows(text("1,2\n3,4.5\n"), 2);
  EXPECT_TRUE(x.equal(at::tensor({1.f, 2.f, 3.f, 4.5f}).view({2, 2})));
  EXPECT_ERROR_CONTAINS(parse_feature_rows(text("1,2\n3\n"), 2), "mem.csv line 2: has 1 values");
  // A line longer than the in-memory buffer's first size still parses whole.
  std::string wide;
  for (int i = 0; i < 200; ++i) wide += (i ? "," : "") + std::to_string(i);
  EXPECT_EQ(parse_feature_rows(text(wide + "\n"), 1).size(1), 200);
}

TEST(DatasetMeta, ParsesAndChecksTypes) {
  const DatasetMeta m = parse_dataset_meta(
      R"({"format_version": 2, "name": "g", "num_nodes": 3, "num_edges": 2, "feat_dim": 4,
          "num_classes": 2, "directed": true, "num_splits": 2})",
      "m.json");
  EXPECT_EQ(m.name, "g");
  EXPECT_EQ(m.num_nodes, 3);
  EXPECT_TRUE(m.directed);
  EXPECT_EQ(m.num_splits, 2);
  const std::string base =
      R"("format_version": 1, "num_edges": 2, "feat_dim": 4, "num_classes": 2)";
  EXPECT_ERROR_CONTAINS(parse_dataset_meta("{" + base + R"(, "num_nodes": 2.5})", "m.json"),
                        "m.json: field 'num_nodes' must be an integer, got 2.5");
  EXPECT_ERROR_CONTAINS(
      parse_dataset_meta("{" + base + R"(, "num_nodes": 3, "directed": "yes"})", "m.json"),
      "field 'directed' must be true or false");
  EXPECT_ERROR_CONTAINS(
      parse_dataset_meta("{" + base + R"(, "num_nodes": 3, "name": 7})", "m.json"),
      "field 'name' must be a string");
  EXPECT_ERROR_CONTAINS(
      parse_dataset_meta("{" + base + R"(, "num_nodes": 18446744073709551615})", "m.json"),
      "field 'num_nodes' must be an integer");
  EXPECT_ERROR_CONTAINS(
      parse_dataset_meta("{" + base + R"(, "num_nodes": 3, "num_splits": -2})", "m.json"),
      "num_splits must not be negative");
  EXPECT_ERROR_CONTAINS(parse_dataset_meta("[1]", "m.json"), "m.json: must hold a JSON object");
  EXPECT_ERROR_CONTAINS(
      parse_dataset_meta(R"({"format_version": 3, "num_nodes": 3, "num_edges": 2, "feat_dim": 4,
                             "num_classes": 2})",
                         "m.json"),
      "m.json: format_version 3 is not supported (this build reads versions 1 and 2)");
  EXPECT_ERROR_CONTAINS(parse_dataset_meta("{", "m.json"), "m.json: not valid JSON");
}

TEST(DatasetMeta, Version1IsReadOnlyWhereTheOrientationCannotDiffer) {
  // Version 1 lists of a directed graph held the nodes each node's edges point to.
  const std::string v1 =
      R"({"format_version": 1, "num_nodes": 3, "num_edges": 2, "feat_dim": 4, "num_classes": 2)";
  EXPECT_FALSE(parse_dataset_meta(v1 + "}", "m.json").directed);
  EXPECT_FALSE(parse_dataset_meta(v1 + R"(, "directed": false})", "m.json").directed);
  EXPECT_ERROR_CONTAINS(parse_dataset_meta(v1 + R"(, "directed": true})", "m.json"),
                        "m.json: a directed graph of format_version 1 lists the nodes each "
                        "node's edges point to");
}

TEST(DatasetMeta, ClassNamesAreOneStringPerClass) {
  const std::string base =
      R"({"format_version": 1, "num_nodes": 3, "num_edges": 2, "feat_dim": 4, "num_classes": 2)";
  EXPECT_TRUE(parse_dataset_meta(base + "}", "m.json").class_names.empty());
  EXPECT_EQ(
      parse_dataset_meta(base + R"(, "class_names": ["a", "Zo\u00eb"]})", "m.json").class_names,
      (std::vector<std::string>{"a", "Zo\xC3\xAB"}));
  EXPECT_ERROR_CONTAINS(parse_dataset_meta(base + R"(, "class_names": ["a"]})", "m.json"),
                        "m.json: field 'class_names' must be a list of 2 strings");
  EXPECT_ERROR_CONTAINS(parse_dataset_meta(base + R"(, "class_names": ["a", 3]})", "m.json"),
                        "field 'class_names' holds 3; class names must be strings");
}

}  // namespace
}  // namespace directgnn
