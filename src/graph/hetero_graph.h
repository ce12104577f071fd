// A heterogeneous graph in memory: typed nodes, each type with its own id space [0, count) and
// an optional feature table, and typed relations (src, rel, dst). Each relation is a CSR by
// destination in the homogeneous graph's orientation (graph/csr_graph.h): row v of relation r
// lists the nodes of r's source type that node v (of r's destination type) receives messages
// from, so the sampler reads it in place. Labels and splits belong to one target node type.
// On disk this is a heterogeneous dataset directory (io/hetero_dir.h, docs/formats.md).
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "graph/csr_graph.h"
#include "io/dataset.h"

namespace directgnn {

struct NodeType {
  std::string name;
  int64_t count = 0;
  // [count, F] float32 or float16 (may be a memory mapping), or undefined: a featureless type
  // (its nodes carry no input; learnable embeddings may stand in).
  at::Tensor features;
  std::string features_path;  // the .npy `features` maps, when it maps one
  // A partitioned dataset (`directgnn partition`): node_ids[v] is the original id of stored
  // node v (int64 [count], a permutation; undefined: ids as given), and `partition` the type's
  // book: part k owns its ids offsets[k] .. offsets[k+1]-1, its in-edges over every relation
  // into the type (`edges`), its training seeds, and whether its table is stored by part.
  at::Tensor node_ids{};
  PartitionBook partition{};
  // >= 0: `features` holds only this part's rows (partition.offsets[k] onwards); -1: all.
  int64_t feature_part = -1;

  bool has_features() const { return features.defined(); }
  int64_t feat_dim() const { return features.defined() ? features.size(1) : 0; }
};

struct Relation {
  std::string src, rel, dst;         // node type names
  int src_type = -1, dst_type = -1;  // indices into HeteroDataset::node_types
  // indptr int64 [dst count + 1]; indices int32/int64 in [0, src count). Unweighted.
  CsrGraph graph;

  // "src,rel,dst", as relations are named on the command line and in errors.
  std::string key() const { return src + "," + rel + "," + dst; }
  int64_t num_edges() const { return graph.num_edges(); }
};

struct HeteroDataset {
  std::string name;
  std::string source;  // where it came from, for messages
  std::vector<NodeType> node_types;
  std::vector<Relation> relations;
  // The labelled type: labels int64 [count of that type] (-1 = unlabelled) and splits of its
  // ids. target_type = -1 when the dataset has no labels.
  int target_type = -1;
  at::Tensor labels;
  int64_t num_classes = 0;
  std::vector<std::string> class_names;  // empty when the source names no classes
  std::vector<Split> splits;

  // The index of the node type named `name`; throws listing the types when there is none.
  int type_index(const std::string& name, const std::string& where) const;
  // The relation named "src,rel,dst" (or just "rel" when only one relation has that name);
  // throws listing the relations when there is none, or when "rel" is ambiguous.
  int relation_index(const std::string& key, const std::string& where) const;
  int64_t num_nodes() const;  // over all types
  int64_t num_edges() const;  // over all relations
  // The labelled type; throws naming the dataset and the fix when no type is labelled.
  const NodeType& target() const;
  // The parts of a partitioned dataset (every type has the same), 0 when it is not one.
  int64_t parts() const { return node_types.empty() ? 0 : node_types[0].partition.parts(); }
};

// Checks every invariant above, naming `where`, the type or relation and the fix: type names
// distinct and non-empty, relation endpoints known types, each CSR valid with sources in range
// of its source type, feature tables [count, F] float32/float16 and finite (unless
// `features_checked` says they are known finite), labels and split ids in range of the target
// type. Resolves src_type / dst_type from the names; normalises dtypes as validate_dataset does.
void validate_hetero(HeteroDataset& dataset, const std::string& where,
                     bool features_checked = false);

// As PyG's ToUndirected: a relation between two types gains its reverse (dst, "rev_" + rel,
// src) with the transposed CSR; a relation within one type is symmetrised in place (both
// directions, duplicates removed). Throws when a reverse's name is taken.
void add_reverse_relations(HeteroDataset& dataset);

// A relation's CSR by destination from its edges (src[i] of type `num_src` nodes sends to
// dst[i] of `num_dst`), rows sorted, duplicate edges dropped. Ids are checked; `where` names the
// source in errors.
CsrGraph build_relation_csr(at::Tensor src, at::Tensor dst, int64_t num_src, int64_t num_dst,
                            const std::string& where);

// The transposed CSR of a relation: rows by source, listing destinations (sorted within rows).
CsrGraph transpose_relation(const CsrGraph& graph, int64_t num_src);

}  // namespace directgnn
