// Partitioning a heterogeneous graph's nodes over P parts (`directgnn partition` on a
// heterogeneous dataset): every node of every type gets an owner, and each type is renumbered by
// owner so that part k owns a contiguous range of each type's ids (NodeType::partition), as
// graph/partition.h does for one type. The owners come from one homogeneous view of the graph
// (each type's ids after the types before it, every relation's edges between them), as DGL's
// partition_graph treats a heterograph: METIS balances each type's nodes, the in-edges and the
// target type's training seeds; random hashes each node.
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <vector>

#include "graph/hetero_graph.h"
#include "graph/partition.h"

namespace directgnn {

// The homogeneous view: type t's node v is node base[t] + v (base: the counts before t), and
// row w lists every relation's in-edges of w, sources mapped the same way (in relation order).
struct HeteroView {
  CsrGraph graph;
  std::vector<int64_t> base;  // per type, and the total at the end
  at::Tensor type;            // int32 [N]: each node's type
};
HeteroView homogeneous_view(const HeteroDataset& ds);

struct HeteroPartitionReport {
  PartitionStats stats;                     // over the whole view (every type)
  std::vector<double> type_node_imbalance;  // per type: its largest part over its mean
  std::vector<at::Tensor> orders;           // per type: order[v] = the id that became v
};

// Partitions `ds` in place: relations, labels and splits renumbered, each type's node_ids
// (composed with any earlier map) and book set, the book's table stored by part when
// `features_by_part`. `options.seeds` are the target type's training ids (or undefined); its
// groups are set here. Feature tables are left as they are: store them in `orders`' order
// (io/dataset_reorder.h, permuted_features). Throws as partition_graph does.
HeteroPartitionReport partition_hetero(HeteroDataset& ds, PartitionOptions options,
                                       bool features_by_part);

}  // namespace directgnn
