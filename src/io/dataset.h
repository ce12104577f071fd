// A dataset in memory: graph, feature table, and what it is trained for: node labels and
// splits (node classification), link splits (link prediction), or both.
// Loaded from a dataset directory (docs/formats.md; arrays memory-mapped, not copied) or
// imported from an .npz file; every array is validated on load.
#pragma once

#include <ATen/Tensor.h>

#include <array>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "graph/csr_graph.h"
#include "graph/link_split.h"

namespace directgnn {

struct Split {
  at::Tensor train, val, test;  // int64 node ids
};

// A partitioned dataset's book (`directgnn partition`, graph/partition.h): its nodes are
// renumbered so that part k owns the stored ids [offsets[k], offsets[k + 1]).
struct PartitionBook {
  std::string method;                 // "metis" or "random"; empty: not partitioned
  std::vector<int64_t> offsets;       // P + 1 entries, from 0 to N
  std::vector<int64_t> edges, seeds;  // per part: stored in-edges of its nodes, training seeds
  int64_t edge_cut = 0;               // stored edges whose ends have different owners
  // The feature table is stored one file per part (DIR/part-K/features.npy, rows offsets[K] to
  // offsets[K + 1] - 1), so a machine may hold its part only; false: one features.npy.
  bool features_by_part = false;
  // Per part: {bytes, mtime_ns, inode} of its file when written and checked finite (empty:
  // unknown, so a loader scans it).
  std::vector<std::array<int64_t, 3>> checked;
  // The structure is stored by part (DIR/part-K/indptr.npy and indices.npy: the in-edges of
  // part K's nodes, rows from offsets[K], neighbours in stored ids), so a machine may hold its
  // part's edges only; false: one indptr.npy and indices.npy.
  bool structure_by_part = false;
  int64_t parts() const { return offsets.empty() ? 0 : static_cast<int64_t>(offsets.size()) - 1; }
};

struct Dataset {
  std::string name;
  std::string source;  // where it came from, for messages
  CsrGraph graph;
  at::Tensor features;      // [N, F] float32 or float16, C order (may be a memory mapping)
  at::Tensor labels;        // int64 [N]; -1 marks an unlabelled node; undefined: no labels
  int64_t num_classes = 0;  // 0 without labels
  std::vector<std::string> class_names;  // class k's name, when the source names them; or empty
  bool directed = false;
  std::vector<Split> splits;  // the dataset's own splits; empty when it ships none
  LinkSplit link;             // stored link-prediction splits; undefined when none
  // Set when meta.json records that this very features.npy (same size, modification time and
  // inode) was checked finite when it was written: validate_dataset then skips its scan of the
  // table.
  bool features_checked = false;
  // The .npy file `features` maps (a dataset directory's features.npy), which the `disk`
  // placement reads rows from; empty when the table came from elsewhere (.npz, made in memory).
  std::string features_path;
  // How the feature table is read, for the run's header (empty for a table in memory).
  std::string feature_access;
  // Set when the nodes were renumbered (`convert --reorder`, io/dataset_reorder.h):
  // node_ids[v] is the original id of stored node v (int64 [N], a permutation), and
  // node_order names the order ("degree", "rcm"). Undefined: the ids are the original ones.
  at::Tensor node_ids;
  std::string node_order;
  PartitionBook partition;  // set for a partitioned dataset (node_order is its method)
  // >= 0: `features` holds only this part's rows (partition.offsets[k] onwards), as a rank of a
  // run that shards the table loads it (ImportOptions::feature_part); -1: the whole table.
  int64_t feature_part = -1;
  // >= 0: `graph` holds only this part's rows' edges (every node keeps its row; the others are
  // empty), as a rank of a run that shards the structure loads it; -1: the whole graph.
  int64_t structure_part = -1;

