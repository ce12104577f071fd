// The heterogeneous dataset directory: meta.json plus one .npy file per array (io/hetero_dir.h,
// docs/formats.md). Mirrors io/dataset_dir.cc: strict meta.json fields, memory-mapped arrays,
// atomic writes, and feature tables stamped as checked finite when written.
#include "io/hetero_dir.h"

#include <ATen/ATen.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <type_traits>

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

// Version 2 is the first with heterogeneous directories; its CSRs are by destination.
constexpr int kHeteroFormatVersion = 2;
constexpr const char* kKind = "heterogeneous";

using Json = nlohmann::json;

std::string hetero_split_dir(const std::string& root, size_t k) {
  return k == 0 ? root : root + "/split_" + std::to_string(k);
}

std::string relation_dir(const std::string& root, const std::string& src, const std::string& rel,
                         const std::string& dst) {
  return root + "/relations/" + src + "___" + rel + "___" + dst;
}

const Json& array_field(const Json& object, const char* name, const std::string& where) {
  if (!object.contains(name)) fail(where, ": missing field '", name, "'");
  const Json& value = object.at(name);
  DGNN_CHECK(value.is_array(), where, ": field '", name, "' must be a list, got ",
             value.dump().substr(0, 40));
  return value;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Names become directory names: they must not leave the directory or hide in it.
void check_path_name(const std::string& name, const std::string& what, const std::string& out) {
  DGNN_CHECK(!name.empty() && name.find('/') == std::string::npos && name.front() != '.' &&
                 name.find('\0') == std::string::npos,
             out, ": ", what, " '", name,
             "' cannot name a directory; rename it without '/' or a leading '.'");
}

HeteroMeta::Type parse_type(const Json& entry, size_t i, const std::string& where) {
  const std::string what = where + " (node_types[" + std::to_string(i) + "])";
  DGNN_CHECK(entry.is_object(), what, ": must be an object");
  HeteroMeta::Type t;
  t.name = json_field<std::string>(entry, "name", what);
  check_path_name(t.name, "node type", what);
  t.count = json_field<int64_t>(entry, "count", what);
  t.feat_dim = optional_json_field<int64_t>(entry, "feat_dim", what, 0);
  t.feat_dtype = optional_json_field<std::string>(entry, "feat_dtype", what, "float32");
  DGNN_CHECK(t.count > 0 && t.feat_dim >= 0, what, ": count must be positive and feat_dim ",
             "non-negative (0: no features), got ", t.count, " and ", t.feat_dim);
  DGNN_CHECK(t.feat_dtype == "float32" || t.feat_dtype == "float16", what,
             ": field 'feat_dtype' must be \"float32\" or \"float16\", got \"", t.feat_dtype, "\"");
  if (entry.contains("features_checked")) {
    const Json& c = entry.at("features_checked");
    DGNN_CHECK(c.is_object(), what, ": field 'features_checked' must be an object");
    const std::string inner = what + " (features_checked)";
    t.checked = {json_field<int64_t>(c, "bytes", inner), json_field<int64_t>(c, "mtime_ns", inner),
                 json_field<int64_t>(c, "inode", inner)};
  }
  if (entry.contains("partition")) t.partition = parse_partition_book(entry.at("partition"), what);
  DGNN_CHECK(!t.partition.features_by_part || t.feat_dim > 0, what,
             ": its partition stores features by part but feat_dim is 0");
  return t;
}

int meta_type_index(const HeteroMeta& meta, const std::string& name, const std::string& what) {
  std::string names;
  for (size_t t = 0; t < meta.node_types.size(); ++t) {
    if (meta.node_types[t].name == name) return static_cast<int>(t);
    names += (names.empty() ? "" : ", ") + meta.node_types[t].name;
  }
  fail(what, ": names node type '", name, "', which node_types does not list (", names,
       "); add the type or fix the name");
}

void parse_types(HeteroMeta& out, const Json& meta, const std::string& where) {
  const Json& types = array_field(meta, "node_types", where);
  for (size_t i = 0; i < types.size(); ++i) {
    HeteroMeta::Type t = parse_type(types[i], i, where);
    for (const HeteroMeta::Type& before : out.node_types) {
      DGNN_CHECK(before.name != t.name, where, " (node_types[", i, "]): node type '", t.name,
                 "' is listed twice; give each type once");
    }
    out.node_types.push_back(std::move(t));
  }
}

void parse_relations(HeteroMeta& out, const Json& meta, const std::string& where) {
  const Json& relations = array_field(meta, "relations", where);
  for (size_t i = 0; i < relations.size(); ++i) {
    const std::string what = where + " (relations[" + std::to_string(i) + "])";
    DGNN_CHECK(relations[i].is_object(), what, ": must be an object");
    HeteroMeta::Rel r;
    r.src = json_field<std::string>(relations[i], "src", what);
    r.rel = json_field<std::string>(relations[i], "rel", what);
    r.dst = json_field<std::string>(relations[i], "dst", what);
    r.num_edges = json_field<int64_t>(relations[i], "num_edges", what);
    r.src_type = meta_type_index(out, r.src, what);
    r.dst_type = meta_type_index(out, r.dst, what);
    check_path_name(r.rel, "relation", what);
    DGNN_CHECK(r.num_edges >= 0, what, ": num_edges must not be negative, got ", r.num_edges);
    out.relations.push_back(std::move(r));
  }
}

void parse_target(HeteroMeta& out, const Json& meta, const std::string& where) {
  out.num_splits = optional_json_field<int64_t>(meta, "num_splits", where, 0);
  DGNN_CHECK(out.num_splits >= 0, where, ": num_splits must not be negative, got ", out.num_splits);
  if (!meta.contains("target") || meta.at("target").is_null()) {
    DGNN_CHECK(out.num_splits == 0, where, ": num_splits = ", out.num_splits,
               " but no target type; add \"target\" naming the labelled type");
    return;
  }
  const Json& target = meta.at("target");
  const std::string what = where + " (target)";
  DGNN_CHECK(target.is_object(), what, ": must be an object {\"type\", \"num_classes\"}");
  out.target = meta_type_index(out, json_field<std::string>(target, "type", what), what);
  out.num_classes = json_field<int64_t>(target, "num_classes", what);
  DGNN_CHECK(out.num_classes >= 2, what, ": num_classes must be at least 2, got ", out.num_classes);
  out.class_names = class_names_field(target, out.num_classes, what);
}

// Type m's table: features.npy, or its parts' files (all joined in memory, or `part` alone),
// mapped; `checked` says whether every file's stamp is the one recorded when it was written.
at::Tensor map_type_table(const HeteroMeta::Type& m, const std::string& tdir, int64_t part,
                          bool& checked) {
  if (!m.partition.features_by_part) {
    const std::string path = tdir + "/features.npy";
    DGNN_CHECK(fs::exists(path), path, ": missing; meta.json gives node type '", m.name,
               "' feat_dim = ", m.feat_dim, " (set feat_dim 0 for a type without features)");
    checked = m.checked.bytes >= 0 && file_stamp(path) == m.checked;
    return load_npy(path);
  }
  if (part >= 0) return load_feature_part(m.partition, tdir, part, m.feat_dim, checked);
  std::vector<at::Tensor> tables;
  checked = true;
  for (int64_t k = 0; k < m.partition.parts(); ++k) {
    bool part_checked = false;
    tables.push_back(load_feature_part(m.partition, tdir, k, m.feat_dim, part_checked));
    checked = checked && part_checked;
  }
  return tables.size() == 1 ? tables[0] : at::cat(tables);
}

// One type's table, checked against meta.json; scanned for NaN/inf unless meta.json's stamp
// says this very file was checked when written. `part` >= 0 loads that part of a table stored
// by part.
void load_type_features(NodeType& t, const HeteroMeta::Type& m, const std::string& dir,
                        int64_t part) {
  if (m.feat_dim == 0) return;
  const std::string tdir = dir + "/nodes/" + m.name;
  part = m.partition.features_by_part ? part : -1;
  bool checked = false;
  t.features = map_type_table(m, tdir, part, checked);
  t.feature_part = part;
  const bool joined = m.partition.features_by_part && part < 0 && m.partition.parts() > 1;
  // A table joined from its parts lives in memory: there is no one file to read rows from.
  t.features_path = !m.partition.features_by_part ? tdir + "/features.npy"
                    : joined                      ? std::string()
                             : tdir + "/" + feature_part_file(std::max<int64_t>(part, 0));
  const std::string path = t.features_path.empty() ? tdir : t.features_path;
  const int64_t rows = t.features.size(0);
  DGNN_CHECK(t.features.dim() == 2 && t.features.size(1) == m.feat_dim, path, ": has shape ",
             t.features.sizes(), " but meta.json gives node type '", m.name, "' count = ", m.count,
             " and feat_dim = ", m.feat_dim, "; it must be [", m.count, ", ", m.feat_dim, "]");
  DGNN_CHECK(part >= 0 || rows == m.count, path, ": has ", rows,
             " rows but meta.json gives node type '", m.name, "' count = ", m.count,
             "; it must be [", m.count, ", ", m.feat_dim, "]");
  const at::ScalarType want = m.feat_dtype == "float16" ? at::kHalf : at::kFloat;
  DGNN_CHECK(t.features.scalar_type() == want, path, ": has dtype ", t.features.scalar_type(),
             " but meta.json gives node type '", m.name, "' feat_dtype = ", m.feat_dtype);
  if (!checked) {
    advise_access(t.features, MapAccess::kSequential);
    check_features_finite(t.features, path);
  }
  // Training gathers rows at random: a table larger than the memory available is read a page
  // per row, as read-around would fetch megabytes per row only to evict them.
  const int64_t available = host_memory().available;
  const bool large = available > 0 && static_cast<int64_t>(t.features.nbytes()) > available;
  advise_access(t.features, large ? MapAccess::kRandom : MapAccess::kReadAround);
}

Relation load_relation(const HeteroMeta::Rel& m, int64_t num_dst, const std::string& dir) {
  Relation r;
  r.src = m.src;
  r.rel = m.rel;
  r.dst = m.dst;
  const std::string rdir = relation_dir(dir, r.src, r.rel, r.dst);
  r.graph.indptr = load_required(rdir, "indptr.npy");
  r.graph.indices = load_required(rdir, "indices.npy");
  DGNN_CHECK(r.graph.indptr.dim() == 1 && r.graph.indptr.numel() == num_dst + 1, rdir,
             "/indptr.npy: has ", r.graph.indptr.numel(), " entries but node type '", r.dst,
             "' has ", num_dst,
             " nodes (meta.json count); a relation's CSR has one row per destination node, ",
             num_dst + 1, " entries");
  DGNN_CHECK(r.graph.indices.dim() == 1 && r.graph.indices.numel() == m.num_edges, rdir,
             "/indices.npy: has shape ", r.graph.indices.sizes(), " but meta.json gives ", r.key(),
             " num_edges = ", m.num_edges);
  return r;
}

void load_target(HeteroDataset& ds, const HeteroMeta& meta, const std::string& dir) {
  if (meta.target < 0) return;
  ds.num_classes = meta.num_classes;
  ds.class_names = meta.class_names;
  ds.target_type = meta.target;
  ds.labels = load_required(dir, "labels.npy");
  const int64_t count = ds.target().count;
  DGNN_CHECK(ds.labels.dim() == 1 && ds.labels.numel() == count, dir, "/labels.npy: has shape ",
             ds.labels.sizes(), " but target type '", ds.target().name, "' has ", count,
             " nodes (meta.json count); give one label per node, -1 for unlabelled");
  for (int64_t k = 0; k < meta.num_splits; ++k) {
    const std::string sdir = hetero_split_dir(dir, static_cast<size_t>(k));
    ds.splits.push_back({load_required(sdir, "train_idx.npy"), load_required(sdir, "val_idx.npy"),
                         load_required(sdir, "test_idx.npy")});
  }
}

// What type t's features.npy is written from: its stream when `streamed` gives one, else its
// table in memory; none when it has neither.
std::optional<FeatureStream> table_to_write(const NodeType& t, const FeatureStream* streamed,
                                            const std::string& out) {
  DGNN_CHECK(streamed == nullptr || !t.has_features(), out, ": node type '", t.name,
             "' has features and a feature stream; give it one of them");
  if (streamed != nullptr) return *streamed;
  if (!t.has_features()) return std::nullopt;
  DGNN_CHECK(t.features.dim() == 2 && t.features.size(0) == t.count, out, ": node type '", t.name,
             "' has features of shape ", t.features.sizes(), " for ", t.count, " nodes");
  return feature_stream_of(t.features, t.features.scalar_type());
}

Json type_entry(const NodeType& t, const std::optional<FeatureStream>& table,
                const std::string& dir, const std::string& out) {
  check_path_name(t.name, "node type", out);
  if (!table) return {{"name", t.name}, {"count", t.count}, {"feat_dim", 0}};
  DGNN_CHECK(table->rows == t.count && table->dim > 0, out, ": node type '", t.name,
             "' has a feature stream of ", table->rows, " rows of ", table->dim, " values for ",
             t.count, " nodes");
  DGNN_CHECK(table->dtype == at::kFloat || table->dtype == at::kHalf, out, ": node type '", t.name,
             "' has features of dtype ", table->dtype,
             "; they can be stored as float32 or float16");
  const std::string tdir = dir + "/nodes/" + t.name;
  fs::create_directories(tdir);
  Json entry = {{"name", t.name},
                {"count", t.count},
                {"feat_dim", table->dim},
                {"feat_dtype", table->dtype == at::kHalf ? "float16" : "float32"}};
  if (t.partition.features_by_part) {
    PartitionBook book = t.partition;
    book.checked = write_feature_parts(tdir, book, *table);
    entry["partition"] = partition_book_json(book);
    return entry;
  }
  const FileStamp checked = write_checked_features(tdir + "/features.npy", *table);
  if (checked.bytes >= 0) {
    entry["features_checked"] = {
        {"bytes", checked.bytes}, {"mtime_ns", checked.mtime_ns}, {"inode", checked.inode}};
  }
  return entry;
}

// A partitioned dataset's type: its book (unless type_entry wrote it with the parts' stamps)
// and its original ids.
void save_type_partition(const NodeType& t, Json& entry, const std::string& dir,
                         const std::string& out) {
  if (t.partition.method.empty()) return;
  DGNN_CHECK(t.node_ids.defined() && t.feature_part < 0, out, ": node type '", t.name,
             "' is partitioned but ",
             t.node_ids.defined() ? "holds one part's rows only; load the dataset whole to save it"
                                  : "has no original ids");
  if (!entry.contains("partition")) entry["partition"] = partition_book_json(t.partition);
  const std::string tdir = dir + "/nodes/" + t.name;
  fs::create_directories(tdir);
  save_npy(tdir + "/node_ids.npy", t.node_ids.to(t.count <= INT32_MAX ? at::kInt : at::kLong));
}

Json save_relation(const Relation& r, const std::string& dir, const std::string& out) {
  check_path_name(r.rel, "relation", out);
  const std::string rdir = relation_dir(dir, r.src, r.rel, r.dst);
  fs::create_directories(rdir);
  save_npy(rdir + "/indptr.npy", r.graph.indptr);
  save_npy(rdir + "/indices.npy", r.graph.indices);
  return {{"src", r.src}, {"rel", r.rel}, {"dst", r.dst}, {"num_edges", r.num_edges()}};
}

}  // namespace

