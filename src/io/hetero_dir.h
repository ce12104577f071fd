// Heterogeneous datasets on disk (docs/formats.md, "Heterogeneous dataset directory"):
//
//   meta.json       {"format_version": 2, "kind": "heterogeneous", "name": ...,
//                    "node_types": [{"name", "count", "feat_dim" (0: none), "feat_dtype",
//                                    "features_checked"?}...],
//                    "relations": [{"src", "rel", "dst", "num_edges"}...],
//                    "target": {"type", "num_classes", "class_names"?} (absent: no labels),
//                    "num_splits"}
//   nodes/T/features.npy                  [count, F] float32|float16, for types with features
//   nodes/T/part-K/features.npy, nodes/T/node_ids.npy   a partitioned dataset's (see below)
//   relations/S___R___D/indptr.npy        int64 [count of D + 1]
//   relations/S___R___D/indices.npy       int32|int64: S's ids, by destination (as the
//                                         homogeneous CSR: row v lists who v receives from)
//   labels.npy, train_idx.npy, val_idx.npy, test_idx.npy (split_K/ for K >= 1): the target type
//
// A partitioned dataset (`directgnn partition`) gives each type a "partition" book in its
// node_types entry (the homogeneous book's fields: offsets over the type's ids, per part its
// in-edges and seeds), its original ids in node_ids.npy, and its table by part when the book says
// "features": "by_part".
//
// Arrays are memory-mapped, not copied, and validated on load (validate_hetero). Importers turn
// OGB's heterogeneous raw layout (ogbn-mag) and typed CSV edge lists into a HeteroDataset.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "graph/hetero_graph.h"
#include "io/dataset_files.h"

namespace directgnn {

// What a heterogeneous meta.json says, every field checked before any array is opened: types
// and relations named so that they stay inside the directory, relations and the target naming
// listed types, counts and dimensions in range.
struct HeteroMeta {
  struct Type {
    std::string name, feat_dtype = "float32";
    int64_t count = 0, feat_dim = 0;  // feat_dim 0: no features
    FileStamp checked;                // features.npy as checked finite when written
    PartitionBook partition;          // a partitioned dataset's book for this type
  };
  struct Rel {
    std::string src, rel, dst;
    int src_type = -1, dst_type = -1;  // indices into node_types
    int64_t num_edges = 0;
  };
  std::string name;
  std::vector<Type> node_types;
  std::vector<Rel> relations;
  int target = -1;  // index into node_types; -1: no labels
  int64_t num_classes = 0, num_splits = 0;
  std::vector<std::string> class_names;
};
// `text` is meta.json's content; `where` names it in errors.
HeteroMeta parse_hetero_meta(std::string_view text, const std::string& where);

// True when `dir` holds a meta.json whose "kind" is "heterogeneous".
bool is_hetero_dir(const std::string& dir);
// `feature_part` >= 0 with `feature_parts` equal to a partitioned dataset's parts loads only
// that part's rows of each table stored by part (NodeType::feature_part), as a rank of a run
// that shards the tables does; otherwise every table is whole.
HeteroDataset load_hetero_dir(const std::string& dir, int64_t feature_part = -1,
                              int64_t feature_parts = 0);
// Writes atomically (temporary directory, then rename); `out` must not exist or be empty.
// `streamed` gives, by type name, feature tables written as they are made (the type itself has
// no features in `dataset`): a table larger than memory never needs to be whole in it.
void save_hetero_dir(const HeteroDataset& dataset, const std::string& out,
                     const std::map<std::string, FeatureStream>& streamed = {});

struct HeteroImportOptions {
  // Adds reverse relations as PyG's ToUndirected does (graph/hetero_graph.h,
  // add_reverse_relations).
  bool add_inverse_edges = false;
};

// OGB's heterogeneous raw layout, as ogbn-mag ships it, in DIR or DIR/raw:
// raw/num-node-dict.csv.gz, raw/triplet-type-list.csv.gz (else the relations/ directories),
// raw/relations/A___r___B/{edge.csv.gz, num-edge-list.csv.gz}, raw/node-feat/T/node-feat.csv.gz,
// raw/nodetype-has-label.csv.gz, raw/node-label/T/node-label.csv.gz and
// split/NAME/T/{train,valid,test}.csv.gz (OGB's read_nodesplitidx_split_hetero). Other files
// (node_year, edge_reltype) are ignored; types and relations are kept in name order.
bool looks_like_ogb_hetero(const std::string& dir);
HeteroDataset import_ogb_hetero(const std::string& dir, const HeteroImportOptions& options);

// Typed CSV edge lists: one file per relation named S___R___D.csv (or .txt, .tsv, each
// optionally .gz), two integer ids per line (source, destination; '#' comments, an optional
// header line), in a directory with nodes.csv listing "type,count" for each node type and,
// optionally, T.features.npy per type, target.txt naming the labelled type, labels.npy (one per
// node of it) and train_idx.npy, val_idx.npy, test_idx.npy (its ids). Other files are ignored.
HeteroDataset import_hetero_csv(const std::string& dir, const HeteroImportOptions& options);
// Its parts, for tests and the fuzz targets: nodes.csv's text ("type,count" per line, in the
// order the types are kept; '#' comments, blank lines and a "type,count" header skipped), and
// an edge list's file name (S___R___D and a suffix above) as the relation's three names, false
// when the file names no relation.
std::vector<NodeType> parse_node_table(std::string_view text, const std::string& where);
bool relation_file_names(const std::string& file, std::string names[3]);

}  // namespace directgnn
