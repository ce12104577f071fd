// Typed CSV edge lists (io/hetero_dir.h, docs/formats.md): nodes.csv gives each node type's
// count, each S___R___D.csv file one relation's edges, and optional .npy files the features,
// labels and split of the target type.
#include <ATen/ATen.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "directgnn/error.h"
#include "io/csv.h"
#include "io/hetero_dir.h"
#include "io/npy.h"
#include "io/text_import.h"
#include "io/text_lines.h"

namespace directgnn {
namespace fs = std::filesystem;
namespace {

constexpr const char* kEdgeSuffixes[] = {".csv.gz", ".txt.gz", ".tsv.gz", ".csv", ".txt", ".tsv"};

std::vector<NodeType> read_nodes_csv(const std::string& path) {
  DGNN_CHECK(fs::exists(path), path,
             ": missing; list each node type and its count, one "
             "\"type,count\" per line");
  return parse_node_table(read_all_text(path), path);
}

}  // namespace

std::vector<NodeType> parse_node_table(std::string_view text, const std::string& path) {
  std::vector<NodeType> types;
  size_t begin = 0;
  for (int64_t line = 1; begin < text.size(); ++line) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    const std::string_view row = trimmed(text.substr(begin, end - begin));
    begin = end + 1;
    if (row.empty() || row.front() == '#') continue;
    std::string_view f[2];
    const int n = split_fields(row, f, 2);
    NodeType t;
    if (n == 2 && parse_int(f[1], t.count)) {
      t.name = std::string(f[0]);
      types.push_back(std::move(t));
      continue;
    }
    DGNN_CHECK(n == 2 && types.empty(), path, " line ", line, ": expected \"type,count\", got '",
               std::string(row.substr(0, 80)), "'");
  }
  DGNN_CHECK(!types.empty(), path, ": lists no node types; give one \"type,count\" per line");
  return types;
}

bool relation_file_names(const std::string& file, std::string names[3]) {
  for (const char* suffix : kEdgeSuffixes) {
    const std::string_view s(suffix);
    if (file.size() <= s.size() || file.compare(file.size() - s.size(), s.size(), s) != 0) {
      continue;
    }
    const std::string stem = file.substr(0, file.size() - s.size());
    const size_t a = stem.find("___"), b = stem.rfind("___");
    if (a == std::string::npos || b < a + 3) return false;
    names[0] = stem.substr(0, a);
    names[1] = stem.substr(a + 3, b - a - 3);
    names[2] = stem.substr(b + 3);
    return !names[0].empty() && !names[1].empty() && !names[2].empty();
  }
  return false;
}

namespace {

Relation read_relation(const HeteroDataset& ds, const std::string& path,
                       const std::string names[3]) {
  Relation r;
  r.src = names[0];
  r.rel = names[1];
  r.dst = names[2];
  const int64_t ns = ds.node_types[ds.type_index(r.src, path)].count;
  const int64_t nd = ds.node_types[ds.type_index(r.dst, path)].count;
  EdgeColumns edges = parse_edge_lines(path, true);
  r.graph = build_relation_csr(std::move(edges.src), std::move(edges.dst), ns, nd, path);
  return r;
}

void read_relations(HeteroDataset& ds, const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file()) files.push_back(entry.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  for (const std::string& file : files) {
    std::string names[3];
    if (relation_file_names(file, names))
      ds.relations.push_back(read_relation(ds, dir + "/" + file, names));
  }
  DGNN_CHECK(!ds.relations.empty(), dir,
             ": holds no relation files; name each SRC___REL___DST.csv (two ids per line)");
}

// The target type named in target.txt, its labels.npy and, when given, its split.
void read_target(HeteroDataset& ds, const std::string& dir) {
  const std::string target_file = dir + "/target.txt";
  const bool has_labels = fs::exists(dir + "/labels.npy");
  if (!fs::exists(target_file)) {
    DGNN_CHECK(!has_labels, dir, "/labels.npy: needs target.txt naming the labelled node type");
    return;
  }
  const std::string name(trimmed(read_all_text(target_file)));
  ds.target_type = ds.type_index(name, target_file);
  if (has_labels) ds.labels = load_npy(dir + "/labels.npy");
  const std::string names[3] = {"train_idx.npy", "val_idx.npy", "test_idx.npy"};
  int present = 0;
  for (const std::string& n : names) present += fs::exists(dir + "/" + n) ? 1 : 0;
  if (present == 0) return;
  DGNN_CHECK(present == 3, dir,
             ": a split needs all of train_idx.npy, val_idx.npy and "
             "test_idx.npy (ids of the target type)");
  ds.splits.push_back({load_npy(dir + "/" + names[0]), load_npy(dir + "/" + names[1]),
                       load_npy(dir + "/" + names[2])});
}

}  // namespace

HeteroDataset import_hetero_csv(const std::string& dir, const HeteroImportOptions& options) {
  DGNN_CHECK(fs::is_directory(dir), dir, ": not a directory of typed CSV edge lists");
  HeteroDataset ds;
  fs::path root = fs::path(dir).lexically_normal();
  if (root.filename().empty()) root = root.parent_path();
  ds.name = root.filename().string();
  ds.source = dir;
  ds.node_types = read_nodes_csv(dir + "/nodes.csv");
  for (NodeType& t : ds.node_types) {
    const std::string file = dir + "/" + t.name + ".features.npy";
    if (!fs::exists(file)) continue;
    t.features = load_npy(file);
    // A float64 table becomes float32 in memory; the file then no longer backs it.
    if (t.features.scalar_type() == at::kDouble) {
      t.features = t.features.to(at::kFloat);
    } else {
      t.features_path = file;
    }
  }
  read_relations(ds, dir);
  read_target(ds, dir);
  validate_hetero(ds, dir);
  if (options.add_inverse_edges) {
    add_reverse_relations(ds);
    validate_hetero(ds, dir, /*features_checked=*/true);
  }
  return ds;
}

}  // namespace directgnn
