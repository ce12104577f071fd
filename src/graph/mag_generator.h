// An ogbn-mag-shaped heterogeneous graph (`directgnn generate mag`): papers cite papers, authors
// write papers, authors are affiliated with institutions, papers have fields of study, with
// heavy-tailed degrees and features on papers only. Its paper labels are planted from the
// communities of a paper's authors and fields, while paper features carry only a weak signal,
// so a model must read the relations to beat an MLP on paper features (the mechanism is
// written out in docs/heterogeneous.md, "The mag generator"). `scale` 1 gives ogbn-mag's size
// (736,389 papers, 1,134,649 authors, 8,740 institutions, 59,965 fields; about 21M edges
// before reverses); every count scales linearly. The result is the same for a seed whatever
// the thread count: each draw comes from a stream keyed by (seed, purpose, node id).
//
// Relations, named as ogbn-mag's, with reverses added as PyG's ToUndirected does:
// paper,cites,paper (symmetrised), author,writes,paper, author,affiliated_with,institution,
// paper,has_topic,field_of_study, and rev_writes, rev_affiliated_with, rev_has_topic.
// The target type is paper; the split is a seeded random permutation cut by the fractions.
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "graph/hetero_graph.h"

namespace directgnn {

struct MagOptions {
  double scale = 0.01;                     // 1: ogbn-mag's node and edge counts
  int64_t feat_dim = 128;                  // paper features
  at::ScalarType feat_dtype = at::kFloat;  // float32 or float16
  int64_t num_classes = 16;                // paper labels = communities (venues, in ogbn-mag: 349)
  double signal = 0.1;                     // paper features' class-mean scale against unit noise
  // Chance that one author, field, citation or affiliation is drawn from a uniformly random
  // community instead of its owner's: 0 makes the relations reveal the label outright.
  double mixing = 0.3;
  double train_fraction = 0.6, val_fraction = 0.2;  // of the papers; the rest is test
  uint64_t seed = 0;
};

// Seconds each phase of generate_mag took, in order, for commands that report them.
struct MagTimings {
  std::vector<std::pair<std::string, double>> phases;
};

// Node counts at `scale` (ogbn-mag's, rounded), in the dataset's type order: paper, author,
// institution, field_of_study.
std::vector<int64_t> mag_node_counts(double scale);
// Edges drawn per relation at `scale` (cites, writes, affiliated_with, has_topic; ogbn-mag's
// counts before reverses, rounded); duplicates removed afterwards make the result a bit smaller.
std::vector<int64_t> mag_edge_targets(double scale);

// Throws naming the option when out of range (every type needs at least num_classes nodes).
void check_mag_options(const MagOptions& options);
// The dataset, validated, with reverse relations; `timings`, when given, receives the phases.
HeteroDataset generate_mag(const MagOptions& options, MagTimings* timings = nullptr);

}  // namespace directgnn
