// The built-in synthetic dataset: a planted-partition (stochastic block) graph whose node
// features are a class-dependent mean plus Gaussian noise. A node's own features identify
// its class only weakly; its neighbours (mostly of the same class) make it clear, so a GNN
// beats a feature-only model and the accuracy it reaches means something.
#pragma once

#include <cstdint>

#include "io/dataset.h"

namespace directgnn {

struct PlantedPartitionOptions {
  int64_t num_nodes = 10000;
  int64_t num_classes = 8;
  double avg_degree = 10.0;  // directed edges per node after symmetrisation
  double homophily = 0.6;    // fraction of edges drawn inside the node's class
  int64_t feat_dim = 32;
  double signal = 0.15;  // scale of the class means relative to unit noise
  double train_fraction = 0.5, val_fraction = 0.25;  // the rest is test
  uint64_t seed = 0;
};

// Deterministic for a seed, whatever the thread count.
Dataset make_planted_partition(const PlantedPartitionOptions& options);

}  // namespace directgnn
