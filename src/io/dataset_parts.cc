// A partitioned dataset's feature table stored one file per part (docs/formats.md,
// "Partitioned datasets"): DIR/part-K/features.npy holds rows offsets[K] .. offsets[K+1]-1.
#include <ATen/ATen.h>

#include <filesystem>

#include "io/dataset_files.h"

namespace directgnn {

namespace fs = std::filesystem;

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

namespace {

// Part k's table, mapped, its shape checked; `checked` says whether its stamp is the one
// recorded when it was written.
at::Tensor load_part(const Dataset& ds, const std::string& dir, int64_t k, int64_t feat_dim,
                     bool& checked) {
  const std::string file = feature_part_file(k);
  at::Tensor t = load_required(dir, file);
  const int64_t rows = ds.partition.offsets[k + 1] - ds.partition.offsets[k];
  DGNN_CHECK(t.dim() == 2 && t.size(0) == rows && t.size(1) == feat_dim, dir, "/", file,
             ": has shape ", t.sizes(), " but part ", k, " of the partition owns ", rows,
             " nodes and meta.json feat_dim = ", feat_dim);
  const FileStamp stamp = file_stamp(dir + "/" + file);
  const auto& c = ds.partition.checked;
  checked = static_cast<int64_t>(c.size()) > k && stamp == FileStamp{c[k][0], c[k][1], c[k][2]};
  return t;
}

}  // namespace

void load_feature_parts(Dataset& ds, const std::string& dir, int64_t feat_dim,
                        const ImportOptions& options) {
  const int64_t parts = ds.partition.parts();
  if (options.feature_part >= 0 && options.feature_parts == parts) {
    DGNN_CHECK(options.feature_part < parts, dir, ": has ", parts, " parts; there is no part ",
               options.feature_part);
    ds.features = load_part(ds, dir, options.feature_part, feat_dim, ds.features_checked);
    ds.features_path = dir + "/" + feature_part_file(options.feature_part);
    ds.feature_part = options.feature_part;
    return;
  }
  std::vector<at::Tensor> tables;
  bool all_checked = true;
  for (int64_t k = 0; k < parts; ++k) {
    bool checked = false;
    tables.push_back(load_part(ds, dir, k, feat_dim, checked));
    all_checked = all_checked && checked;
  }
  // One process reads every part: the whole table, in memory (no one file to map or read
  // from disk).
  ds.features = parts == 1 ? tables[0] : at::cat(tables);
  ds.features_checked = all_checked;
  ds.features_path.clear();
}

}  // namespace directgnn
