// OGB's heterogeneous raw layout, as ogbn-mag ships it (read as OGB's read_csv_heterograph_raw,
// read_node_label_hetero and read_nodesplitidx_split_hetero read it):
//   raw/num-node-dict.csv.gz             a header of type names, then one line of their counts
//   raw/triplet-type-list.csv.gz         "head,relation,tail" per line (else: relations/ dirs)
//   raw/relations/H___R___T/edge.csv.gz  "h,t" per line; num-edge-list.csv.gz: their count
//   raw/node-feat/T/node-feat.csv.gz     one row of floats per node of T (types without: none)
//   raw/nodetype-has-label.csv.gz        a header of type names, then True/False per type
//   raw/node-label/T/node-label.csv.gz   one class per line for the labelled type
//   split/NAME/T/{train,valid,test}.csv.gz  ids of T
// Other files (node_year, edge_reltype, ...) are ignored. Node types and relations are kept in
// sorted order, as OGB lists them.
#include <ATen/ATen.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <string>
#include <vector>

#include "directgnn/error.h"
#include "io/csv.h"
#include "io/hetero_dir.h"
#include "io/text_import.h"
#include "io/text_lines.h"

namespace directgnn {
namespace fs = std::filesystem;
namespace {

using Triplet = std::array<std::string, 3>;

// DIR/raw when it holds the raw files, else DIR itself.
std::string raw_dir_of(const std::string& dir) {
  return fs::exists(dir + "/raw/num-node-dict.csv.gz") ? dir + "/raw" : dir;
}

// A small CSV file (counts, flags, type lists), header included, as records.
std::vector<CsvRecord> read_records(const std::string& path) {
  const std::string text = read_all_text(path);
  CsvReader reader(text, path);
  std::vector<CsvRecord> out;
  CsvRecord record;
  while (reader.next(record)) out.push_back(record);
  return out;
}

int64_t count_field(const std::string& text, const std::string& where, const std::string& what) {
  int64_t value = 0;
  DGNN_CHECK(parse_int(text, value) && value >= 0, where, ": ", what, " '", text,
             "' is not a non-negative integer");
  return value;
}

// num-node-dict.csv.gz: the types, sorted by name, with their counts.
std::vector<NodeType> read_node_types(const std::string& raw) {
  const std::string path = raw + "/num-node-dict.csv.gz";
  const std::vector<CsvRecord> records = read_records(path);
  DGNN_CHECK(records.size() == 2, path, ": expected a header line of node types and one line of ",
             "counts, found ", records.size(),
             " lines (datasets of many graphs are not supported)");
  std::vector<NodeType> types;
  for (size_t c = 0; c < records[0].fields.size(); ++c) {
    NodeType t;
    t.name = records[0].fields[c];
    t.count = count_field(records[1].fields[c], path, "count of node type '" + t.name + "'");
    types.push_back(std::move(t));
  }
  std::sort(types.begin(), types.end(),
            [](const NodeType& a, const NodeType& b) { return a.name < b.name; });
  return types;
}

// The relations, from triplet-type-list.csv.gz, or the directories under relations/.
std::vector<Triplet> read_triplets(const std::string& raw) {
  std::vector<Triplet> out;
  const std::string list = raw + "/triplet-type-list.csv.gz";
  if (fs::exists(list)) {
    for (const CsvRecord& r : read_records(list)) {
      DGNN_CHECK(r.fields.size() == 3, list, " line ", r.line, ": expected head,relation,tail");
      out.push_back({r.fields[0], r.fields[1], r.fields[2]});
    }
  } else {
    DGNN_CHECK(fs::is_directory(raw + "/relations"), raw,
               ": has neither triplet-type-list.csv.gz nor relations/; OGB's heterogeneous "
               "layout keeps each relation's edges in relations/HEAD___REL___TAIL/edge.csv.gz");
    for (const auto& entry : fs::directory_iterator(raw + "/relations")) {
      if (!entry.is_directory()) continue;
      const std::string name = entry.path().filename().string();
      const size_t a = name.find("___"), b = name.rfind("___");
      DGNN_CHECK(a != std::string::npos && b > a + 3, entry.path().string(),
                 ": a relation directory is named HEAD___REL___TAIL");
      out.push_back({name.substr(0, a), name.substr(a + 3, b - a - 3), name.substr(b + 3)});
    }
  }
  DGNN_CHECK(!out.empty(), raw, ": lists no relations");
  std::sort(out.begin(), out.end());
  return out;
}

Relation read_relation(const HeteroDataset& ds, const std::string& raw, const Triplet& t) {
  const std::string rdir = raw + "/relations/" + t[0] + "___" + t[1] + "___" + t[2];
  const std::string edge_file = rdir + "/edge.csv.gz";
  Relation r;
  r.src = t[0];
  r.rel = t[1];
  r.dst = t[2];
  const int64_t ns = ds.node_types[ds.type_index(r.src, rdir)].count;
  const int64_t nd = ds.node_types[ds.type_index(r.dst, rdir)].count;
  DGNN_CHECK(fs::exists(edge_file), edge_file, ": missing; relation ", r.key(),
             " is listed but has no edges file");
  EdgeColumns edges = parse_edge_lines(edge_file, false);
  const std::string count_file = rdir + "/num-edge-list.csv.gz";
  if (fs::exists(count_file)) {
    const std::vector<int64_t> counts = parse_int_column(count_file, false);
    DGNN_CHECK(counts.size() == 1 && counts[0] == edges.src.numel(), count_file, ": says ",
               counts.empty() ? 0 : counts[0], " edges (", counts.size(), " lines) but ", edge_file,
               " has ", edges.src.numel(),
               " (datasets of many graphs are not "
               "supported)");
  }
  r.graph = build_relation_csr(std::move(edges.src), std::move(edges.dst), ns, nd, edge_file);
  return r;
}

// Types whose flag in a one-row table of True/False per type (nodetype-has-label.csv.gz) is set.
std::vector<std::string> flagged_types(const std::string& path) {
  const std::vector<CsvRecord> records = read_records(path);
  DGNN_CHECK(records.size() == 2, path, ": expected a header line of node types and one line ",
             "of True/False");
  std::vector<std::string> out;
  for (size_t c = 0; c < records[0].fields.size(); ++c) {
    const std::string& v = records[1].fields[c];
    DGNN_CHECK(v == "True" || v == "False" || v == "true" || v == "false" || v == "1" || v == "0",
               path, ": the flag of node type '", records[0].fields[c], "' is '", v,
               "'; expected True or False");
    if (v == "True" || v == "true" || v == "1") out.push_back(records[0].fields[c]);
  }
  return out;
}

// The labelled type and its labels; leaves the dataset unlabelled when no type has labels.
void read_labels(HeteroDataset& ds, const std::string& raw) {
  std::vector<std::string> labelled;
  const std::string flags = raw + "/nodetype-has-label.csv.gz";
  if (fs::exists(flags)) {
    labelled = flagged_types(flags);
  } else if (fs::is_directory(raw + "/node-label")) {
    for (const NodeType& t : ds.node_types) {
      if (fs::exists(raw + "/node-label/" + t.name + "/node-label.csv.gz")) {
        labelled.push_back(t.name);
      }
    }
  }
  if (labelled.empty()) return;
  DGNN_CHECK(labelled.size() == 1, raw, ": node types ", labelled[0], " and ", labelled[1],
             " both have labels; a heterogeneous dataset here has one target type");
  ds.target_type = ds.type_index(labelled[0], raw);
  const std::string file = raw + "/node-label/" + labelled[0] + "/node-label.csv.gz";
  DGNN_CHECK(fs::exists(file), file, ": missing; node type '", labelled[0], "' is labelled");
  const std::vector<int64_t> labels = parse_int_column(file, true);
  const int64_t count = ds.target().count;
  DGNN_CHECK(static_cast<int64_t>(labels.size()) == count, file, ": has ", labels.size(),
             " lines but node type '", labelled[0], "' has ", count,
             " nodes (num-node-dict.csv.gz); one label per node");
  ds.labels = at::tensor(at::ArrayRef<int64_t>(labels), at::kLong);
}

at::Tensor split_ids(const fs::path& dir, const char* name) {
  const fs::path file = dir / (std::string(name) + ".csv.gz");
  DGNN_CHECK(fs::exists(file), dir.string(), ": split file ", name, ".csv.gz is missing");
  const std::vector<int64_t> ids = parse_int_column(file.string(), false);
  return at::tensor(at::ArrayRef<int64_t>(ids), at::kLong);
}

// split/NAME/T/{train,valid,test}.csv.gz for the target type T, each NAME in sorted order.
void read_splits(HeteroDataset& ds, const std::string& dir, const std::string& raw) {
  std::string root = dir + "/split";
  if (!fs::is_directory(root) && raw == dir) root = (fs::path(dir) / ".." / "split").string();
  if (!fs::is_directory(root)) return;
  std::vector<fs::path> names;
  for (const auto& entry : fs::directory_iterator(root)) {
    if (entry.is_directory()) names.push_back(entry.path());
  }
  std::sort(names.begin(), names.end());
  for (const fs::path& s : names) {
    DGNN_CHECK(ds.target_type >= 0, s.string(),
               ": a split, but no node type has labels "
               "(raw/node-label/T/node-label.csv.gz)");
    const fs::path tdir = s / ds.target().name;
    DGNN_CHECK(fs::is_directory(tdir), s.string(), ": has no split of the labelled type '",
               ds.target().name, "'; OGB's layout is split/NAME/TYPE/{train,valid,test}.csv.gz");
    ds.splits.push_back(
        {split_ids(tdir, "train"), split_ids(tdir, "valid"), split_ids(tdir, "test")});
  }
}

std::string dataset_name(const std::string& dir, const std::string& raw) {
  fs::path p = fs::path(dir).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  if (raw == dir && p.filename() == "raw") p = p.parent_path();
  return p.filename().string();
}

}  // namespace

bool looks_like_ogb_hetero(const std::string& dir) {
  return fs::exists(dir + "/raw/num-node-dict.csv.gz") || fs::exists(dir + "/num-node-dict.csv.gz");
}

HeteroDataset import_ogb_hetero(const std::string& dir, const HeteroImportOptions& options) {
  const std::string raw = raw_dir_of(dir);
  DGNN_CHECK(fs::exists(raw + "/num-node-dict.csv.gz"), dir,
             ": OGB raw file num-node-dict.csv.gz not found (looked in ", dir, "/raw and ", dir,
             ")");
  HeteroDataset ds;
  ds.name = dataset_name(dir, raw);
  ds.source = dir;
  ds.node_types = read_node_types(raw);
  for (const Triplet& t : read_triplets(raw)) ds.relations.push_back(read_relation(ds, raw, t));
  for (NodeType& t : ds.node_types) {
    const std::string file = raw + "/node-feat/" + t.name + "/node-feat.csv.gz";
    if (fs::exists(file)) t.features = parse_feature_rows(file, t.count);
  }
  read_labels(ds, raw);
  read_splits(ds, dir, raw);
  validate_hetero(ds, dir);
  if (options.add_inverse_edges) {
    add_reverse_relations(ds);
    validate_hetero(ds, dir, /*features_checked=*/true);
  }
  return ds;
}

}  // namespace directgnn
