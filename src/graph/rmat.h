// R-MAT graphs (Chakrabarti et al.; the Graph500 generator) and node-classification datasets
// built on them, at any size up to papers100M's.
//
// Each of round(edge_factor * N) undirected edges picks its endpoints by descending the
// adjacency matrix's quadrants (probabilities a, b, c, 1 - a - b - c per level) from its own
// random stream, so the graph is the same for a seed whatever the thread count. N need not be
// a power of two (edges with an endpoint >= N are redrawn). The result is symmetrised, without
// duplicates or self-loops, and node ids are randomly permuted so hubs are not the low ids.
#pragma once

#include <ATen/Tensor.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <string>

#include "graph/csr_graph.h"
#include "io/dataset.h"

namespace directgnn {

struct RmatOptions {
  int64_t num_nodes = int64_t{1} << 16;
  double edge_factor = 16;  // undirected edges drawn per node (before duplicates are removed)
  double a = 0.57, b = 0.19, c = 0.19;
  uint64_t seed = 0;
};

struct RmatGraph {
  CsrGraph graph;
  // rmat_id[v]: node v's index in the R-MAT recursion, before the random relabelling. Nodes
  // whose indices share leading bits are denser connected (a > d), so classes drawn from those
  // bits are homophilous.
  at::Tensor rmat_id;  // int64 [N]
};

// Throws naming the option when the options are out of range.
void check_rmat_options(const RmatOptions& options);
// Undirected edges drawn: round(edge_factor * num_nodes).
int64_t rmat_edges_drawn(const RmatOptions& options);
RmatGraph generate_rmat(const RmatOptions& options);

struct RmatDatasetOptions {
  RmatOptions graph;
  int64_t feat_dim = 128;
  int64_t num_classes = 16;
  double signal = 0.15;  // class-mean scale against unit noise (graph/class_features.h)
  double train_fraction = 0.01, val_fraction = 0.005, test_fraction = 0.01;
  at::ScalarType feat_dtype = at::kFloat;  // float32 or float16
};

// Labels (class = leading bits of rmat_id, mapped onto num_classes) and a seeded random split
// of disjoint train / val / test node sets of the given fractions.
void add_rmat_labels_and_split(const RmatDatasetOptions& options, const at::Tensor& rmat_id,
                               Dataset& dataset);

// The [N, feat_dim] feature table of `options.feat_dtype` for nodes labelled `labels`. A
// float16 table is filled in chunks, never holding a float32 copy of the whole table.
at::Tensor make_rmat_features(const RmatDatasetOptions& options, const at::Tensor& labels);

// The whole dataset in memory (features included), for benchmarks that must not touch disk.
Dataset make_rmat_dataset(const RmatDatasetOptions& options);

}  // namespace directgnn
