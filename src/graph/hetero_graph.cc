#include "graph/hetero_graph.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <utility>

#include "core/parallel.h"
#include "directgnn/error.h"
#include "graph/coo_builder.h"
#include "graph/node_order.h"

namespace directgnn {
namespace {

std::string type_list(const HeteroDataset& ds) {
  std::ostringstream out;
  for (size_t t = 0; t < ds.node_types.size(); ++t) out << (t ? ", " : "") << ds.node_types[t].name;
  return out.str();
}

std::string relation_list(const HeteroDataset& ds) {
  std::ostringstream out;
  for (size_t r = 0; r < ds.relations.size(); ++r) {
    out << (r ? "; " : "") << ds.relations[r].key();
  }
  return out.str();
}

// Ids in [0, count) of an int32/int64 array, as contiguous int64; throws naming the first bad.
at::Tensor checked_ids(const at::Tensor& ids, int64_t count, const std::string& what,
                       const std::string& where) {
  DGNN_CHECK(ids.defined() && ids.dim() == 1 &&
                 (ids.scalar_type() == at::kLong || ids.scalar_type() == at::kInt),
             where, ": ", what, " must be a 1-D int32 or int64 array of node ids");
  at::Tensor out = ids.to(at::kLong).contiguous();
  const int64_t* p = out.data_ptr<int64_t>();
  const int64_t bad =
      first_index_where(out.numel(), 1 << 16, [&](int64_t i) { return p[i] < 0 || p[i] >= count; });
  DGNN_CHECK(bad < 0, where, ": ", what, "[", bad, "] = ", bad < 0 ? 0 : p[bad],
             " is out of range for ", count, " nodes of that type");
  return out;
}

void validate_types(HeteroDataset& ds, const std::string& where, bool features_checked) {
  DGNN_CHECK(!ds.node_types.empty(), where, ": lists no node types");
  std::set<std::string> names;
  for (NodeType& t : ds.node_types) {
    DGNN_CHECK(!t.name.empty() && t.name.find_first_of(",;=") == std::string::npos, where,
               ": node type name '", t.name,
               "' must be non-empty and hold none of ',', ';', '=' (they separate relation names)");
    DGNN_CHECK(names.insert(t.name).second, where, ": node type '", t.name, "' appears twice");
    DGNN_CHECK(t.count > 0, where, ": node type '", t.name, "' has ", t.count,
               " nodes; every type needs at least one");
    if (!t.has_features()) continue;
    const std::string what = where + " (features of node type '" + t.name + "')";
    // A rank of a sharded run holds its part's rows only.
    const int64_t rows = t.feature_part >= 0 ? t.partition.offsets[t.feature_part + 1] -
                                                   t.partition.offsets[t.feature_part]
                                             : t.count;
    DGNN_CHECK(t.features.dim() == 2 && t.features.size(0) == rows && t.features.size(1) > 0, what,
               ": has shape ", t.features.sizes(), " but the type has ", rows,
               t.feature_part >= 0 ? " nodes in this part" : " nodes", "; give one row per node, [",
               rows, ", F]");
    DGNN_CHECK(t.features.scalar_type() == at::kFloat || t.features.scalar_type() == at::kHalf,
               what, ": has dtype ", t.features.scalar_type(),
               "; use float32 or float16 (arr.astype('float32'))");
    if (!t.features.is_contiguous()) t.features = t.features.contiguous();
    if (!features_checked) check_features_finite(t.features, what);
  }
}

void validate_relations(HeteroDataset& ds, const std::string& where) {
  std::set<std::string> keys;
  for (Relation& r : ds.relations) {
    DGNN_CHECK(!r.rel.empty() && r.rel.find_first_of(",;=") == std::string::npos, where,
               ": relation name '", r.rel, "' must be non-empty and hold none of ',', ';', '='");
    const std::string what = where + " (relation " + r.key() + ")";
    for (const std::string* name : {&r.src, &r.dst}) {
      const bool known = std::any_of(ds.node_types.begin(), ds.node_types.end(),
                                     [&](const NodeType& t) { return t.name == *name; });
      DGNN_CHECK(known, what, ": names node type '", *name, "', which is not among the types (",
                 type_list(ds), "); add the type or fix the relation");
    }
    r.src_type = ds.type_index(r.src, where);
    r.dst_type = ds.type_index(r.dst, where);
    DGNN_CHECK(keys.insert(r.key()).second, what, ": appears twice");
    const int64_t num_dst = ds.node_types[r.dst_type].count;
    validate_csr(r.graph, what, ds.node_types[r.src_type].count);
    DGNN_CHECK(r.graph.num_nodes() == num_dst, what, ": indptr has ", r.graph.indptr.numel(),
               " entries but destination type '", r.dst, "' has ", num_dst,
               " nodes; a relation's CSR has one row per destination node (", num_dst + 1,
               " entries)");
    DGNN_CHECK(!r.graph.weights.defined(), what,
               ": has edge weights; heterogeneous relations are unweighted");
  }
}

// A partitioned dataset: every type has a book of the same method and parts whose offsets end
// at its count, and its original ids; or no type has one.
void validate_partition(HeteroDataset& ds, const std::string& where) {
  if (ds.node_types.empty()) return;  // validate_types names it
  const NodeType& first = ds.node_types.front();
  for (NodeType& t : ds.node_types) {
    const std::string what = where + " (node type '" + t.name + "')";
    if (t.node_ids.defined())
      t.node_ids = checked_node_ids(t.node_ids, t.count, what + " node_ids");
    DGNN_CHECK(t.partition.method == first.partition.method &&
                   t.partition.parts() == first.partition.parts(),
               what, ": is partitioned as ", t.partition.parts(), " part(s) by '",
               t.partition.method, "' but node type '", first.name, "' as ",
               first.partition.parts(), " by '", first.partition.method,
               "'; every type of a partitioned dataset has the same parts (directgnn partition)");
    if (t.partition.method.empty()) continue;
    DGNN_CHECK(t.partition.offsets.back() == t.count, what, ": its partition's offsets end at ",
               t.partition.offsets.back(), " but the type has ", t.count, " nodes");
    DGNN_CHECK(t.feature_part < t.partition.parts(), what, ": holds part ", t.feature_part, " of ",
               t.partition.parts());
  }
}

void validate_target(HeteroDataset& ds, const std::string& where) {
  if (ds.target_type < 0) {
    DGNN_CHECK(!ds.labels.defined() && ds.splits.empty(), where,
               ": has labels or splits but no target node type; name the labelled type");
    ds.num_classes = 0;
    return;
  }
  DGNN_CHECK(ds.target_type < static_cast<int>(ds.node_types.size()), where,
             ": the target type index is out of range");
  const NodeType& t = ds.target();
  DGNN_CHECK(ds.labels.defined(), where, ": target node type '", t.name,
             "' has no labels; give labels for it (one per node, -1 for unlabelled)");
  validate_labels({ds.labels, ds.num_classes, ds.class_names, ds.splits}, t.count,
                  where + " (labels of node type '" + t.name + "')");
}

}  // namespace

const NodeType& HeteroDataset::target() const {
  DGNN_CHECK(target_type >= 0 && static_cast<size_t>(target_type) < node_types.size(), source,
             ": no node type is labelled, so there is nothing to classify; name the labelled type "
             "in meta.json (\"target\": {\"type\": T, \"num_classes\": C}, with labels.npy "
             "beside it), or train link prediction on one relation (task link, target_relation "
             "SRC,REL,DST)");
  return node_types[static_cast<size_t>(target_type)];
}

int HeteroDataset::type_index(const std::string& name, const std::string& where) const {
  for (size_t t = 0; t < node_types.size(); ++t) {
    if (node_types[t].name == name) return static_cast<int>(t);
  }
  fail(where, ": no node type '", name, "'; the types are ", type_list(*this));
}

int HeteroDataset::relation_index(const std::string& key, const std::string& where) const {
  int found = -1;
  for (size_t r = 0; r < relations.size(); ++r) {
    const Relation& rel = relations[r];
    if (rel.key() == key) return static_cast<int>(r);
    if (rel.rel == key) {
      DGNN_CHECK(found < 0, where, ": relation '", key, "' is ambiguous; name it as src,rel,dst (",
                 relation_list(*this), ")");
      found = static_cast<int>(r);
    }
  }
  DGNN_CHECK(found >= 0, where, ": no relation '", key, "'; the relations are ",
             relation_list(*this));
  return found;
}

int64_t HeteroDataset::num_nodes() const {
  int64_t n = 0;
  for (const NodeType& t : node_types) n += t.count;
  return n;
}

int64_t HeteroDataset::num_edges() const {
  int64_t m = 0;
  for (const Relation& r : relations) m += r.num_edges();
  return m;
}

void validate_hetero(HeteroDataset& ds, const std::string& where, bool features_checked) {
  validate_partition(ds, where);
  validate_types(ds, where, features_checked);
  validate_relations(ds, where);
  validate_target(ds, where);
}

CsrGraph build_relation_csr(at::Tensor src, at::Tensor dst, int64_t num_src, int64_t num_dst,
                            const std::string& where) {
  DGNN_CHECK(src.numel() == dst.numel(), where, ": ", src.numel(), " sources but ", dst.numel(),
             " destinations; every edge needs both");
  src = checked_ids(src, num_src, "source", where);
  dst = checked_ids(dst, num_dst, "destination", where);
  const int64_t n = std::max(num_src, num_dst);
  CooBuildOptions options;
  options.symmetrize = false;
  options.remove_self_loops = false;
  CsrGraph g = build_csr_from_coo(std::move(src), std::move(dst), n, options, where);
  // Rows past num_dst are empty: no destination reaches them.
  g.indptr = g.indptr.narrow(0, 0, num_dst + 1).contiguous();
  g.indices = g.indices.to(index_type_for(n));
  return g;
}

CsrGraph transpose_relation(const CsrGraph& graph, int64_t num_src) {
  const at::Tensor dst = at::repeat_interleave(graph.degrees());
  return build_relation_csr(dst, graph.indices, graph.num_nodes(), num_src, "transposed relation");
}

void add_reverse_relations(HeteroDataset& ds) {
  const size_t given = ds.relations.size();
  for (size_t i = 0; i < given; ++i) {
    Relation& r = ds.relations[i];
    const int64_t ns = ds.node_types[r.src_type].count, nd = ds.node_types[r.dst_type].count;
    if (r.src_type == r.dst_type) {
      const at::Tensor dst = at::repeat_interleave(r.graph.degrees());
      const at::Tensor src = r.graph.indices.to(at::kLong);
      r.graph = build_relation_csr(at::cat({src, dst}), at::cat({dst, src}), ns, nd, r.key());
      continue;
    }
    Relation rev;
    rev.src = r.dst;
    rev.dst = r.src;
    rev.rel = "rev_" + r.rel;
    rev.src_type = r.dst_type;
    rev.dst_type = r.src_type;
    for (const Relation& other : ds.relations) {
      DGNN_CHECK(other.key() != rev.key(), ds.source, ": cannot add the reverse of ", r.key(),
                 ": relation ", rev.key(), " already exists");
    }
    rev.graph = transpose_relation(r.graph, ns);
    ds.relations.push_back(std::move(rev));
  }
}

}  // namespace directgnn
