#include "io/dataset.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "core/parallel.h"
#include "directgnn/error.h"
#include "graph/link_split.h"
#include "graph/node_order.h"
#include "io/hetero_dir.h"

namespace directgnn {
namespace fs = std::filesystem;
namespace {

at::Tensor check_ids(const at::Tensor& ids, int64_t num_nodes, const at::Tensor& labels,
                     const std::string& field, const std::string& where) {
  DGNN_CHECK(ids.defined() && ids.dim() == 1, where, ": ", field,
             " must be a 1-D array of node ids");
  DGNN_CHECK(ids.scalar_type() == at::kLong || ids.scalar_type() == at::kInt, where, ": ", field,
             " has dtype ", ids.scalar_type(), "; node ids must be int32 or int64");
  DGNN_CHECK(ids.numel() > 0, where, ": ", field,
             " is empty; every split needs at least one node (pick another split, or split the "
             "dataset anew)");
  at::Tensor out = ids.to(at::kLong).contiguous();
  const int64_t* p = out.data_ptr<int64_t>();
  const int64_t* lab = labels.data_ptr<int64_t>();
  const int64_t i = first_index_where(out.numel(), 1 << 16, [&](int64_t k) {
    return p[k] < 0 || p[k] >= num_nodes || lab[p[k]] < 0;
  });
  if (i < 0) return out;
  DGNN_CHECK(p[i] >= 0 && p[i] < num_nodes, where, ": ", field, "[", i, "] = ", p[i],
             " is out of range for ", num_nodes, " nodes");
  fail(where, ": ", field, "[", i, "] = node ", p[i],
       " has no label (-1); splits may hold labelled nodes only");
}

template <typename T>
std::pair<int64_t, int64_t> first_non_finite_of(const at::Tensor& rows) {
  const int64_t count = rows.size(0), cols = rows.size(1);
  const T* data = rows.data_ptr<T>();
  auto finite = [&](int64_t r, int64_t c) {
    return std::isfinite(static_cast<float>(data[r * cols + c]));
  };
  const int64_t row = first_index_where(count, 4096, [&](int64_t r) {
    for (int64_t c = 0; c < cols; ++c) {
      if (!finite(r, c)) return true;
    }
    return false;
  });
  if (row < 0) return {-1, -1};
  int64_t col = 0;
  while (finite(row, col)) ++col;
  return {row, col};
}

}  // namespace

std::pair<int64_t, int64_t> first_non_finite(const at::Tensor& rows) {
  DGNN_CHECK(rows.dim() == 2 && rows.is_contiguous(),
             "first_non_finite: rows must be a "
             "contiguous [k, F] table");
  return rows.scalar_type() == at::kHalf ? first_non_finite_of<at::Half>(rows)
                                         : first_non_finite_of<float>(rows);
}

void check_features_finite(const at::Tensor& features, const std::string& where) {
  const auto [row, col] = first_non_finite(features);
  if (row < 0) return;
  fail(where, ": features row ", row, " column ", col, " is ", features[row][col].item<float>(),
       "; features must be finite (replace NaN/inf, e.g. numpy.nan_to_num)");
}

void validate_labels(NodeLabels labels, int64_t n, const std::string& where) {
  at::Tensor& lab_t = labels.labels;
  DGNN_CHECK(lab_t.defined() && lab_t.dim() == 1, where,
             ": labels must be a 1-D array with one entry per node");
  DGNN_CHECK(at::isIntegralType(lab_t.scalar_type(), /*includeBool=*/false), where,
             ": labels has dtype ", lab_t.scalar_type(), "; class labels must be integers");
  DGNN_CHECK(lab_t.numel() == n, where, ": labels has ", lab_t.numel(),
             " entries but the graph has ", n, " nodes");
  lab_t = lab_t.to(at::kLong).contiguous();
  const int64_t* lab = lab_t.data_ptr<int64_t>();
  int64_t max_label = -1;
  for (int64_t v = 0; v < n; ++v) {
    DGNN_CHECK(lab[v] >= -1, where, ": labels[", v, "] = ", lab[v],
               " is negative (use -1 for an unlabelled node)");
    max_label = std::max(max_label, lab[v]);
  }
  int64_t& num_classes = labels.num_classes;
  if (num_classes <= 0) num_classes = max_label + 1;
  DGNN_CHECK(num_classes >= 2, where, ": needs at least 2 classes, found ", num_classes);
  DGNN_CHECK(
      labels.class_names.empty() || static_cast<int64_t>(labels.class_names.size()) == num_classes,
      where, ": names ", labels.class_names.size(), " classes but has ", num_classes,
      "; class_names needs one name per class");
  for (int64_t v = 0; v < n; ++v) {
    DGNN_CHECK(lab[v] < num_classes, where, ": labels[", v, "] = ", lab[v],
               " is not below num_classes = ", num_classes);
  }
  for (size_t k = 0; k < labels.splits.size(); ++k) {
    const std::string suffix = labels.splits.size() > 1 ? " (split " + std::to_string(k) + ")" : "";
    Split& s = labels.splits[k];
    s.train = check_ids(s.train, n, lab_t, "train split" + suffix, where);
    s.val = check_ids(s.val, n, lab_t, "validation split" + suffix, where);
    s.test = check_ids(s.test, n, lab_t, "test split" + suffix, where);
  }
}

void validate_dataset(Dataset& ds, const std::string& where) {
  validate_csr(ds.graph, where);
  const int64_t n = ds.graph.num_nodes();
  DGNN_CHECK(n > 0, where, ": the graph has no nodes");
  DGNN_CHECK(ds.features.defined() && ds.features.dim() == 2, where,
             ": features must be a 2-D array [num_nodes, feat_dim]");
  // A rank's part of a table stored by part holds that part's rows only.
  const int64_t k = ds.feature_part;
  const int64_t rows = k >= 0 ? ds.partition.offsets.at(k + 1) - ds.partition.offsets.at(k) : n;
  DGNN_CHECK(ds.features.size(0) == rows, where, ": features has ", ds.features.size(0),
             " rows but ", k >= 0 ? "its part owns " : "the graph has ", rows, " nodes");
  DGNN_CHECK(ds.features.size(1) > 0, where, ": features has no columns");
  DGNN_CHECK(ds.features.scalar_type() == at::kFloat || ds.features.scalar_type() == at::kHalf,
             where, ": features has dtype ", ds.features.scalar_type(),
             "; use float32 or float16 (arr.astype('float32'))");
  if (!ds.features.is_contiguous()) ds.features = ds.features.contiguous();
  // A table checked when its file was written (meta.json's features_checked) is not scanned.
  if (!ds.features_checked) check_features_finite(ds.features, where);
  if (ds.has_labels()) {
    validate_labels({ds.labels, ds.num_classes, ds.class_names, ds.splits}, n, where);
  } else {
    DGNN_CHECK(ds.splits.empty(), where,
               ": stores node splits but no labels; node splits need labels.npy");
    ds.num_classes = 0;
    ds.class_names.clear();
  }
  if (ds.node_ids.defined()) {
    ds.node_ids = checked_node_ids(ds.node_ids, n, where + "/node_ids.npy");
    DGNN_CHECK(!ds.node_order.empty(), where,
               ": node_ids is set but node_order does not say how the nodes were renumbered");
  }
  if (!ds.partition.method.empty()) {
    const PartitionBook& b = ds.partition;
    DGNN_CHECK(b.offsets.back() == n, where, ": the partition's offsets end at ", b.offsets.back(),
               " but the graph has ", n, " nodes");
    DGNN_CHECK(ds.node_ids.defined() && ds.node_order == b.method, where,
               ": a partitioned dataset's nodes are renumbered by its method ('", b.method,
               "'), but node_order is '", ds.node_order, "'");
  }
  // Without labels or a stored link split, link prediction makes a random split in memory.
  if (ds.link.defined()) validate_link_split(ds.link, ds.graph, ds.directed, where);
}

void require_labels(const Dataset& ds) {
  DGNN_CHECK(ds.has_labels(), ds.source, ": dataset '", ds.name,
             "' has no node labels, so it cannot train node classification; train link "
             "prediction instead, or give it labels (docs/formats.md)");
}

Dataset load_dataset(const std::string& path, const ImportOptions& options) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) {
    fail(path, ": no such file or directory (give a dataset directory or an .npz file)");
  }
  if (fs::is_directory(status)) {
    DGNN_CHECK(!is_hetero_dir(path), path,
               ": is a heterogeneous dataset directory; this reads homogeneous datasets only "
               "(heterogeneous ones train through the heterogeneous path: docs/heterogeneous.md)");
    DGNN_CHECK(fs::exists(path + "/meta.json") || !looks_like_ogb_hetero(path), path,
               ": holds OGB's heterogeneous raw layout; convert it into a heterogeneous dataset "
               "directory first (docs/formats.md)");
    if (!fs::exists(path + "/meta.json") && looks_like_ogb(path)) return import_ogb(path, options);
    return load_dataset_dir(path, options);
  }
  fs::path p(path);
  if (p.extension() == ".npz") return import_npz(path, options);
  if (p.extension() == ".gz") p = p.stem();
  const std::string ext = p.extension().string();
  if (ext == ".txt" || ext == ".csv" || ext == ".tsv" || ext == ".edges" || ext == ".el" ||
      ext == ".edgelist") {
    return import_edge_list(path, options);
  }
  fail(path,
       ": not a dataset directory, OGB raw directory, .npz file or edge list (.txt, .csv, .tsv, "
       ".edges, .el; see docs/formats.md)");
}

}  // namespace directgnn
