// Node classification on a heterogeneous graph: each epoch shuffles the target type's training
// nodes, samples typed blocks (HeteroLoader), gathers every featured type's input rows and
// takes an Adam step on the seeds' cross-entropy. Evaluation runs layer by layer over the whole
// graph (HeteroModel::infer) every `eval_every` epochs; the test accuracy reported is the one
// at the epoch with the best validation accuracy, where the model is checkpointed.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "graph/hetero_graph.h"
#include "loader/hetero_loader.h"
#include "nn/hetero_model.h"
#include "sampling/hetero_sampler.h"

namespace directgnn {

struct HeteroTrainOptions {
  HeteroModelConfig model;  // types, relations, in_dims and classes are taken from the dataset
  HeteroSamplerOptions sampler;
  HeteroLoaderOptions loader;
  double lr = 0.01;
  double weight_decay = 0.0;
  int64_t epochs = 10;
  int64_t eval_every = 1;
  bool evaluate = true;
  uint64_t seed = 0;
  int64_t split = 0;
  std::string metrics_path;    // JSONL, one object per epoch and a final one
  std::string checkpoint_dir;  // the best-validation model (checkpoint.pt); empty: none
  bool quiet = false;          // no per-epoch lines
};

struct HeteroTrainReport {
  int64_t epochs = 0, best_epoch = -1, steps_per_epoch = 0;
  double best_val_acc = 0, test_acc = 0;
  // Means per epoch, training only: the epoch, and the loader's sample and gather time (on the
  // workers, overlapping with the step) and the time the loop waited for batches.
  double epoch_time_s = 0, sample_s = 0, gather_s = 0, wait_s = 0;
  double eval_s = 0;  // mean per evaluation
  std::string param_digest;
};

HeteroTrainReport train_hetero(const HeteroDataset& dataset, const HeteroTrainOptions& options,
                               std::ostream& log);

}  // namespace directgnn
