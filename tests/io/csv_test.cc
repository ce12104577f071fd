// The RFC 4180 reader and the CSV label tables built on it, from hand-written text.
#include "io/csv.h"

#include <ATen/ATen.h>

#include <fstream>

#include "io/csv_labels.h"
#include "io/dataset.h"
#include "io/npy.h"
#include "test_util.h"

namespace directgnn {
namespace {

std::vector<CsvRecord> records(std::string_view text) {
  CsvReader reader(text, "t.csv");
  std::vector<CsvRecord> out;
  for (CsvRecord r; reader.next(r);) out.push_back(r);
  return out;
}

using Fields = std::vector<std::string>;

TEST(CsvReader, PlainFieldsAndLineEnds) {
  const auto lf = records("a,b,c\n1,2,3\n");
  ASSERT_EQ(lf.size(), 2u);
  EXPECT_EQ(lf[0].fields, (Fields{"a", "b", "c"}));
  EXPECT_EQ(lf[1].fields, (Fields{"1", "2", "3"}));
  EXPECT_EQ(lf[1].line, 2);
  const auto crlf = records("a,b\r\n1,2\r\n,\r\n3,");
  ASSERT_EQ(crlf.size(), 4u);
  EXPECT_EQ(crlf[1].fields, (Fields{"1", "2"}));
  EXPECT_EQ(crlf[2].fields, (Fields{"", ""}));
  EXPECT_EQ(crlf[3].fields, (Fields{"3", ""}));
  EXPECT_EQ(records("x\r")[0].fields, (Fields{"x"}));  // a last CR ends the line
  EXPECT_TRUE(records("").empty());
}

TEST(CsvReader, QuotedFieldsHoldCommasQuotesAndLineBreaks) {
  const auto r = records(
      "id,text,label\r\n"
      "1,\"a, b\",x\r\n"
      "2,\"say \"\"hi\"\"\",y\r\n"
      "3,\"two\r\nlines\nhere\",z\r\n"
      "4,\"\",\"\"\"\"\r\n");
  ASSERT_EQ(r.size(), 5u);
  EXPECT_EQ(r[1].fields, (Fields{"1", "a, b", "x"}));
  EXPECT_EQ(r[2].fields, (Fields{"2", "say \"hi\"", "y"}));
  EXPECT_EQ(r[3].fields, (Fields{"3", "two\r\nlines\nhere", "z"}));
  EXPECT_EQ(r[3].line, 4);
  EXPECT_EQ(r[4].fields, (Fields{"4", "", "\""}));
  EXPECT_EQ(r[4].line, 7);  // the record after one spanning three lines
}

TEST(CsvReader, Utf8PassesThroughAndTheByteOrderMarkIsSkipped) {
  const auto r =
      records("\xEF\xBB\xBFid,name\n1,Zo\xC3\xAB\n2,\"\xE5\x9B\xBE, \xF0\x9F\x93\x88\"\n");
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].fields, (Fields{"id", "name"}));
  EXPECT_EQ(r[1].fields[1], "Zo\xC3\xAB");
  EXPECT_EQ(r[2].fields[1], "\xE5\x9B\xBE, \xF0\x9F\x93\x88");
  EXPECT_TRUE(is_valid_utf8("Zo\xC3\xAB \xE5\x9B\xBE \xF0\x9F\x93\x88"));
  for (const char* bad :
       {"\xC3", "\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xFF", "a\x80"}) {
    EXPECT_FALSE(is_valid_utf8(bad)) << bad;
  }
}

TEST(CsvReader, BlankLinesAreSkipped) {
  const auto r = records("a,b\n\n1,2\r\n\r\n\n3,4\n\n");
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[1].line, 3);
  EXPECT_EQ(r[2].line, 6);
}

