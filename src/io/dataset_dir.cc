// The native dataset directory: meta.json plus one .npy file per array (docs/formats.md).
#include <ATen/ATen.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <type_traits>

#include "core/aligned_tensor.h"
#include "core/atomic_file.h"
#include "core/progress.h"
#include "core/resources.h"
#include "directgnn/error.h"
#include "io/dataset.h"
#include "io/dataset_files.h"
#include "io/npy.h"

namespace directgnn {
namespace fs = std::filesystem;
namespace {

// Version 2 fixed the orientation of a directed graph's lists (docs/formats.md): node v's list
// holds the nodes v receives messages from. Version 1 wrote the nodes v's edges point to; for an
// undirected graph both are the same, so version 1 is still read where `directed` is false.
constexpr int kFormatVersion = 2;

std::string split_dir(const std::string& root, size_t k) {
  return k == 0 ? root : root + "/split_" + std::to_string(k);
}

// Training gathers rows at random. A table that fits in the memory available keeps the
// kernel's read-around, which fills the page cache in large reads; a larger one is read a
// page per row, as read-around would fetch megabytes per row only to evict them again.
void choose_feature_access(Dataset& ds) {
  const int64_t bytes = static_cast<int64_t>(ds.features.nbytes());
  const int64_t available = host_memory().available;
  if (available > 0 && bytes > available) {
    advise_access(ds.features, MapAccess::kRandom);
    ds.feature_access = "memory-mapped, " + gib_text(bytes) + " > " + gib_text(available) +
                        " available: read a page per row";
  } else {
    advise_access(ds.features, MapAccess::kReadAround);
  }
}

// link/: train.npy, val.npy, test.npy ([E, 2] positives) and, unless the layout is "none",
// val_neg.npy and test_neg.npy (docs/formats.md).
LinkSplit load_link_split(const std::string& dir, const std::string& negatives) {
  const std::string ldir = dir + "/link";
  LinkSplit s;
  s.train = load_required(ldir, "train.npy");
  s.val = load_required(ldir, "val.npy");
  s.test = load_required(ldir, "test.npy");
  s.negatives = parse_link_negatives(negatives, dir + "/meta.json (link.negatives)");
  if (s.negatives != LinkNegatives::kNone) {
    s.val_neg = load_required(ldir, "val_neg.npy");
    s.test_neg = load_required(ldir, "test_neg.npy");
  }
  return s;
}

// The same arrays, as int32 where the node ids fit.
void save_link_split(const std::string& dir, const LinkSplit& s, int64_t num_nodes) {
  const std::string ldir = dir + "/link";
  fs::create_directories(ldir);
  const at::ScalarType type = index_type_for(num_nodes);
  save_npy(ldir + "/train.npy", s.train.to(type));
  save_npy(ldir + "/val.npy", s.val.to(type));
  save_npy(ldir + "/test.npy", s.test.to(type));
  if (s.negatives == LinkNegatives::kNone) return;
  save_npy(ldir + "/val_neg.npy", s.val_neg.to(type));
  save_npy(ldir + "/test_neg.npy", s.test_neg.to(type));
}

}  // namespace

std::string partition_book_text(const PartitionBook& book) {
  return book.method.empty() ? std::string() : partition_book_json(book).dump();
}

DatasetMeta parse_dataset_meta(std::string_view text, const std::string& where) {
  nlohmann::json meta;
  try {
    meta = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail(where, ": not valid JSON: ", e.what());
  }
  if (!meta.is_object()) fail(where, ": must hold a JSON object");
  const auto version = json_field<int64_t>(meta, "format_version", where);
  DGNN_CHECK(version == 1 || version == kFormatVersion, where, ": format_version ", version,
             " is not supported (this build reads versions 1 and ", kFormatVersion, ")");
  DatasetMeta out;
  out.name = optional_json_field<std::string>(meta, "name", where, "");
  out.num_nodes = json_field<int64_t>(meta, "num_nodes", where);
  out.num_edges = json_field<int64_t>(meta, "num_edges", where);
  out.feat_dim = json_field<int64_t>(meta, "feat_dim", where);
  out.num_classes = json_field<int64_t>(meta, "num_classes", where);
  out.directed = optional_json_field<bool>(meta, "directed", where, false);
  DGNN_CHECK(version == kFormatVersion || !out.directed, where,
             ": a directed graph of format_version 1 lists the nodes each node's edges point to; "
             "version 2 lists the nodes each node receives messages from (docs/formats.md). "
             "Convert the source graph again, or store the transposed CSR and set format_version ",
             kFormatVersion);
  out.num_splits = optional_json_field<int64_t>(meta, "num_splits", where, -1);
  DGNN_CHECK(out.num_nodes > 0 && out.num_edges >= 0 && out.feat_dim > 0 &&
                 (out.num_classes >= 2 || out.num_classes == 0),
             where,
             ": num_nodes, feat_dim must be positive, num_edges non-negative and num_classes >= 2 "
             "(or 0: no labels.npy, a link-prediction dataset)");
  DGNN_CHECK(out.num_splits >= -1, where, ": num_splits must not be negative, got ",
             out.num_splits);
  if (meta.contains("features_checked")) {
    const nlohmann::json& checked = meta.at("features_checked");
    if (!checked.is_object()) fail(where, ": field 'features_checked' must be an object");
    const std::string inner = where + " (features_checked)";
    out.checked_bytes = json_field<int64_t>(checked, "bytes", inner);
    out.checked_mtime_ns = json_field<int64_t>(checked, "mtime_ns", inner);
    out.checked_inode = json_field<int64_t>(checked, "inode", inner);
  }
  out.class_names = class_names_field(meta, out.num_classes, where);
  out.node_order = optional_json_field<std::string>(meta, "node_order", where, "");
  DGNN_CHECK(out.node_order.empty() || out.node_order == "degree" || out.node_order == "rcm" ||
                 out.node_order == "metis" || out.node_order == "random",
             where, ": node_order '", out.node_order,
             "' is not one this build knows (degree, rcm, metis, random); remove the field only "
             "if node_ids.npy is gone too");
  if (meta.contains("partition")) out.partition = parse_partition_book(meta.at("partition"), where);
  if (meta.contains("link")) {
    const nlohmann::json& link = meta.at("link");
    if (!link.is_object()) fail(where, ": field 'link' must be an object");
    out.link_negatives = json_field<std::string>(link, "negatives", where + " (link)");
    parse_link_negatives(out.link_negatives, where + " (link.negatives)");
    out.eval_edges_in_graph =
        optional_json_field<bool>(link, "eval_edges_in_graph", where + " (link)", false);
    out.link_published = optional_json_field<bool>(link, "published", where + " (link)", false);
  }
  return out;
}

Dataset load_dataset_dir(const std::string& dir, const ImportOptions& options) {
  const std::string meta_path = dir + "/meta.json";
  std::ifstream in(meta_path, std::ios::binary);
  if (!in) fail(dir, ": missing meta.json (is this a dataset directory? see docs/formats.md)");
  std::ostringstream text;
  text << in.rdbuf();
  const DatasetMeta meta = parse_dataset_meta(text.str(), meta_path);
  Dataset ds;
  ds.source = dir;
  ds.name = meta.name.empty() ? fs::path(dir).filename().string() : meta.name;
  const int64_t num_nodes = meta.num_nodes, num_edges = meta.num_edges, feat_dim = meta.feat_dim;
  ds.num_classes = meta.num_classes;
  ds.class_names = meta.class_names;
  ds.directed = meta.directed;
  ds.partition = meta.partition;
  if (ds.partition.structure_by_part) {
    load_structure_parts(ds, dir, num_nodes, options);
  } else {
    ds.graph.indptr = load_required(dir, "indptr.npy");
    ds.graph.indices = load_required(dir, "indices.npy");
    if (fs::exists(dir + "/edge_weights.npy")) {
      ds.graph.weights = load_npy(dir + "/edge_weights.npy");
      validate_edge_weights(ds.graph, dir + "/edge_weights.npy");
    }
  }
  if (ds.partition.features_by_part) {
    load_feature_parts(ds, dir, feat_dim, options);
  } else {
    ds.features = load_required(dir, "features.npy");
    ds.features_path = dir + "/features.npy";
    DGNN_CHECK(ds.features.dim() == 2 && ds.features.size(1) == feat_dim, dir,
               "/features.npy: has shape ", ds.features.sizes(),
               " but meta.json feat_dim = ", feat_dim);
    const FileStamp stamp = file_stamp(ds.features_path);
    ds.features_checked = meta.checked_bytes >= 0 && stamp.bytes == meta.checked_bytes &&
                          stamp.mtime_ns == meta.checked_mtime_ns &&
                          stamp.inode == meta.checked_inode;
  }
  if (meta.num_classes > 0) ds.labels = load_required(dir, "labels.npy");
  // A rank holding its part's edges only runs node classification: a stored link split, whose
  // checks read the whole graph, is left out.
  if (!meta.link_negatives.empty() && ds.structure_part < 0) {
    ds.link = load_link_split(dir, meta.link_negatives);
    ds.link.eval_edges_in_graph = meta.eval_edges_in_graph;
    ds.link.published = meta.link_published;
  }
  if (!meta.node_order.empty()) {
    ds.node_ids = load_required(dir, "node_ids.npy");
    ds.node_order = meta.node_order;
  }
  DGNN_CHECK(ds.graph.indptr.dim() == 1 && ds.graph.indptr.numel() - 1 == num_nodes, dir,
             "/indptr.npy: has shape ", ds.graph.indptr.sizes(),
             " but meta.json num_nodes = ", num_nodes, " needs num_nodes + 1 entries");
  if (ds.partition.structure_by_part) {
    int64_t edges = 0;
    for (int64_t e : ds.partition.edges) edges += e;
    DGNN_CHECK(edges == num_edges, dir, "/meta.json: the parts' edges add up to ", edges,
               " but num_edges = ", num_edges);
  } else {
    DGNN_CHECK(ds.graph.indices.dim() == 1 && ds.graph.indices.numel() == num_edges, dir,
               "/indices.npy: has shape ", ds.graph.indices.sizes(),
               " but meta.json num_edges = ", num_edges);
  }
  const int64_t num_splits =
      meta.num_splits >= 0 ? meta.num_splits : (fs::exists(dir + "/train_idx.npy") ? 1 : 0);
  for (int64_t k = 0; k < num_splits; ++k) {
    const std::string sdir = split_dir(dir, static_cast<size_t>(k));
    ds.splits.push_back({load_required(sdir, "train_idx.npy"), load_required(sdir, "val_idx.npy"),
                         load_required(sdir, "test_idx.npy")});
  }
  // The scan (when the file is not known checked) is one pass from start to end.
  if (!ds.features_checked) advise_access(ds.features, MapAccess::kSequential);
  validate_dataset(ds, dir);
  choose_feature_access(ds);
  return ds;
}

FeatureStream feature_stream_of(const at::Tensor& x, at::ScalarType dtype) {
  DGNN_CHECK(x.defined() && x.dim() == 2, "the dataset has no [N, F] feature table");
  FeatureStream stream;
  stream.rows = x.size(0);
  stream.dim = x.size(1);
  stream.dtype = dtype;
  stream.fill = [x](int64_t begin, int64_t end, float* rows) {
    at::from_blob(rows, {end - begin, x.size(1)}, at::kFloat)
        .copy_(x.narrow(0, begin, end - begin));
  };
  return stream;
}

at::Tensor feature_table_of(const FeatureStream& stream) {
  at::Tensor table = empty_aligned({stream.rows, stream.dim}, stream.dtype);
  if (stream.dtype == at::kFloat) {
    if (stream.rows > 0) stream.fill(0, stream.rows, table.data_ptr<float>());
    return table;
  }
  const int64_t chunk = std::max<int64_t>(1, (int64_t{64} << 20) / (4 * stream.dim));
  at::Tensor scratch = at::empty({std::min(chunk, stream.rows), stream.dim}, at::kFloat);
  for (int64_t begin = 0; begin < stream.rows; begin += chunk) {
    const int64_t end = std::min(stream.rows, begin + chunk);
    stream.fill(begin, end, scratch.data_ptr<float>());
    table.narrow(0, begin, end - begin).copy_(scratch.narrow(0, 0, end - begin));
  }
  return table;
}

void save_dataset_dir(const Dataset& ds, const std::string& out) {
  save_dataset_dir(ds, out, feature_stream_of(ds.features, ds.features.scalar_type()));
}

void save_dataset_dir(const Dataset& ds, const std::string& out, const FeatureStream& features) {
  DGNN_CHECK(ds.structure_part < 0 && ds.feature_part < 0, out,
             ": this dataset holds one part of a partitioned dataset only; load it whole to "
             "write it");
  DGNN_CHECK(features.dtype == at::kFloat || features.dtype == at::kHalf, out,
             ": features can be stored as float32 or float16, not ", features.dtype);
  DGNN_CHECK(features.rows == ds.graph.num_nodes(), out, ": ", features.rows, " feature rows for ",
             ds.graph.num_nodes(), " nodes");
  std::error_code ec;
  if (fs::exists(out, ec) && !(fs::is_directory(out) && fs::is_empty(out))) {
    fail(out, ": already exists; remove it or choose another output path");
  }
  TempDir temp(out);
  const std::string& dir = temp.path();
  // A partitioned structure by part, otherwise one set of files.
  PartitionBook book = ds.partition;
  if (book.structure_by_part) {
    write_structure_parts(dir, book, ds.graph);
  } else {
    save_npy(dir + "/indptr.npy", ds.graph.indptr);
    save_npy(dir + "/indices.npy", ds.graph.indices);
    if (ds.graph.weights.defined()) save_npy(dir + "/edge_weights.npy", ds.graph.weights);
  }
  // A partitioned table by part (its stamps go into the book), otherwise one file.
  FileStamp checked;
  if (book.features_by_part) {
    book.checked = write_feature_parts(dir, book, features);
  } else {
    checked = write_checked_features(dir + "/features.npy", features);
  }
  if (ds.has_labels()) save_npy(dir + "/labels.npy", ds.labels);
  if (ds.node_ids.defined()) {
    save_npy(dir + "/node_ids.npy", ds.node_ids.to(index_type_for(ds.graph.num_nodes())));
  }
  if (ds.link.defined()) save_link_split(dir, ds.link, ds.graph.num_nodes());
  for (size_t k = 0; k < ds.splits.size(); ++k) {
    const std::string sdir = split_dir(dir, k);
    fs::create_directories(sdir);
    save_npy(sdir + "/train_idx.npy", ds.splits[k].train);
    save_npy(sdir + "/val_idx.npy", ds.splits[k].val);
    save_npy(sdir + "/test_idx.npy", ds.splits[k].test);
  }
  nlohmann::json meta = {
      {"name", ds.name},
      {"format_version", kFormatVersion},
      {"num_nodes", ds.graph.num_nodes()},
      {"num_edges", ds.graph.num_edges()},
      {"feat_dim", features.dim},
      {"feat_dtype", features.dtype == at::kHalf ? "float16" : "float32"},
      {"num_classes", ds.num_classes},
      {"directed", ds.directed},
      {"num_splits", ds.splits.size()},
  };
  if (checked.bytes >= 0) {
    meta["features_checked"] = {
        {"bytes", checked.bytes}, {"mtime_ns", checked.mtime_ns}, {"inode", checked.inode}};
  }
  if (!ds.class_names.empty()) meta["class_names"] = ds.class_names;
  if (ds.node_ids.defined()) meta["node_order"] = ds.node_order;
  if (!book.method.empty()) meta["partition"] = partition_book_json(book);
  if (ds.link.defined()) {
    meta["link"] = {{"negatives", link_negatives_name(ds.link.negatives)},
                    {"eval_edges_in_graph", ds.link.eval_edges_in_graph},
                    {"published", ds.link.published}};
  }
  write_file_atomic(dir + "/meta.json", meta.dump(2) + "\n");
  temp.commit();
}

}  // namespace directgnn