bool is_hetero_dir(const std::string& dir) {
  const std::string text = read_text(dir + "/meta.json");
  if (text.empty()) return false;
  const Json meta = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  return meta.is_object() && meta.contains("kind") && meta.at("kind") == kKind;
}

HeteroMeta parse_hetero_meta(std::string_view text, const std::string& where) {
  Json meta;
  try {
    meta = Json::parse(text);
  } catch (const Json::exception& e) {
    fail(where, ": not valid JSON: ", e.what());
  }
  DGNN_CHECK(meta.is_object(), where, ": must hold a JSON object");
  DGNN_CHECK(optional_json_field<std::string>(meta, "kind", where, "") == kKind, where,
             ": field 'kind' must be \"", kKind, "\" for a heterogeneous dataset directory");
  const auto version = json_field<int64_t>(meta, "format_version", where);
  DGNN_CHECK(version == kHeteroFormatVersion, where, ": format_version ", version,
             " is not supported for heterogeneous directories (this build reads version ",
             kHeteroFormatVersion, ")");
  HeteroMeta out;
  out.name = optional_json_field<std::string>(meta, "name", where, "");
  parse_types(out, meta, where);
  parse_relations(out, meta, where);
  parse_target(out, meta, where);
  return out;
}

HeteroDataset load_hetero_dir(const std::string& dir, int64_t feature_part, int64_t feature_parts) {
  const std::string text = read_text(dir + "/meta.json");
  if (text.empty())
    fail(dir, ": missing meta.json (is this a dataset directory? see docs/formats.md)");
  const HeteroMeta meta = parse_hetero_meta(text, dir + "/meta.json");
  HeteroDataset ds;
  ds.source = dir;
  ds.name = meta.name.empty() ? fs::path(dir).filename().string() : meta.name;
  const int64_t parts = meta.node_types.front().partition.parts();
  const int64_t part = feature_part >= 0 && feature_parts == parts && parts > 0 ? feature_part : -1;
  DGNN_CHECK(part < parts, dir, ": has ", parts, " parts; there is no part ", part);
  for (const HeteroMeta::Type& m : meta.node_types) {
    NodeType t;
    t.name = m.name;
    t.count = m.count;
    t.partition = m.partition;
    if (!m.partition.method.empty())
      t.node_ids = load_required(dir + "/nodes/" + m.name, "node_ids.npy");
    load_type_features(t, m, dir, part);
    ds.node_types.push_back(std::move(t));
  }
  for (const HeteroMeta::Rel& m : meta.relations) {
    ds.relations.push_back(load_relation(m, meta.node_types[m.dst_type].count, dir));
  }
  load_target(ds, meta, dir);
  // Feature tables were checked above (or are stamped as checked when written).
  validate_hetero(ds, dir, /*features_checked=*/true);
  return ds;
}

