// A partitioned dataset's feature table and structure stored by part (docs/formats.md,
// "Partitioned datasets"): DIR/part-K/features.npy holds rows offsets[K] .. offsets[K+1]-1, and
// DIR/part-K/indptr.npy and indices.npy those nodes' in-edges.
#include <ATen/ATen.h>

#include <filesystem>

#include "io/dataset_files.h"
#include "io/npy.h"

namespace directgnn {

namespace fs = std::filesystem;

namespace {

template <typename T>
std::vector<T> json_list(const nlohmann::json& object, const char* name, const std::string& where) {
  if (!object.contains(name) || !object.at(name).is_array()) {
    fail(where, ": field '", name, "' must be a list");
  }
  std::vector<T> out;
  for (const nlohmann::json& v : object.at(name)) {
    DGNN_CHECK(v.is_number_integer(), where, ": field '", name, "' must hold integers, got ",
               v.dump().substr(0, 40));
    out.push_back(v.get<T>());
  }
  return out;
}

}  // namespace

// meta.json's "partition" (docs/formats.md): the method and P + 1 offsets, non-decreasing from
// 0 (the node count is checked on load), and per part its edges and seeds.
PartitionBook parse_partition_book(const nlohmann::json& book, const std::string& file) {
  const std::string where = file + " (partition)";
  if (!book.is_object()) fail(where, ": must be an object");
  PartitionBook out;
  out.method = json_field<std::string>(book, "method", where);
  out.offsets = json_list<int64_t>(book, "offsets", where);
  out.edges = json_list<int64_t>(book, "edges", where);
  out.seeds = json_list<int64_t>(book, "seeds", where);
  out.edge_cut = json_field<int64_t>(book, "edge_cut", where);
  if (book.contains("features")) {
    const std::string layout = json_field<std::string>(book, "features", where);
    DGNN_CHECK(layout == "by_part" || layout == "whole", where,
               ": features must be 'by_part' or "
               "'whole', got '",
               layout, "'");
    out.features_by_part = layout == "by_part";
  }
  if (book.contains("structure")) {
    const std::string layout = json_field<std::string>(book, "structure", where);
    DGNN_CHECK(layout == "by_part" || layout == "whole", where,
               ": structure must be 'by_part' or 'whole', got '", layout, "'");
    out.structure_by_part = layout == "by_part";
  }
  if (book.contains("checked")) {
    const nlohmann::json& list = book.at("checked");
    DGNN_CHECK(list.is_array(), where, ": checked must be a list of {bytes, mtime_ns, inode}");
    for (const nlohmann::json& c : list) {
      DGNN_CHECK(c.is_object(), where, ": checked must be a list of {bytes, mtime_ns, inode}");
      out.checked.push_back({json_field<int64_t>(c, "bytes", where),
                             json_field<int64_t>(c, "mtime_ns", where),
                             json_field<int64_t>(c, "inode", where)});
    }
  }
  const size_t parts = out.offsets.empty() ? 0 : out.offsets.size() - 1;
  DGNN_CHECK(parts >= 1 && out.offsets.front() == 0 &&
                 std::is_sorted(out.offsets.begin(), out.offsets.end()),
             where,
             ": offsets must start at 0 and never decrease (part k owns the ids from "
             "offsets[k] to offsets[k + 1])");
  DGNN_CHECK(out.edges.size() == parts && out.seeds.size() == parts, where,
             ": edges and seeds need one entry per part (", parts, ")");
  return out;
}

nlohmann::json partition_book_json(const PartitionBook& book) {
  std::vector<int64_t> nodes;
  for (int64_t k = 0; k < book.parts(); ++k) nodes.push_back(book.offsets[k + 1] - book.offsets[k]);
  nlohmann::json out = {{"method", book.method},
                        {"parts", book.parts()},
                        {"offsets", book.offsets},
                        {"nodes", nodes},
                        {"edges", book.edges},
                        {"seeds", book.seeds},
                        {"edge_cut", book.edge_cut},
                        {"features", book.features_by_part ? "by_part" : "whole"},
                        {"structure", book.structure_by_part ? "by_part" : "whole"}};
  if (!book.checked.empty()) {
    nlohmann::json checked = nlohmann::json::array();
    for (const auto& c : book.checked) {
      checked.push_back({{"bytes", c[0]}, {"mtime_ns", c[1]}, {"inode", c[2]}});
    }
    out["checked"] = checked;
  }
  return out;
}

std::string feature_part_file(int64_t part) {
  return "part-" + std::to_string(part) + "/features.npy";
}

std::vector<std::array<int64_t, 3>> write_feature_parts(const std::string& dir,
                                                        const PartitionBook& book,
                                                        const FeatureStream& features) {
  std::vector<std::array<int64_t, 3>> stamps;
  for (int64_t k = 0; k < book.parts(); ++k) {
    const int64_t first = book.offsets[k];
    FeatureStream part = features;
    part.rows = book.offsets[k + 1] - first;
    part.fill = [&features, first](int64_t begin, int64_t end, float* out) {
      features.fill(first + begin, first + end, out);
    };
    const std::string file = dir + "/" + feature_part_file(k);
    fs::create_directories(fs::path(file).parent_path());
    const FileStamp s = write_checked_features(file, part);
    stamps.push_back({s.bytes, s.mtime_ns, s.inode});
  }
  return stamps;
}

at::Tensor load_feature_part(const PartitionBook& book, const std::string& dir, int64_t k,
                             int64_t feat_dim, bool& checked) {
  const std::string file = feature_part_file(k);
  at::Tensor t = load_required(dir, file);
  const int64_t rows = book.offsets[k + 1] - book.offsets[k];
  DGNN_CHECK(t.dim() == 2 && t.size(0) == rows && t.size(1) == feat_dim, dir, "/", file,
             ": has shape ", t.sizes(), " but part ", k, " of the partition owns ", rows,
             " nodes and meta.json feat_dim = ", feat_dim);
  const FileStamp stamp = file_stamp(dir + "/" + file);
  const auto& c = book.checked;
  checked = static_cast<int64_t>(c.size()) > k && stamp == FileStamp{c[k][0], c[k][1], c[k][2]};
  return t;
}

void load_feature_parts(Dataset& ds, const std::string& dir, int64_t feat_dim,
                        const ImportOptions& options) {
  const int64_t parts = ds.partition.parts();
  if (options.feature_part >= 0 && options.feature_parts == parts) {
    DGNN_CHECK(options.feature_part < parts, dir, ": has ", parts, " parts; there is no part ",
               options.feature_part);
    ds.features =
        load_feature_part(ds.partition, dir, options.feature_part, feat_dim, ds.features_checked);
    ds.features_path = dir + "/" + feature_part_file(options.feature_part);
    ds.feature_part = options.feature_part;
    return;
  }
  std::vector<at::Tensor> tables;
  bool all_checked = true;
  for (int64_t k = 0; k < parts; ++k) {
    bool checked = false;
    tables.push_back(load_feature_part(ds.partition, dir, k, feat_dim, checked));
    all_checked = all_checked && checked;
  }
  // One process reads every part: the whole table, in memory (no one file to map or read
  // from disk).
  ds.features = parts == 1 ? tables[0] : at::cat(tables);
  ds.features_checked = all_checked;
  ds.features_path.clear();
}

namespace {

std::string part_dir(int64_t part) { return "part-" + std::to_string(part); }

// Part k's in-edges as stored (indptr from 0 over its rows, indices, optional weights), each
// file checked against the book.
CsrGraph load_structure_part(const Dataset& ds, const std::string& dir, int64_t k) {
  const std::string part = part_dir(k);
  CsrGraph g;
  g.indptr = load_required(dir, part + "/indptr.npy");
  g.indices = load_required(dir, part + "/indices.npy");
  const int64_t rows = ds.partition.offsets[k + 1] - ds.partition.offsets[k];
  const int64_t edges = ds.partition.edges[k];
  const std::string where = dir + "/" + part + "/indptr.npy";
  DGNN_CHECK(g.indptr.dim() == 1 && g.indptr.numel() == rows + 1, where, ": has shape ",
             g.indptr.sizes(), " but part ", k, " of the partition owns ", rows,
             " nodes, so it needs ", rows + 1, " entries");
  DGNN_CHECK(g.indptr.scalar_type() == at::kLong || g.indptr.scalar_type() == at::kInt, where,
             ": has dtype ", g.indptr.scalar_type(), "; row offsets are int64 (or int32)");
  g.indptr = g.indptr.to(at::kLong);
  const int64_t first = g.indptr[0].item<int64_t>(), last = g.indptr[-1].item<int64_t>();
  DGNN_CHECK(first == 0 && last == edges, where, ": runs from ", first, " to ", last, " but part ",
             k, " has ", edges,
             " in-edges (meta.json's partition.edges), so it "
             "must run from 0 to ",
             edges);
  DGNN_CHECK(g.indices.dim() == 1 && g.indices.numel() == edges, dir, "/", part,
             "/indices.npy: has shape ", g.indices.sizes(), " but part ", k, " has ", edges,
             " in-edges");
  if (fs::exists(dir + "/" + part + "/edge_weights.npy")) {
    g.weights = load_npy(dir + "/" + part + "/edge_weights.npy");
    DGNN_CHECK(g.weights.dim() == 1 && g.weights.numel() == edges, dir, "/", part,
               "/edge_weights.npy: has shape ", g.weights.sizes(), " but part ", k, " has ", edges,
               " in-edges");
  }
  return g;
}

}  // namespace

void write_structure_parts(const std::string& dir, const PartitionBook& book,
                           const CsrGraph& graph) {
  for (int64_t k = 0; k < book.parts(); ++k) {
    const int64_t begin = book.offsets[k], end = book.offsets[k + 1];
    const int64_t first = graph.indptr[begin].item<int64_t>();
    const int64_t count = graph.indptr[end].item<int64_t>() - first;
    const std::string part = dir + "/" + part_dir(k);
    fs::create_directories(part);
    save_npy(part + "/indptr.npy", graph.indptr.narrow(0, begin, end - begin + 1) - first);
    save_npy(part + "/indices.npy", graph.indices.narrow(0, first, count));
    if (graph.weights.defined()) {
      save_npy(part + "/edge_weights.npy", graph.weights.narrow(0, first, count));
    }
  }
}

void load_structure_parts(Dataset& ds, const std::string& dir, int64_t num_nodes,
                          const ImportOptions& options) {
  const int64_t parts = ds.partition.parts();
  DGNN_CHECK(ds.partition.offsets.back() == num_nodes, dir,
             "/meta.json: the partition's offsets end at ", ds.partition.offsets.back(),
             " but num_nodes = ", num_nodes);
  int64_t weighted = 0;
  for (int64_t k = 0; k < parts; ++k) {
    weighted += fs::exists(dir + "/" + part_dir(k) + "/edge_weights.npy") ? 1 : 0;
  }
  DGNN_CHECK(weighted == 0 || weighted == parts, dir, ": ", weighted, " of the ", parts,
             " parts have edge_weights.npy; every part needs one, or none");
  if (options.structure_part >= 0 && options.structure_parts == parts) {
    const int64_t k = options.structure_part;
    DGNN_CHECK(k < parts, dir, ": has ", parts, " parts; there is no part ", k);
    CsrGraph g = load_structure_part(ds, dir, k);
    const int64_t begin = ds.partition.offsets[k], end = ds.partition.offsets[k + 1];
    // Every node keeps its row; only this part's rows have edges.
    ds.graph.indptr = at::cat({at::zeros({begin}, at::kLong), g.indptr,
                               at::full({num_nodes - end}, g.indices.numel(), at::kLong)});
    ds.graph.indices = g.indices;
    ds.graph.weights = g.weights;
    ds.structure_part = k;
  } else {
    // One process holds every part: the whole graph, joined in memory.
    std::vector<at::Tensor> indptr{at::zeros({1}, at::kLong)}, indices, weights;
    int64_t edges = 0;
    for (int64_t k = 0; k < parts; ++k) {
      const CsrGraph g = load_structure_part(ds, dir, k);
      indptr.push_back(g.indptr.narrow(0, 1, g.indptr.numel() - 1) + edges);
      indices.push_back(g.indices);
      if (g.weights.defined()) weights.push_back(g.weights);
      edges += g.indices.numel();
    }
    ds.graph.indptr = at::cat(indptr);
    ds.graph.indices = at::cat(indices);
    if (!weights.empty()) ds.graph.weights = at::cat(weights);
  }
  if (ds.graph.weights.defined()) validate_edge_weights(ds.graph, dir + " (edge_weights.npy)");
}

}  // namespace directgnn
