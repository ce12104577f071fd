// Partitioning a graph's nodes over P parts (`directgnn partition`): every node gets an owner,
// and renumbering the nodes by owner (partition_order, then io/dataset_reorder.h) gives each
// part a contiguous range of ids, so the owner of an id is a search in P + 1 offsets and a
// part's feature rows are a contiguous block of the table.
//   - metis: METIS's k-way partitioning of the undirected graph (few edges between parts),
//     balancing nodes, stored edges and training seeds at once; needs the build's METIS.
//   - random: a keyed hash of each node's id, one node at a time (no graph in memory beyond
//     what the caller holds), for graphs METIS cannot hold.
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "graph/csr_graph.h"

namespace directgnn {

enum class PartitionMethod { kMetis, kRandom };

// "metis" or "random".
const char* partition_method_name(PartitionMethod method);

// Whether this build has METIS (Debian's libmetis-dev when it was configured).
bool metis_available();

struct PartitionOptions {
  int64_t parts = 2;
  PartitionMethod method = PartitionMethod::kMetis;
  uint64_t seed = 0;
  at::Tensor seeds;  // int64 training node ids to balance across parts (undefined: none)
  // Whether the lists hold one direction only (METIS then gets each edge both ways); an
  // undirected graph's lists hold both already.
  bool directed = true;
  // METIS: balance nodes within each of `num_groups` groups (int32 [N], each in
  // [0, num_groups)) instead of all nodes together, as a heterogeneous graph's node types are
  // balanced one by one. Undefined: one group.
  at::Tensor groups;
  int64_t num_groups = 0;
};

struct PartitionStats {
  // Per part: the nodes it owns, their stored edges (in-edges), and the training seeds.
  std::vector<int64_t> nodes, edges, seeds;
  int64_t edge_cut = 0;  // stored edges whose two ends have different owners
  // The largest part over the mean (1.0: even), per balanced quantity; 1.0 without seeds.
  double node_imbalance = 1.0, edge_imbalance = 1.0, seed_imbalance = 1.0;
};

struct Partition {
  at::Tensor owner;  // int32 [N]: the part of each node
  PartitionStats stats;
};

// Throws naming the option when parts < 1 or above the node count, or when METIS is asked for
// and missing, or refuses the graph.
Partition partition_graph(const CsrGraph& graph, const PartitionOptions& options);

// The counts and cut of an assignment.
PartitionStats partition_stats(const CsrGraph& graph, const at::Tensor& owner, int64_t parts,
                               const at::Tensor& seeds);

// The renumbering by owner: order[v] is the node that becomes v (part 0's nodes by id, then
// part 1's, ...), and part k owns the new ids [offsets[k], offsets[k + 1]).
struct PartitionOrder {
  at::Tensor order;
  std::vector<int64_t> offsets;
};
PartitionOrder partition_order(const at::Tensor& owner, int64_t parts);

namespace detail {
// METIS's owners (graph/partition_metis.cc); throws when the build has no METIS.
at::Tensor metis_owner(const CsrGraph& graph, const PartitionOptions& options);
}  // namespace detail

}  // namespace directgnn
