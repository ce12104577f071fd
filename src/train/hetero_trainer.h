// Node classification on a heterogeneous graph: each epoch shuffles the target type's training
// nodes, samples typed blocks (HeteroLoader), gathers every featured type's input rows and
// takes an Adam step on the seeds' cross-entropy. Evaluation runs layer by layer over the whole
// graph (HeteroModel::infer) every `eval_every` epochs; the test accuracy reported is the one
// at the epoch with the best validation accuracy, where the model is checkpointed.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "feature/embedding_table.h"
#include "graph/hetero_graph.h"
#include "loader/hetero_loader.h"
#include "nn/hetero_model.h"
#include "sampling/hetero_sampler.h"
#include "train/trainer.h"

namespace directgnn {

struct HeteroTrainReport {
  int64_t epochs = 0, best_epoch = -1, steps_per_epoch = 0;
  double best_val_acc = 0, test_acc = 0;
  // Means per epoch, training only: the epoch, and the loader's sample and gather time (on the
  // workers, overlapping with the step) and the time the loop waited for batches.
  double epoch_time_s = 0, sample_s = 0, gather_s = 0, wait_s = 0;
  double eval_s = 0;  // mean per evaluation
  std::string param_digest;
};

// Trains with options.hetero's model and embeddings and options.loader's fan-outs (those of
// options.loader.relation_fanouts per relation). On a GPU (options.loader.device) the loader
// still samples and gathers on the CPU and each batch is copied over (the conventional path);
// embedding rows go over and their gradients come back to the host tables; evaluation runs on
// a CPU copy of the model.
HeteroTrainReport train_hetero(const HeteroDataset& dataset, const TrainOptions& options,
                               std::ostream& log);

// Shared with heterogeneous link prediction (train/hetero_link_trainer.h):
// The model's configuration for `dataset` from the run's options.
HeteroModelConfig hetero_model_config(const HeteroDataset& dataset, const TrainOptions& options);
// The sampler's fan-outs for `dataset` from the run's options.
HeteroSamplerOptions hetero_fanouts(const HeteroDataset& dataset, const TrainOptions& options);
// A learnable table per featureless type when options.dim > 0 (null for the others), seeded from
// `seed`; in_dims[t] becomes the table's width.
std::vector<std::unique_ptr<EmbeddingTable>> make_embedding_tables(const HeteroDataset& dataset,
                                                                   const EmbeddingOptions& options,
                                                                   uint64_t seed,
                                                                   std::vector<int64_t>& in_dims);
// x[t] for each table: its rows of input_nodes[t], read now, on `device`, as leaves whose
// gradient update_embedding_rows gives back to the table.
void read_embedding_rows(const std::vector<std::unique_ptr<EmbeddingTable>>& tables,
                         const std::vector<at::Tensor>& input_nodes, const c10::Device& device,
                         std::vector<at::Tensor>& x);
void update_embedding_rows(std::vector<std::unique_ptr<EmbeddingTable>>& tables,
                           const std::vector<at::Tensor>& input_nodes,
                           const std::vector<at::Tensor>& x);
// The blocks' tensors and the inputs moved to `device` (nothing on the CPU).
void hetero_batch_to_device(std::vector<HeteroBlock>& blocks, std::vector<at::Tensor>& x,
                            const c10::Device& device);
// Per type: the evaluation's input, its table's weight where it has one, else its features.
std::vector<at::Tensor> hetero_inputs(const HeteroDataset& dataset,
                                      const std::vector<std::unique_ptr<EmbeddingTable>>& tables);

}  // namespace directgnn
