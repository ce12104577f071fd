// Pieces both dataset directories (io/dataset_dir.cc, the homogeneous one, and io/hetero_dir.cc)
// read and write with: strict meta.json fields, class names, required .npy files, and feature
// tables written a chunk at a time, checked finite, and stamped so a loader can skip the scan.
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <vector>

#include "directgnn/error.h"
#include "io/dataset.h"

namespace directgnn {

// A file's size, modification time and inode: what meta.json records of a checked feature
// table. A file rewritten since (np.save, or a new file renamed over it) differs in one.
struct FileStamp {
  int64_t bytes = -1, mtime_ns = -1, inode = -1;
  bool operator==(const FileStamp& o) const {
    return bytes == o.bytes && mtime_ns == o.mtime_ns && inode == o.inode;
  }
};
FileStamp file_stamp(const std::string& path);

// Writes `features` to `path` (.npy, data on a 4 KiB boundary) atomically, about 64 MiB of
// float32 at a time, each chunk checked finite (naming the row and column, and float16's
// overflow); returns the written file's stamp.
FileStamp write_checked_features(const std::string& path, const FeatureStream& features);

// meta.json's "partition" object (docs/formats.md, "Partitioned datasets"), read strictly
// (`file` names meta.json in errors: offsets from 0 never decreasing, per part edges and seeds)
// and written, with each part's node count beside.
PartitionBook parse_partition_book(const nlohmann::json& book, const std::string& file);
nlohmann::json partition_book_json(const PartitionBook& book);

// A partitioned dataset's table stored by part (PartitionBook::features_by_part): each part's
// rows of `features` to DIR/part-K/features.npy; returns their stamps.
std::string feature_part_file(int64_t part);
std::vector<std::array<int64_t, 3>> write_feature_parts(const std::string& dir,
                                                        const PartitionBook& book,
                                                        const FeatureStream& features);
// Part k's table (DIR/part-K/features.npy), mapped, its shape checked against `book` and
// `feat_dim`; `checked` says whether its stamp is the one `book` recorded when it was written.
at::Tensor load_feature_part(const PartitionBook& book, const std::string& dir, int64_t k,
                             int64_t feat_dim, bool& checked);
// Loads such a table into `ds` (its partition book set): every part, concatenated in memory,
// or with options.feature_part (and feature_parts equal to the book's parts) that part only.
// Checks each file's shape against the book and meta.json's `feat_dim`.
void load_feature_parts(Dataset& ds, const std::string& dir, int64_t feat_dim,
                        const ImportOptions& options);

// A partitioned dataset's structure stored by part (PartitionBook::structure_by_part): each
// part's rows of `graph` (its nodes' in-edges, and their weights) to DIR/part-K/indptr.npy
// (rebased to 0), indices.npy and edge_weights.npy.
void write_structure_parts(const std::string& dir, const PartitionBook& book,
                           const CsrGraph& graph);
// Loads such a structure into `ds` (its partition book set): every part joined into the whole
// graph, or with options.structure_part (and structure_parts equal to the book's parts) that
// part's edges only, every node keeping its row (Dataset::structure_part). Checks each part's
// files against the book and meta.json's `num_nodes`.
void load_structure_parts(Dataset& ds, const std::string& dir, int64_t num_nodes,
                          const ImportOptions& options);

// DIR/FILE as a tensor; throws naming the directory and the file when it is missing.
at::Tensor load_required(const std::string& dir, const std::string& file);

// `object`'s field `name` of type T (bool, an integer, or std::string), strictly: 3.5 is no
// node count, and "true" no boolean. Throws naming `where` and the field.
template <typename T>
T json_field(const nlohmann::json& object, const char* name, const std::string& where) {
  if (!object.contains(name)) fail(where, ": missing field '", name, "'");
  const nlohmann::json& value = object.at(name);
  bool ok = false;
  const char* wanted = "";
  if constexpr (std::is_same_v<T, bool>) {
    ok = value.is_boolean();
    wanted = "true or false";
  } else if constexpr (std::is_integral_v<T>) {
    ok = value.is_number_integer() &&
         (value.is_number_unsigned() ? value.get<uint64_t>() <= uint64_t{INT64_MAX} : true);
    wanted = "an integer";
  } else {
    ok = value.is_string();
    wanted = "a string";
  }
  if (!ok)
    fail(where, ": field '", name, "' must be ", wanted, ", got ", value.dump().substr(0, 40));
  return value.get<T>();
}

template <typename T>
T optional_json_field(const nlohmann::json& object, const char* name, const std::string& where,
                      T fallback) {
  return object.contains(name) ? json_field<T>(object, name, where) : fallback;
}

// `object`'s optional "class_names": one string per class (empty when absent).
std::vector<std::string> class_names_field(const nlohmann::json& object, int64_t num_classes,
                                           const std::string& where);

}  // namespace directgnn