  int64_t num_nodes() const { return graph.num_nodes(); }
  int64_t feat_dim() const { return features.size(1); }
  bool has_labels() const { return labels.defined(); }
};

// Node classification's precondition: throws naming the dataset and the fix when it has no
// labels (a link-prediction dataset).
void require_labels(const Dataset& dataset);

struct ImportOptions {
  bool keep_self_loops = false;
  // OGB and edge lists: add the reverse of every edge (OGB's add_inverse_edge; for SNAP lists
  // of undirected graphs). Without it the graph is kept directed as given.
  bool add_inverse_edges = false;
  // Edge lists: labels (required), a .npy of one integer per node, or a CSV table with a
  // header (read as CSV when its name ends in .csv or .csv.gz, or a label column is given).
  std::string labels_path;
  std::string label_column;   // CSV labels: the column of class names
  std::string id_column;      // CSV labels: the node id column (default: "id", else the first)
  std::string features_path;  // edge lists: features .npy (default: log-degree and a constant)
  // OGB: skip link splits stored as torch pickles (split/*/train.pt), which Python's importer
  // (directgnn.datasets.import_ogbl) reads; without it they are an error naming that importer.
  bool skip_link_split_files = false;
  // A rank of a run that shards the feature table: of a dataset stored by part in
  // `feature_parts` parts, load part `feature_part`'s rows only (Dataset::feature_part). Any
  // other dataset, or -1, loads the whole table.
  int64_t feature_part = -1, feature_parts = 0;
  // A rank of a run that shards the structure: of a dataset whose structure is stored by part
  // in `structure_parts` parts, load part `structure_part`'s edges only
  // (Dataset::structure_part). Any other dataset, or -1, loads the whole graph.
  int64_t structure_part = -1, structure_parts = 0;
};

// Reads a dataset directory or an .npz file (gnn-benchmark CSR layout, or numpy savez layout
// with edges / node_features / node_labels / *_masks). Throws naming the file and field.
Dataset load_dataset(const std::string& path, const ImportOptions& options = {});

// Checks shapes, dtypes, label range, split ids and that features are finite (unless
// dataset.features_checked says it is known); normalises
// dtypes (labels to int64, split ids to int64). `where` names the source in errors.
void validate_dataset(Dataset& dataset, const std::string& where);

// validate_dataset's checks of labels (int64 [n], -1 unlabelled, below num_classes, which is
// set from the largest label when <= 0) and of the node splits (labelled ids in range), for
// `n` nodes: shared with heterogeneous datasets, whose labels belong to one node type.
struct NodeLabels {
  at::Tensor& labels;
  int64_t& num_classes;
  std::vector<std::string>& class_names;
  std::vector<Split>& splits;
};
void validate_labels(NodeLabels labels, int64_t n, const std::string& where);
// Throws naming `where`, the row and the column of the first value that is not finite.
void check_features_finite(const at::Tensor& features, const std::string& where);

// The first value of `rows` ([k, F] float32 or float16, contiguous) that is not finite, as
// (row, column); (-1, -1) when every value is finite. Rows are scanned in parallel.
std::pair<int64_t, int64_t> first_non_finite(const at::Tensor& rows);

// Writes `dataset` as a dataset directory at `out` (atomically: temp directory, then rename).
void save_dataset_dir(const Dataset& dataset, const std::string& out);

// A feature table produced a chunk of rows at a time: fill(begin, end, out) writes rows
// [begin, end) as float32 into `out`; they are stored as `dtype` (float32 or float16).
struct FeatureStream {
  int64_t rows = 0, dim = 0;
  at::ScalarType dtype = at::kFloat;
  std::function<void(int64_t begin, int64_t end, float* out)> fill;
};
// Rows of the table `x`, stored as `dtype`.
FeatureStream feature_stream_of(const at::Tensor& x, at::ScalarType dtype);
// The whole table a stream produces, as its dtype, in memory (64 MiB of float32 at a time).
at::Tensor feature_table_of(const FeatureStream& stream);
// The same, with the features from `features` instead of dataset.features (which may be
// undefined): the table is never whole in memory.
void save_dataset_dir(const Dataset& dataset, const std::string& out,
                      const FeatureStream& features);
Dataset load_dataset_dir(const std::string& dir, const ImportOptions& options = {});

// What a dataset directory's meta.json says (docs/formats.md), checked: sizes positive,
// format_version supported, every field of the right type. `where` names the file in errors.
struct DatasetMeta {
  std::string name;  // empty when meta.json gives none
  int64_t num_nodes = 0, num_edges = 0, feat_dim = 0;
  int64_t num_classes = 0;     // 0: no labels.npy
  std::string link_negatives;  // meta.json's link.negatives; empty when it stores no link split
  bool eval_edges_in_graph = false;  // meta.json's link.eval_edges_in_graph
  bool link_published = false;       // meta.json's link.published
  bool directed = false;
  int64_t num_splits = -1;               // -1 when meta.json does not say
  std::vector<std::string> class_names;  // empty when meta.json names no classes
  // features_checked: {bytes, mtime_ns, inode} of features.npy when it was written and found
  // finite (-1 when meta.json does not say).
  int64_t checked_bytes = -1, checked_mtime_ns = -1, checked_inode = -1;
  std::string node_order;   // meta.json's node_order; empty when the nodes keep their ids
  PartitionBook partition;  // meta.json's partition; method empty when absent
};
DatasetMeta parse_dataset_meta(std::string_view text, const std::string& where);
// A partition book as meta.json holds it (JSON text: method, parts, offsets, nodes, edges,
// seeds, edge_cut); empty for a dataset that is not partitioned.
std::string partition_book_text(const PartitionBook& book);
Dataset import_npz(const std::string& path, const ImportOptions& options);
// An OGB dataset's raw directory (edge.csv.gz, node-feat.csv.gz, num-node-list.csv.gz and,
// for node-property datasets, node-label.csv.gz, in DIR or DIR/raw; node splits in
// DIR/split/NAME/).
bool looks_like_ogb(const std::string& dir);
Dataset import_ogb(const std::string& dir, const ImportOptions& options);
// A SNAP/CSV edge list (.txt, .csv, .tsv, .edges, .el, optionally .gz): two node ids per line,
// '#' and '%' comments, one optional header line. With .npy labels the graph has one node per
// label; with CSV labels, one per row of --features, else ids 0 to the largest in the list.
Dataset import_edge_list(const std::string& path, const ImportOptions& options);

}  // namespace directgnn
