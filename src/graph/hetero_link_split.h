// Link prediction on one relation of a heterogeneous graph (`train --task link
// --target-relation S,rel,D`): which relation, its reverse, and a seeded random split of its
// edges, as PyG's RandomLinkSplit with edge_types and rev_edge_types.
//
// The target relation's edges are the positives: each stored (source, destination) pair once
// when it joins two types; within one type each unordered pair once (min, max), as the decoders
// score a pair and its reverse alike. Validation and test positives leave the message-passing
// graph, from the target relation and from its reverse (D,rev_<rel>,S for <rel>, or D,<rel>,S
// for rev_<rel>, as add_reverse_relations and PyG's ToUndirected name them), in both directions
// within one type, so no evaluated pair carries a message either way.
#pragma once

#include <cstdint>
#include <string>

#include "graph/hetero_graph.h"
#include "graph/link_split.h"

namespace directgnn {

struct HeteroLinkTarget {
  int relation = -1;        // the target relation's index
  int reverse = -1;         // its reverse relation's, -1 when the graph has none
  bool undirected = false;  // a relation within one type: its pairs are unordered
  int src_type = -1, dst_type = -1;
};

// The relation named `name` (as HeteroDataset::relation_index accepts) and its reverse; throws
// naming `where` and the relations when there is none.
HeteroLinkTarget find_link_target(const HeteroDataset& dataset, const std::string& name,
                                  const std::string& where);

struct HeteroLinkSplit {
  HeteroDataset graph;  // message passing: the target relation and its reverse keep training edges
  LinkSplit split;      // positives and fixed negatives as (source id, destination id) pairs
};

// The target's positives as int64 [E, 2] (source id, destination id) pairs, in key order.
at::Tensor target_edges(const HeteroDataset& dataset, const HeteroLinkTarget& target);

// The seeded random split: the target's edges shuffled, the first `val` and `test` fractions
// validation and test positives. Fixed negatives are (source, destination) pairs of the two
// types that are no edge of the target relation (either direction within one type) nor
// self-pairs: one shared pair per positive (neg_per_source 0) or K destinations per positive's
// source; drawn from the seed alone, so the split does not depend on the thread count.
HeteroLinkSplit random_hetero_link_split(const HeteroDataset& dataset,
                                         const HeteroLinkTarget& target,
                                         const LinkSplitOptions& options);

}  // namespace directgnn
