// Import of the two .npz layouts in common use for node classification:
//  - gnn-benchmark (Shchur et al.): CSR adjacency adj_{indptr,indices,shape}, CSR or dense
//    features attr_{data,indices,indptr,shape} / attr_matrix, and `labels`; or its variant
//    written by scipy-minded repositories, adj_matrix.{indptr,indices,shape} and
//    attr_matrix.{data,indices,indptr,shape} (or a dense attr_matrix), `labels` or `label`;
//  - numpy savez (Platonov et al.): `edges` [M,2], `node_features`, `node_labels`, and
//    `train_masks` / `val_masks` / `test_masks` ([K,N] or [N] booleans, one row per split).
// Both store each undirected edge once; the graph is symmetrised on import.
#include <ATen/ATen.h>

#include <filesystem>

#include "directgnn/error.h"
#include "graph/coo_builder.h"
#include "io/dataset.h"
#include "io/npz.h"

namespace directgnn {
namespace {

int64_t scalar_at(const at::Tensor& t, int64_t i) { return t.to(at::kLong)[i].item<int64_t>(); }

at::Tensor int_array(const NpzFile& npz, const std::string& key, int64_t dims) {
  at::Tensor t = npz.get(key);
  DGNN_CHECK(t.dim() == dims, npz.path(), ": array '", key, "' must have ", dims,
             " dimension(s), has shape ", t.sizes());
  DGNN_CHECK(at::isIntegralType(t.scalar_type(), false), npz.path(), ": array '", key,
             "' has dtype ", t.scalar_type(), "; expected integers");
  return t.to(at::kLong).contiguous();
}

// The array names of one scipy CSR matrix: "adj_indptr" in gnn-benchmark files,
// "adj_matrix.indptr" in the variant.
struct CsrKeys {
  std::string indptr, indices, data, shape;
};

CsrKeys csr_keys(const std::string& prefix) {
  return {prefix + "indptr", prefix + "indices", prefix + "data", prefix + "shape"};
}

// The two spellings of the gnn-benchmark layout.
struct BenchmarkKeys {
  CsrKeys adj, attr;
  const char* layout;
};

BenchmarkKeys benchmark_keys(bool matrix_names) {
  if (matrix_names) {
    return {csr_keys("adj_matrix."), csr_keys("attr_matrix."), "gnn-benchmark (adj_matrix.*)"};
  }
  return {csr_keys("adj_"), csr_keys("attr_"), "gnn-benchmark"};
}

// A small integer array as "[2708, 1433]", for messages.
std::string values_text(const at::Tensor& t) {
  if (t.numel() > 4) return "an array of " + std::to_string(t.numel()) + " values";
  std::string out = "[";
  for (int64_t i = 0; i < t.numel(); ++i) {
    out += (i ? ", " : "") + std::to_string(scalar_at(t, i));
  }
  return out + "]";
}

// CSR arrays (indptr, indices) of `keys` as COO rows and columns, checked for consistency.
std::pair<at::Tensor, at::Tensor> csr_to_coo(const NpzFile& npz, const CsrKeys& keys,
                                             int64_t rows) {
  const at::Tensor indptr = int_array(npz, keys.indptr, 1);
  const at::Tensor indices = int_array(npz, keys.indices, 1);
  DGNN_CHECK(indptr.numel() == rows + 1, npz.path(), ": ", keys.indptr, " has ", indptr.numel(),
             " entries but ", keys.shape, " says ", rows, " rows (needs ", rows + 1, ")");
  const int64_t* ptr = indptr.data_ptr<int64_t>();
  DGNN_CHECK(ptr[0] == 0 && ptr[rows] == indices.numel(), npz.path(), ": ", keys.indptr,
             " must start at 0 and end at the length of ", keys.indices, " (", indices.numel(),
             "), got ", ptr[0], " and ", ptr[rows]);
  for (int64_t r = 0; r < rows; ++r) {
    DGNN_CHECK(ptr[r + 1] >= ptr[r], npz.path(), ": ", keys.indptr, " is not monotone at entry ",
               r + 1, " (", ptr[r + 1], " < ", ptr[r], ")");
  }
  const at::Tensor row_ids = at::repeat_interleave(indptr.diff());
  return {row_ids.to(at::kLong), indices};
}

at::Tensor gnn_benchmark_features(const NpzFile& npz, int64_t n, const BenchmarkKeys& names) {
  const CsrKeys& k = names.attr;
  if (npz.contains("attr_matrix")) {
    at::Tensor dense = npz.get("attr_matrix");
    DGNN_CHECK(dense.dim() == 2 && dense.size(0) == n, npz.path(),
               ": attr_matrix must have shape [", n, ", F], has ", dense.sizes());
    return dense.to(at::kFloat).contiguous();
  }
  for (const std::string& key : {k.indptr, k.indices, k.data, k.shape}) {
    DGNN_CHECK(npz.contains(key), npz.path(), ": ", names.layout,
               " layout without features: missing '", key, "' (or a dense 'attr_matrix')");
  }
  const at::Tensor shape = int_array(npz, k.shape, 1);
  DGNN_CHECK(shape.numel() == 2 && scalar_at(shape, 0) == n, npz.path(), ": ", k.shape,
             " must be [", n, ", F], is ", values_text(shape));
  const int64_t cols = scalar_at(shape, 1);
  DGNN_CHECK(cols > 0, npz.path(), ": ", k.shape, " has no feature columns");
  auto [rows, col_ids] = csr_to_coo(npz, k, n);
  const at::Tensor values = npz.get(k.data).to(at::kFloat);
  DGNN_CHECK(values.dim() == 1 && values.numel() == col_ids.numel(), npz.path(), ": ", k.data,
             " has ", values.numel(), " entries but ", k.indices, " has ", col_ids.numel());
  DGNN_CHECK(col_ids.numel() == 0 ||
                 (col_ids.min().item<int64_t>() >= 0 && col_ids.max().item<int64_t>() < cols),
             npz.path(), ": ", k.indices, " holds a column outside [0, ", cols, ")");
  at::Tensor dense = at::zeros({n * cols}, at::kFloat);
  dense.index_add_(0, rows * cols + col_ids, values);
  return dense.view({n, cols});
}

Dataset import_gnn_benchmark(const NpzFile& npz, const ImportOptions& options,
                             const BenchmarkKeys& names) {
  const CsrKeys& adj = names.adj;
  for (const std::string& key : {adj.indptr, adj.indices, adj.shape}) {
    DGNN_CHECK(npz.contains(key), npz.path(), ": ", names.layout, " layout without '", key,
               "' (the adjacency needs ", adj.indptr, ", ", adj.indices, " and ", adj.shape, ")");
  }
  const at::Tensor shape = int_array(npz, adj.shape, 1);
  DGNN_CHECK(shape.numel() == 2 && scalar_at(shape, 0) == scalar_at(shape, 1), npz.path(), ": ",
             adj.shape, " must be square [N, N], is ", values_text(shape));
  const int64_t n = scalar_at(shape, 0);
  DGNN_CHECK(n > 0, npz.path(), ": ", adj.shape, " says the graph has no nodes");
  auto [src, dst] = csr_to_coo(npz, adj, n);
  Dataset ds;
  ds.graph = build_csr_from_coo(src, dst, n, {true, !options.keep_self_loops},
                                npz.path() + ":" + adj.indices);
  ds.features = gnn_benchmark_features(npz, n, names);
  const char* label_key = npz.contains("labels") ? "labels" : "label";
  DGNN_CHECK(npz.contains(label_key), npz.path(), ": ", names.layout,
             " layout without labels (an array named 'labels' or 'label', one class per node)");
  ds.labels = npz.get(label_key);
  return ds;
}

at::Tensor masks_to_ids(const at::Tensor& masks, int64_t k) {
  const at::Tensor row = masks.dim() == 1 ? masks : masks[k];
  return at::nonzero(row.to(at::kBool)).flatten().to(at::kLong);
}

Dataset import_savez(const NpzFile& npz, const ImportOptions& options) {
  for (const char* key : {"edges", "node_features", "node_labels"}) {
    DGNN_CHECK(npz.contains(key), npz.path(), ": savez layout without '", key, "'");
  }
  const at::Tensor edges = int_array(npz, "edges", 2);
  DGNN_CHECK(edges.size(1) == 2, npz.path(), ": 'edges' must have shape [M, 2], has ",
             edges.sizes());
  Dataset ds;
  ds.features = npz.get("node_features");
  DGNN_CHECK(ds.features.dim() == 2, npz.path(), ": 'node_features' must be 2-D [N, F], has shape ",
             ds.features.sizes());
  DGNN_CHECK(at::isFloatingType(ds.features.scalar_type()) ||
                 at::isIntegralType(ds.features.scalar_type(), true),
             npz.path(), ": 'node_features' must be numeric");
  if (ds.features.scalar_type() != at::kHalf) ds.features = ds.features.to(at::kFloat);
  const int64_t n = ds.features.size(0);
  DGNN_CHECK(n > 0, npz.path(), ": 'node_features' has no rows");
  ds.graph = build_csr_from_coo(edges.select(1, 0), edges.select(1, 1), n,
                                {true, !options.keep_self_loops}, npz.path() + ":edges");
  ds.labels = npz.get("node_labels");
  const bool has_masks = npz.contains("train_masks");
  if (has_masks) {
    for (const char* key : {"val_masks", "test_masks"}) {
      DGNN_CHECK(npz.contains(key), npz.path(), ": has train_masks but no '", key, "'");
    }
    const at::Tensor train = npz.get("train_masks"), val = npz.get("val_masks"),
                     test = npz.get("test_masks");
    for (const auto& [mask, key] :
         {std::pair{train, "train_masks"}, {val, "val_masks"}, {test, "test_masks"}}) {
      DGNN_CHECK((mask.dim() == 1 || mask.dim() == 2) && mask.size(-1) == n &&
                     mask.sizes() == train.sizes(),
                 npz.path(), ": '", key, "' must have shape [K, ", n, "] or [", n,
                 "] like train_masks, has ", mask.sizes());
    }
    const int64_t k = train.dim() == 1 ? 1 : train.size(0);
    for (int64_t s = 0; s < k; ++s) {
      ds.splits.push_back({masks_to_ids(train, s), masks_to_ids(val, s), masks_to_ids(test, s)});
    }
  }
  return ds;
}

// gnn-benchmark files name their classes in `class_names` (dtype <U). The names are an extra:
// one not stored as strings, or not one per class, is left out rather than failing the import.
std::vector<std::string> class_names_of(const NpzFile& npz, int64_t num_classes) {
  if (!npz.contains("class_names")) return {};
  std::vector<std::string> names;
  try {
    names = npz.get_strings("class_names");
  } catch (const Error&) {
    return {};
  }
  if (static_cast<int64_t>(names.size()) != num_classes) return {};
  return names;
}

}  // namespace

Dataset import_npz(const std::string& path, const ImportOptions& options) {
  const NpzFile npz(path);
  Dataset ds;
  if (npz.contains("adj_indptr")) {
    ds = import_gnn_benchmark(npz, options, benchmark_keys(false));
  } else if (npz.contains("adj_matrix.indptr")) {
    ds = import_gnn_benchmark(npz, options, benchmark_keys(true));
  } else if (npz.contains("edges")) {
    ds = import_savez(npz, options);
  } else {
    std::string keys;
    for (const auto& key : npz.keys()) keys += (keys.empty() ? "" : ", ") + key;
    fail(path, ": unrecognised .npz layout (arrays: ", keys,
         "); expected gnn-benchmark (adj_indptr, adj_indices, adj_shape, attr_*, labels), its "
         "variant (adj_matrix.indptr, adj_matrix.indices, adj_matrix.shape, attr_matrix*, labels) "
         "or "
         "savez (edges, node_features, node_labels, *_masks); see docs/formats.md");
  }
  ds.source = path;
  ds.name = std::filesystem::path(path).stem().string();
  ds.directed = false;
  validate_dataset(ds, path);
  ds.class_names = class_names_of(npz, ds.num_classes);
  return ds;
}

}  // namespace directgnn