void save_hetero_dir(const HeteroDataset& ds, const std::string& out,
                     const std::map<std::string, FeatureStream>& streamed) {
  for (const auto& [name, stream] : streamed) {
    DGNN_CHECK(std::any_of(ds.node_types.begin(), ds.node_types.end(),
                           [&](const NodeType& t) { return t.name == name; }),
               out, ": a feature stream names node type '", name, "', which the dataset lacks");
  }
  std::error_code ec;
  if (fs::exists(out, ec) && !(fs::is_directory(out, ec) && fs::is_empty(out, ec))) {
    fail(out, ": already exists; remove it or choose another output path");
  }
  TempDir temp(out);
  const std::string& dir = temp.path();
  Json meta = {{"format_version", kHeteroFormatVersion}, {"kind", kKind}, {"name", ds.name}};
  meta["node_types"] = Json::array();
  for (const NodeType& t : ds.node_types) {
    const auto it = streamed.find(t.name);
    const FeatureStream* stream = it != streamed.end() ? &it->second : nullptr;
    Json entry = type_entry(t, table_to_write(t, stream, out), dir, out);
    save_type_partition(t, entry, dir, out);
    meta["node_types"].push_back(std::move(entry));
  }
  meta["relations"] = Json::array();
  for (const Relation& r : ds.relations) meta["relations"].push_back(save_relation(r, dir, out));
  if (ds.target_type >= 0) {
    DGNN_CHECK(ds.labels.defined(), out, ": target node type '", ds.target().name,
               "' has no labels; give labels for it (one per node, -1 for unlabelled)");
    save_npy(dir + "/labels.npy", ds.labels);
    meta["target"] = {{"type", ds.target().name}, {"num_classes", ds.num_classes}};
    if (!ds.class_names.empty()) meta["target"]["class_names"] = ds.class_names;
    for (size_t k = 0; k < ds.splits.size(); ++k) {
      const std::string sdir = hetero_split_dir(dir, k);
      fs::create_directories(sdir);
      save_npy(sdir + "/train_idx.npy", ds.splits[k].train);
      save_npy(sdir + "/val_idx.npy", ds.splits[k].val);
      save_npy(sdir + "/test_idx.npy", ds.splits[k].test);
    }
  }
  meta["num_splits"] = ds.target_type >= 0 ? ds.splits.size() : 0;
  write_file_atomic(dir + "/meta.json", meta.dump(2) + "\n");
  temp.commit();
}

}  // namespace directgnn
