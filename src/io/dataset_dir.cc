// The native dataset directory: meta.json plus one .npy file per array (docs/formats.md).
#include <ATen/ATen.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/atomic_file.h"
#include "directgnn/error.h"
#include "io/dataset.h"
#include "io/npy.h"

namespace directgnn {
namespace fs = std::filesystem;
namespace {

constexpr int kFormatVersion = 1;

std::string split_dir(const std::string& root, size_t k) {
  return k == 0 ? root : root + "/split_" + std::to_string(k);
}

template <typename T>
T field(const nlohmann::json& meta, const char* name, const std::string& where) {
  if (!meta.contains(name)) fail(where, ": missing field '", name, "'");
  try {
    return meta.at(name).get<T>();
  } catch (const nlohmann::json::exception&) {
    fail(where, ": field '", name, "' has the wrong type (", meta.at(name).type_name(), ")");
  }
}

at::Tensor load_required(const std::string& dir, const std::string& file) {
  const std::string path = dir + "/" + file;
  if (!fs::exists(path)) fail(dir, ": missing ", file, " (see docs/formats.md)");
  return load_npy(path);
}

}  // namespace

Dataset load_dataset_dir(const std::string& dir) {
  const std::string meta_path = dir + "/meta.json";
  std::ifstream in(meta_path);
  if (!in) fail(dir, ": missing meta.json (is this a dataset directory? see docs/formats.md)");
  nlohmann::json meta;
  try {
    in >> meta;
  } catch (const nlohmann::json::exception& e) {
    fail(meta_path, ": not valid JSON: ", e.what());
  }
  if (!meta.is_object()) fail(meta_path, ": must hold a JSON object");
  const int version = field<int>(meta, "format_version", meta_path);
  DGNN_CHECK(version == kFormatVersion, meta_path, ": format_version ", version,
             " is not supported (this build reads version ", kFormatVersion, ")");
  Dataset ds;
  ds.source = dir;
  ds.name = meta.value("name", fs::path(dir).filename().string());
  const int64_t num_nodes = field<int64_t>(meta, "num_nodes", meta_path);
  const int64_t num_edges = field<int64_t>(meta, "num_edges", meta_path);
  const int64_t feat_dim = field<int64_t>(meta, "feat_dim", meta_path);
  ds.num_classes = field<int64_t>(meta, "num_classes", meta_path);
  ds.directed = meta.value("directed", false);
  DGNN_CHECK(num_nodes > 0 && num_edges >= 0 && feat_dim > 0 && ds.num_classes >= 2, meta_path,
             ": num_nodes, feat_dim must be positive, num_edges non-negative and num_classes >= 2");
  ds.graph.indptr = load_required(dir, "indptr.npy");
  ds.graph.indices = load_required(dir, "indices.npy");
  ds.features = load_required(dir, "features.npy");
  ds.labels = load_required(dir, "labels.npy");
  DGNN_CHECK(ds.graph.indptr.dim() == 1 && ds.graph.indptr.numel() == num_nodes + 1, dir,
             "/indptr.npy: has shape ", ds.graph.indptr.sizes(),
             " but meta.json num_nodes = ", num_nodes, " needs ", num_nodes + 1, " entries");
  DGNN_CHECK(ds.graph.indices.dim() == 1 && ds.graph.indices.numel() == num_edges, dir,
             "/indices.npy: has shape ", ds.graph.indices.sizes(),
             " but meta.json num_edges = ", num_edges);
  DGNN_CHECK(ds.features.dim() == 2 && ds.features.size(1) == feat_dim, dir,
             "/features.npy: has shape ", ds.features.sizes(),
             " but meta.json feat_dim = ", feat_dim);
  const int64_t num_splits = meta.value("num_splits", fs::exists(dir + "/train_idx.npy") ? 1 : 0);
  for (int64_t k = 0; k < num_splits; ++k) {
    const std::string sdir = split_dir(dir, static_cast<size_t>(k));
    ds.splits.push_back({load_required(sdir, "train_idx.npy"), load_required(sdir, "val_idx.npy"),
                         load_required(sdir, "test_idx.npy")});
  }
  validate_dataset(ds, dir);
  return ds;
}

void save_dataset_dir(const Dataset& ds, const std::string& out) {
  std::error_code ec;
  if (fs::exists(out, ec) && !(fs::is_directory(out) && fs::is_empty(out))) {
    fail(out, ": already exists; remove it or choose another output path");
  }
  TempDir temp(out);
  const std::string& dir = temp.path();
  save_npy(dir + "/indptr.npy", ds.graph.indptr);
  save_npy(dir + "/indices.npy", ds.graph.indices);
  save_npy(dir + "/features.npy", ds.features);
  save_npy(dir + "/labels.npy", ds.labels);
  for (size_t k = 0; k < ds.splits.size(); ++k) {
    const std::string sdir = split_dir(dir, k);
    fs::create_directories(sdir);
    save_npy(sdir + "/train_idx.npy", ds.splits[k].train);
    save_npy(sdir + "/val_idx.npy", ds.splits[k].val);
    save_npy(sdir + "/test_idx.npy", ds.splits[k].test);
  }
  const nlohmann::json meta = {
      {"name", ds.name},
      {"format_version", kFormatVersion},
      {"num_nodes", ds.graph.num_nodes()},
      {"num_edges", ds.graph.num_edges()},
      {"feat_dim", ds.features.size(1)},
      {"feat_dtype", ds.features.scalar_type() == at::kHalf ? "float16" : "float32"},
      {"num_classes", ds.num_classes},
      {"directed", ds.directed},
      {"num_splits", ds.splits.size()},
  };
  write_file_atomic(dir + "/meta.json", meta.dump(2) + "\n");
  temp.commit();
}

}  // namespace directgnn