TEST(CsvReader, ErrorsNameTheLine) {
  EXPECT_ERROR_CONTAINS(records("a,b\n1,\"open\n2,3\n"),
                        "t.csv line 2: field 2 opens a quote that is never closed");
  EXPECT_ERROR_CONTAINS(records("a,b\n1,2\n3,x\"y\n"),
                        "t.csv line 3: field 2 holds a quote but does not start with one");
  EXPECT_ERROR_CONTAINS(records("a,b\n\"x\"y,2\n"),
                        "t.csv line 2: field 1 has text after its closing quote");
  EXPECT_ERROR_CONTAINS(records("a,b\n\"multi\nline\",2\n1,2,3\n"),
                        "t.csv line 4: has 3 fields but the first line has 2");
  EXPECT_ERROR_CONTAINS(records("a,b,c\n1,2\n"), "line 2: has 2 fields");
}

NamedLabels labels(const std::string& text, int64_t nodes, CsvLabelColumns columns) {
  return read_csv_labels(TextSource::memory(text, "targets.csv"), nodes, columns);
}

TEST(CsvLabels, ClassNamesInSortedOrderAndUnlistedNodesUnlabelled) {
  const NamedLabels l = labels(
      "id,page_name,page_type\r\n"
      "0,\"Acme, Inc.\",company\r\n"
      "3,\"The \"\"Daily\"\" Show\",tvshow\r\n"
      "1,Zo\xC3\xAB,politician\r\n"
      "4, x , company \r\n",
      6, {"page_type", ""});
  EXPECT_EQ(l.class_names, (Fields{"company", "politician", "tvshow"}));
  EXPECT_TRUE(l.labels.equal(at::tensor({0, 1, -1, 2, 0, -1}, at::kLong)));
}

TEST(CsvLabels, IdColumnDefaultsToIdThenTheFirst) {
  const NamedLabels named = labels("name,id,label\nb,1,x\na,0,y\n", 2, {"label", ""});
  EXPECT_TRUE(named.labels.equal(at::tensor({1, 0}, at::kLong)));
  const NamedLabels first = labels("node,label\n1,x\n0,y\n", 2, {"label", ""});
  EXPECT_TRUE(first.labels.equal(at::tensor({1, 0}, at::kLong)));
  const NamedLabels chosen = labels("id,new_id,label\n7,1,x\n9,0,y\n", 2, {"label", "new_id"});
  EXPECT_TRUE(chosen.labels.equal(at::tensor({1, 0}, at::kLong)));
}

TEST(CsvLabels, IntegerNamesSortNumerically) {
  const NamedLabels l = labels("id,label\n0,10\n1,2\n2,-1\n3,2\n", 4, {"label", ""});
  EXPECT_EQ(l.class_names, (Fields{"-1", "2", "10"}));
  EXPECT_TRUE(l.labels.equal(at::tensor({2, 1, 0, 1}, at::kLong)));
}

TEST(CsvLabels, ErrorsNameTheLineAndTheFix) {
  const CsvLabelColumns c{"label", ""};
  EXPECT_ERROR_CONTAINS(labels("id,label\n0,a\n9,b\n", 5, c),
                        "targets.csv line 3: node 9 is not in the graph (its nodes are 0 to 4)");
  EXPECT_ERROR_CONTAINS(labels("id,label\n0,a\n-2,b\n", 5, c),
                        "targets.csv line 3: '-2' in column 'id' is not a node id");
  EXPECT_ERROR_CONTAINS(labels("id,label\n0,a\nx7,b\n", 5, c), "line 3: 'x7' in column 'id'");
  EXPECT_ERROR_CONTAINS(labels("id,label\n0,a\n\"1\",\"b\nc\"\n0,b\n", 5, c),
                        "targets.csv line 5: node 0 already has a label on line 2");
  EXPECT_ERROR_CONTAINS(
      labels("id,label\n0,a\n1,\n", 5, c),
      "targets.csv line 3: node 1 has no label in column 'label'; remove the row");
  EXPECT_ERROR_CONTAINS(labels("id,label\n0,a\n1,\"  \"\n", 5, c), "line 3: node 1 has no label");
  EXPECT_ERROR_CONTAINS(labels("id,label\n0,a\n1,b\xC3\n", 5, c),
                        "line 3: the label in column 'label' is not valid UTF-8");
  EXPECT_ERROR_CONTAINS(labels("id,name\n0,a\n", 5, c),
                        "targets.csv: has no column 'label' (columns: id, name); choose one with "
                        "label_column");
  EXPECT_ERROR_CONTAINS(labels("id,label\n0,a\n", 5, {"label", "node"}),
                        "has no column 'node' (columns: id, label); choose one with id_column");
  EXPECT_ERROR_CONTAINS(labels("id,label\n0,a\n", 5, {"", ""}),
                        "name the column holding the classes with label_column (columns: "
                        "id, label)");
  EXPECT_ERROR_CONTAINS(labels("id,label,label\n0,a,b\n", 5, c),
                        "the header has two columns named 'label'");
  EXPECT_ERROR_CONTAINS(labels("", 5, c), "targets.csv: is empty");
  EXPECT_ERROR_CONTAINS(labels("id,label\n", 5, c), "has a header but no rows");
  EXPECT_ERROR_CONTAINS(labels("id,label\n0,a\n1,b,c\n", 5, c), "line 3: has 3 fields");
}

