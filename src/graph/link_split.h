// Link prediction's edges: positive (src, dst) pairs per split and, for validation and test,
// fixed negatives in OGB's two layouts. A dataset directory stores them (docs/formats.md);
// a dataset without them gets the seeded random split below, as PyG's RandomLinkSplit makes.
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <string>

#include "graph/csr_graph.h"

namespace directgnn {

// How a split's fixed evaluation negatives are laid out.
enum class LinkNegatives {
  kNone,       // none stored
  kShared,     // [M, 2] (src, dst) pairs scored against every positive (ogbl-collab)
  kPerSource,  // [E, K]: K negative destinations for each positive's source (ogbl-citation2)
};

// The negatives' layout name in meta.json ("none", "shared", "per_source"), and back.
std::string link_negatives_name(LinkNegatives layout);
LinkNegatives parse_link_negatives(const std::string& name, const std::string& where);

struct LinkSplit {
  at::Tensor train, val, test;  // int64 [E, 2] positive (src, dst) pairs
  LinkNegatives negatives = LinkNegatives::kNone;
  at::Tensor val_neg, test_neg;  // int64, in the layout above (undefined for kNone)
  // Validation and test positives may also be edges of the message-passing graph: pairs that
  // interact again later (ogbl-collab's collaborations, split by year), which OGB's leaderboard
  // keeps in the graph. Otherwise such a positive is refused as a leak.
  bool eval_edges_in_graph = false;
  // A published benchmark's split, kept as it was published (an OGB import): its repeated
  // validation or test positives and its negatives that are edges were counted when it was
  // imported. A hand-written split has neither: both are refused.
  bool published = false;

  bool defined() const { return train.defined(); }
};

// A seeded random split of a graph's edges.
struct LinkSplitOptions {
  double val = 0.05, test = 0.1;  // fractions of the unique edges; training keeps the rest
  // 0: one shared negative pair per validation (test) positive, PyG's default ratio of 1;
  // K > 0: K negative destinations per positive's source.
  int64_t neg_per_source = 0;
  uint64_t seed = 0;
};

// Checks the fractions (each in [0, 1), val + test < 1) and the count; names the fix.
void check_link_split_options(const LinkSplitOptions& options);
// "TRAIN,VAL,TEST" fractions summing to 1 (such as "0.85,0.05,0.1") as options.
LinkSplitOptions parse_link_fractions(const std::string& text);

// The graph's unique edges as int64 [E, 2] (src, dst) pairs, in CSR order: for an undirected
// graph each pair once (src < dst, self-loops left out, as they have no other direction), for
// a directed one each stored edge once. Multi-edges collapse to one.
at::Tensor unique_edges(const CsrGraph& graph, bool directed);

struct RandomLinkSplit {
  CsrGraph graph;  // message passing: the training edges (both directions when undirected)
  LinkSplit split;
};

// PyG's RandomLinkSplit, seeded: the unique edges shuffled; the first `val` and `test`
// fractions become validation and test positives and leave the message-passing graph;
// fixed negatives are pairs that are no edge of the whole graph (either direction when
// undirected), drawn from the seed alone, so the split does not depend on the thread count.
RandomLinkSplit random_link_split(const CsrGraph& graph, bool directed,
                                  const LinkSplitOptions& options);

// Checks a stored split against its message-passing graph and normalises it to int64:
// shapes, node ids in range, the negatives' layout (K per positive, or shared pairs), every
// training positive an edge of the graph, and no validation or test positive one (nor its
// reverse when undirected): they would leak into message passing, unless the split says that
// they may (eval_edges_in_graph). Unless published, each validation (test) positive is listed
// once and no negative is an edge of the graph or a positive. `where` names the source.
void validate_link_split(LinkSplit& split, const CsrGraph& graph, bool directed,
                         const std::string& where);

// What validate_link_split refuses in a hand-written split and a published one may hold,
// counted: validation and test positives that are edges of the message-passing graph, rows
// that repeat an earlier positive of their split, and negatives (entries of a per_source
// layout) that are edges of the graph or positives of any split. `split` has passed
// validate_link_split (as published, with eval_edges_in_graph).
struct LinkSplitFaults {
  int64_t in_graph = 0, repeated = 0, negative_edges = 0;
};
LinkSplitFaults count_link_split_faults(const LinkSplit& split, const CsrGraph& graph,
                                        bool directed);

}  // namespace directgnn
