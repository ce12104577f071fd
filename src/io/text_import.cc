// Importers for text formats: OGB node-property raw directories and SNAP/CSV edge lists
// (docs/formats.md). Text is read in blocks and parsed on every thread; errors name the file
// and line.
#include "io/text_import.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <mutex>
#include <vector>

#include "directgnn/error.h"
#include "graph/coo_builder.h"
#include "io/csv_labels.h"
#include "io/dataset.h"
#include "io/npy.h"
#include "io/text_lines.h"

namespace directgnn {
namespace fs = std::filesystem;
namespace {

// The first error any thread meets (by line number), thrown once parsing has finished.
class FirstError {
 public:
  void report(int64_t line, std::string message) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (line_ < 0 || line < line_) {
      line_ = line;
      message_ = std::move(message);
    }
  }
  void throw_if_any(const std::string& path) const {
    if (line_ >= 0) fail(path, " line ", line_, ": ", message_);
  }

 private:
  std::mutex mutex_;
  int64_t line_ = -1;
  std::string message_;
};

bool is_comment(std::string_view line) {
  size_t p = 0;
  while (p < line.size() && (line[p] == ' ' || line[p] == '\t')) ++p;
  return p == line.size() || line[p] == '#' || line[p] == '%';
}

struct Edges {
  std::vector<int64_t> src, dst;
  std::vector<uint8_t> keep;  // 0 for comment, blank and header lines
};

// Two node ids per line (further columns, such as weights, are ignored). With `text_format`
// (edge lists), comment lines and one header line before the first edge are skipped.
Edges read_edges(const TextSource& source, bool text_format) {
  Edges e;
  FirstError error;
  std::atomic<int64_t> first_edge_line{INT64_MAX};
  for_each_line(
      source,
      [&](int64_t first, int64_t count) {
        const auto size = static_cast<size_t>(first - 1 + count);
        e.src.resize(size);
        e.dst.resize(size);
        e.keep.resize(size);
      },
      [&](std::string_view line, int64_t number) {
        const auto i = static_cast<size_t>(number - 1);
        e.keep[i] = 0;
        if (text_format && is_comment(line)) return;
        std::string_view f[2];
        const int n = split_fields(line, f, 2);
        if (n >= 2 && parse_int(f[0], e.src[i]) && parse_int(f[1], e.dst[i])) {
          if (e.src[i] < 0 || e.dst[i] < 0) {
            error.report(number, "node ids must be non-negative, got '" + std::string(line) + "'");
          }
          e.keep[i] = 1;
          int64_t seen = first_edge_line.load();
          while (number < seen && !first_edge_line.compare_exchange_weak(seen, number)) {
          }
          return;
        }
        // A header is allowed only before the first edge; checked below.
        if (text_format && n >= 2) {
          e.src[i] = -1;
          return;
        }
        error.report(number, "expected two node ids separated by a comma, tab or space, got '" +
                                 std::string(line.substr(0, 80)) + "'");
      });
  for (size_t i = 0; i < e.keep.size(); ++i) {
    if (!e.keep[i] && e.src[i] == -1 && static_cast<int64_t>(i + 1) > first_edge_line.load()) {
      error.report(static_cast<int64_t>(i + 1),
                   "expected two node ids, found text after the "
                   "first edge (only one header line may come first)");
    }
  }
  error.throw_if_any(source.where);
  return e;
}

at::Tensor kept(const std::vector<int64_t>& values, const std::vector<uint8_t>& keep) {
  const auto m = static_cast<int64_t>(std::count(keep.begin(), keep.end(), 1));
  at::Tensor out = at::empty({m}, at::kLong);
  int64_t* o = out.data_ptr<int64_t>();
  for (size_t i = 0; i < values.size(); ++i) {
    if (keep[i]) *o++ = values[i];
  }
  return out;
}

// One integer per line (OGB counts, labels, split ids). Labels may be "nan" (unlabelled: -1)
// or integral floats ("3.0").
std::vector<int64_t> read_column(const TextSource& source, bool allow_nan) {
  std::vector<int64_t> values;
  FirstError error;
  for_each_line(
      source, [&](int64_t first, int64_t count) { values.resize(first - 1 + count); },
      [&](std::string_view line, int64_t number) {
        std::string_view f[1];
        int64_t& v = values[static_cast<size_t>(number - 1)];
        float x = 0;
        if (split_fields(line, f, 1) == 1 && parse_int(f[0], v)) return;
        if (allow_nan && split_fields(line, f, 1) == 1 && parse_float(f[0], x)) {
          if (std::isnan(x)) {
            v = -1;
            return;
          }
          // Integral floats only where they are exact (|x| < 2^53), never a clamped cast.
          if (std::floor(x) == x && std::fabs(x) < 9007199254740992.0) {
            v = static_cast<int64_t>(x);
            return;
          }
        }
        error.report(number, "expected one integer, got '" + std::string(line.substr(0, 80)) + "'");
      });
  error.throw_if_any(source.where);
  return values;
}

// One row of comma-separated floats per node; the first line fixes the width.
at::Tensor read_features(const TextSource& source, int64_t rows) {
  const int dim = split_fields(first_line(source), nullptr, 0);
  DGNN_CHECK(dim > 0, source.where, ": the first line holds no feature values");
  at::Tensor x = at::empty({rows, dim}, at::kFloat);
  float* data = x.data_ptr<float>();
  FirstError error;
  int64_t lines = 0;
  for_each_line(
      source,
      [&](int64_t first, int64_t count) {
        lines = first - 1 + count;
        DGNN_CHECK(lines <= rows, source.where, ": has more than ", rows,
                   " lines (one per node, as num-node-list.csv.gz says)");
      },
      [&](std::string_view line, int64_t number) {
        thread_local std::vector<std::string_view> f;
        f.resize(static_cast<size_t>(dim));
        const int n = split_fields(line, f.data(), dim);
        if (n != dim) {
          error.report(number, "has " + std::to_string(n) + " values; the first line has " +
                                   std::to_string(dim));
          return;
        }
        float* row = data + (number - 1) * dim;
        for (int c = 0; c < n; ++c) {
          if (!parse_float(f[static_cast<size_t>(c)], row[c])) {
            error.report(number, "value " + std::to_string(c + 1) + " ('" +
                                     std::string(f[static_cast<size_t>(c)]) + "') is not a number");
            return;
          }
        }
      });
  error.throw_if_any(source.where);
  DGNN_CHECK(lines == rows, source.where, ": has ", lines, " lines for ", rows,
             " nodes (one line of features per node)");
  return x;
}

std::string find_raw(const std::string& dir, const std::string& name) {
  for (const std::string& candidate : {dir + "/raw/" + name, dir + "/" + name}) {
    if (fs::exists(candidate)) return candidate;
  }
  fail(dir, ": OGB raw file ", name, " not found (looked in ", dir, "/raw and ", dir, ")");
}

at::Tensor tensor_of(const std::vector<int64_t>& v) {
  return at::tensor(at::ArrayRef<int64_t>(v), at::kLong);
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool labels_are_csv(const ImportOptions& options) {
  const std::string& p = options.labels_path;
  if (ends_with(p, ".npy")) {
    DGNN_CHECK(options.label_column.empty() && options.id_column.empty(), p,
               ": label_column and id_column are for CSV labels; a .npy holds one integer "
               "per node");
    return false;
  }
  return !options.label_column.empty() || ends_with(p, ".csv") || ends_with(p, ".csv.gz");
}

// Labels and class names from a CSV table. The graph's nodes are the rows of the features
// when given, else 0 to the largest id in the edge list.
void read_table_labels(Dataset& ds, const ImportOptions& options, int64_t max_id) {
  DGNN_CHECK(!ds.features.defined() || ds.features.dim() == 2, options.features_path,
             ": features must be a 2-D array [num_nodes, feat_dim]");
  const int64_t n = ds.features.defined() ? ds.features.size(0) : max_id + 1;
  DGNN_CHECK(max_id < n, options.features_path, ": has ", n,
             " rows, but the edge list has node id ", max_id,
             "; give one row of features per node");
  NamedLabels named =
      read_csv_labels(options.labels_path, n, {options.label_column, options.id_column});
  ds.labels = std::move(named.labels);
  ds.class_names = std::move(named.class_names);
  ds.num_classes = static_cast<int64_t>(ds.class_names.size());
}

}  // namespace

EdgeColumns parse_edge_lines(const TextSource& source, bool text_format) {
  Edges e = read_edges(source, text_format);
  return {kept(e.src, e.keep), kept(e.dst, e.keep)};
}

std::vector<int64_t> parse_int_column(const TextSource& source, bool allow_nan) {
  return read_column(source, allow_nan);
}

at::Tensor parse_feature_rows(const TextSource& source, int64_t rows) {
  return read_features(source, rows);
}

// An OGB dataset's split directories (DIR/split/NAME, or beside DIR/raw), sorted.
std::vector<fs::path> ogb_split_dirs(const std::string& dir) {
  std::vector<fs::path> out;
  for (const std::string& root : {dir + "/split", dir + "/raw/../split"}) {
    if (!fs::is_directory(root)) continue;
    for (const auto& entry : fs::directory_iterator(root)) {
      if (entry.is_directory()) out.push_back(entry.path());
    }
    break;
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool looks_like_ogb(const std::string& dir) {
  return fs::exists(dir + "/raw/edge.csv.gz") || fs::exists(dir + "/edge.csv.gz");
}

Dataset import_ogb(const std::string& dir, const ImportOptions& options) {
  const std::string nodes_file = find_raw(dir, "num-node-list.csv.gz");
  const std::vector<int64_t> counts = read_column(nodes_file, false);
  DGNN_CHECK(counts.size() == 1 && counts[0] > 0, nodes_file,
             ": expected one line with the node count (graph-property datasets with many graphs "
             "are not supported)");
  const int64_t n = counts[0];
  Dataset ds;
  ds.name = fs::path(dir).filename().string();
  ds.source = dir;
  const std::string edge_file = find_raw(dir, "edge.csv.gz");
  auto [src, dst] = parse_edge_lines(edge_file, false);
  ds.directed = !options.add_inverse_edges;
  ds.graph = build_csr_from_coo(std::move(src), std::move(dst), n,
                                {options.add_inverse_edges, !options.keep_self_loops}, edge_file);
  ds.features = read_features(find_raw(dir, "node-feat.csv.gz"), n);
  const bool labelled =
      fs::exists(dir + "/raw/node-label.csv.gz") || fs::exists(dir + "/node-label.csv.gz");
  if (labelled) {  // a node-property dataset; link-property ones (ogbl-*) have no labels
    const std::string label_file = find_raw(dir, "node-label.csv.gz");
    const std::vector<int64_t> labels = read_column(label_file, true);
    DGNN_CHECK(static_cast<int64_t>(labels.size()) == n, label_file, ": has ", labels.size(),
               " lines for ", n, " nodes");
    ds.labels = tensor_of(labels);
  }
  for (const fs::path& s : ogb_split_dirs(dir)) {
    if (fs::exists(s / "train.pt")) {
      DGNN_CHECK(options.skip_link_split_files, s.string(),
                 ": holds an OGB link split (train.pt, valid.pt, test.pt: torch pickles of numpy "
                 "arrays, which only Python reads). Convert the dataset from Python: "
                 "directgnn.datasets.import_ogbl(\"",
                 dir, "\", OUT) (docs/formats.md)");
      continue;
    }
    auto ids = [&](const char* name) {
      const std::string file = (s / (std::string(name) + ".csv.gz")).string();
      DGNN_CHECK(fs::exists(file), s.string(), ": split file ", name, ".csv.gz is missing");
      return tensor_of(read_column(file, false));
    };
    ds.splits.push_back({ids("train"), ids("valid"), ids("test")});
  }
  validate_dataset(ds, dir);
  return ds;
}

// The node count of an edge list imported without labels (for link prediction): the rows of
// the features when given, else 0 to the largest id.
int64_t unlabelled_node_count(const Dataset& ds, const ImportOptions& options, int64_t max_id) {
  if (!ds.features.defined()) return max_id + 1;
  DGNN_CHECK(ds.features.dim() == 2, options.features_path,
             ": features must be a 2-D array [num_nodes, feat_dim]");
  DGNN_CHECK(max_id < ds.features.size(0), options.features_path, ": has ", ds.features.size(0),
             " rows, but the edge list has node id ", max_id,
             "; give one row of features per node");
  return ds.features.size(0);
}

Dataset import_edge_list(const std::string& path, const ImportOptions& options) {
  auto [src, dst] = parse_edge_lines(path, true);
  DGNN_CHECK(src.numel() > 0, path, ": no edges found");
  Dataset ds;
  ds.name = fs::path(path).stem().string();
  ds.source = path;
  if (!options.features_path.empty()) {
    ds.features = load_npy(options.features_path);
    if (ds.features.scalar_type() == at::kDouble) ds.features = ds.features.to(at::kFloat);
  }
  const int64_t max_id = std::max(src.max().item<int64_t>(), dst.max().item<int64_t>());
  // Without labels the graph is for link prediction (docs/formats.md).
  const bool labelled = !options.labels_path.empty();
  if (labelled && labels_are_csv(options)) {
    read_table_labels(ds, options, max_id);
  } else if (labelled) {
    ds.labels = load_npy(options.labels_path);
    DGNN_CHECK(ds.labels.dim() == 1, options.labels_path, ": labels must be 1-D");
  }
  const int64_t n =
      ds.has_labels() ? ds.labels.numel() : unlabelled_node_count(ds, options, max_id);
  DGNN_CHECK(max_id < n, path, ": node id ", max_id, " needs at least ", max_id + 1,
             " labels, but ", options.labels_path, " has ", n);
  ds.directed = !options.add_inverse_edges;
  ds.graph = build_csr_from_coo(std::move(src), std::move(dst), n,
                                {options.add_inverse_edges, !options.keep_self_loops}, path);
  if (!ds.features.defined()) {
    // Without features, each node gets its log-degree and a constant: structure alone.
    const at::Tensor deg = ds.graph.degrees().to(at::kFloat);
    ds.features = at::stack({at::log1p(deg), at::ones_like(deg)}, 1);
  }
  validate_dataset(ds, path);
  return ds;
}

}  // namespace directgnn