using testing::write_text;

TEST(EdgeListImport, CsvLabelsGiveClassNames) {
  testing::TempDirectory tmp;
  write_text(tmp.file("edges.csv"), "id_1,id_2\n0,1\n1,2\n2,3\n3,4\n");
  write_text(tmp.file("target.csv"), "id,name,kind\n0,\"a, b\",cat\n1,c,dog\n2,d,cat\n4,e,ant\n");
  ImportOptions o;
  o.labels_path = tmp.file("target.csv");
  o.label_column = "kind";
  o.add_inverse_edges = true;
  Dataset ds = load_dataset(tmp.file("edges.csv"), o);
  EXPECT_EQ(ds.num_nodes(), 5);
  EXPECT_EQ(ds.num_classes, 3);
  EXPECT_EQ(ds.class_names, (Fields{"ant", "cat", "dog"}));
  EXPECT_TRUE(ds.labels.equal(at::tensor({1, 2, 1, -1, 0}, at::kLong)));
  // The names survive a dataset directory (meta.json "class_names").
  save_dataset_dir(ds, tmp.file("ds"));
  EXPECT_EQ(load_dataset(tmp.file("ds")).class_names, ds.class_names);
  // With --features the graph has one node per row, so node 6 may be labelled.
  save_npy(tmp.file("x.npy"), at::ones({7, 3}));
  o.features_path = tmp.file("x.npy");
  write_text(tmp.file("target.csv"), "id,kind\n0,cat\n6,dog\n");
  ds = load_dataset(tmp.file("edges.csv"), o);
  EXPECT_EQ(ds.num_nodes(), 7);
  EXPECT_EQ(ds.labels[6].item<int64_t>(), 1);
  save_npy(tmp.file("x.npy"), at::ones({3, 3}));
  EXPECT_ERROR_CONTAINS(load_dataset(tmp.file("edges.csv"), o),
                        "x.npy: has 3 rows, but the edge list has node id 4");
}

TEST(EdgeListImport, CsvLabelOptionsAreChecked) {
  testing::TempDirectory tmp;
  write_text(tmp.file("edges.txt"), "0 1\n1 2\n");
  write_text(tmp.file("t.csv"), "id,label\n0,a\n1,b\n7,a\n");
  ImportOptions o;
  o.labels_path = tmp.file("t.csv");
  EXPECT_ERROR_CONTAINS(load_dataset(tmp.file("edges.txt"), o),
                        "holding the classes with label_column");
  o.label_column = "label";
  EXPECT_ERROR_CONTAINS(load_dataset(tmp.file("edges.txt"), o),
                        "t.csv line 4: node 7 is not in the graph");
  save_npy(tmp.file("l.npy"), at::tensor({0, 1, 0}, at::kLong));
  o.labels_path = tmp.file("l.npy");
  EXPECT_ERROR_CONTAINS(load_dataset(tmp.file("edges.txt"), o),
                        "label_column and id_column are for CSV labels");
}

}  // namespace
}  // namespace directgnn
