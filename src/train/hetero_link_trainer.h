// Link prediction on one relation of a heterogeneous graph (`directgnn train --task link
// --target-relation S,rel,D`): the relation's edges are split at random (graph/hetero_link_split.h;
// validation and test edges leave the relation and its reverse); each epoch shuffles the
// training edges, and a batch of them with negatives goes through the heterogeneous link
// loader (loader/hetero_link_loader.h: the batch's seed edges left out of its neighbourhoods);
// the encoder (a HeteroModel whose last layer emits the two endpoint types' embeddings) and the
// decoder (nn/link_decoder.h) score each pair, and an Adam step follows on the binary
// cross-entropy (positives 1, negatives 0); learnable embeddings of featureless types are
// updated at the batch's rows. Every `eval_every` epochs the model embeds every node of both
// types layer by layer over the training graph and scores the validation and test splits;
// the test metrics reported are those at the best validation epoch (ROC-AUC for shared
// negatives, MRR for negatives per source), whose model is checkpointed (without evaluation,
// the last epoch's). The training state (train/hetero_state.h, task "hetero_link") is saved
// every `checkpoint_every` steps, on SIGINT/SIGTERM and at the end of a run with a checkpoint
// directory; a resumed run (`resume_dir`) draws the same split, shuffles and negatives from the
// seed and ends bitwise like the run that was not stopped.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "graph/hetero_link_split.h"
#include "nn/link_decoder.h"
#include "sampling/link_sampler.h"
#include "train/hetero_trainer.h"
#include "train/link_evaluate.h"
#include "train/link_trainer.h"

namespace directgnn {

struct HeteroLinkReport {
  int64_t epochs = 0, best_epoch = -1, steps_per_epoch = 0;
  int64_t train_edges = 0, val_edges = 0, test_edges = 0;
  LinkMetrics best_val, test;  // at the best validation epoch
  std::string primary_metric;  // "roc_auc" or "mrr"
  // Means per epoch (training only) and per evaluation.
  double epoch_time_s = 0, sample_s = 0, gather_s = 0, wait_s = 0, eval_s = 0;
  std::string param_digest;
};

// Trains on options.link.relation with options.link's split, negatives and decoder.
HeteroLinkReport train_hetero_links(const HeteroDataset& dataset, const TrainOptions& options,
                                    std::ostream& log);

// The split's scores by `model`, every node of the two endpoint types embedded layer by layer
// over `graph` (the message-passing graph) from `inputs` (per type: features, a table or
// undefined). Runs where the model is; the metrics are computed on the CPU.
LinkEvalResult evaluate_hetero_links(HeteroLinkModel& model, const HeteroDataset& graph,
                                     const HeteroLinkTarget& target,
                                     const std::vector<at::Tensor>& inputs, const LinkSplit& split,
                                     int64_t hits_k);

// The encoder's configuration for link prediction on `target`: the dataset's types and
// relations, the two endpoint types emitted, `hidden` wide.
HeteroModelConfig hetero_link_encoder(const HeteroDataset& dataset, const HeteroLinkTarget& target,
                                      const HeteroModelConfig& model);

}  // namespace directgnn
