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
//
// The mag240m shape follows OGB-LSC's MAG240M instead: paper, author and institution (no fields
// of study), cites, writes and affiliated_with with its counts (121.8M papers at scale 1),
// 768-d float16 paper features, 153 classes, and labels on 1.15% of the papers only (MAG240M
// labels its arXiv papers), split as MAG240M's 1.11M / 139k / 147k. Its paper table is meant to
// be written as it is made (mag_paper_features), never whole in memory.
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "graph/hetero_graph.h"
#include "io/dataset.h"

namespace directgnn {

enum class MagShape { kOgbnMag, kMag240m };

struct MagOptions {
  MagShape shape = MagShape::kOgbnMag;
  double scale = 0.01;                     // 1: the shape's node and edge counts
  int64_t feat_dim = 128;                  // paper features
  at::ScalarType feat_dtype = at::kFloat;  // float32 or float16
  int64_t num_classes = 16;                // paper labels = communities (venues, in ogbn-mag: 349)
  double signal = 0.1;                     // paper features' class-mean scale against unit noise
  // Chance that one author, field, citation or affiliation is drawn from a uniformly random
  // community instead of its owner's: 0 makes the relations reveal the label outright.
  double mixing = 0.3;
  double labelled_fraction = 1;  // papers with a label (and a split); the others' labels are -1
  double train_fraction = 0.6, val_fraction = 0.2;  // of the labelled papers; the rest is test
  uint64_t seed = 0;
};

// The defaults of a shape: MagOptions{} for ogbn-mag; for mag240m 768-d float16 features, 153
// classes and MAG240M's labelled fraction and split.
MagOptions mag_shape_defaults(MagShape shape);

// Seconds each phase of generate_mag took, in order, for commands that report them.
struct MagTimings {
  std::vector<std::pair<std::string, double>> phases;
};

// Node counts at `scale` (the shape's, rounded), in the dataset's type order: paper, author,
// institution, then field_of_study for ogbn-mag.
std::vector<int64_t> mag_node_counts(double scale, MagShape shape = MagShape::kOgbnMag);
// Edges drawn per relation at `scale` (cites, writes, affiliated_with, then has_topic for
// ogbn-mag; the shape's counts before reverses, rounded); duplicates removed afterwards make the
// result a bit smaller.
std::vector<int64_t> mag_edge_targets(double scale, MagShape shape = MagShape::kOgbnMag);

// Throws naming the option when out of range (every type needs at least num_classes nodes).
void check_mag_options(const MagOptions& options);
// The dataset, validated, with reverse relations; `timings`, when given, receives the phases.
HeteroDataset generate_mag(const MagOptions& options, MagTimings* timings = nullptr);
// The same without the paper features (the paper type has none), validated.
HeteroDataset generate_mag_graph(const MagOptions& options, MagTimings* timings = nullptr);
// The paper features generate_mag holds, a chunk of rows at a time (io/dataset.h), for
// save_hetero_dir to write them as they are made.
FeatureStream mag_paper_features(const MagOptions& options);

}  // namespace directgnn
