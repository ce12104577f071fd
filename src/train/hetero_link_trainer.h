// Link prediction on one relation of a heterogeneous graph (`directgnn train --task link
// --target-relation S,rel,D`) as a kind of run on the one loop (train/run_loop.h): the
// relation's edges are split at random (graph/hetero_link_split.h; validation and test edges
// leave the relation and its reverse); each epoch shuffles the training edges (each rank takes
// its equal shard), and a batch of them with negatives goes through the heterogeneous link
// loader (loader/hetero_link_loader.h: the batch's seed edges left out of its neighbourhoods);
// the encoder (a HeteroModel whose last layer emits the two endpoint types' embeddings) and the
// decoder (nn/link_decoder.h) score each pair, on the binary cross-entropy (positives 1,
// negatives 0); learnable tables of featureless types are updated at the batch's rows. Every
// `eval_every` epochs the model embeds every node of both types layer by layer over the
// training graph and scores the validation and test splits (ROC-AUC for shared negatives, MRR
// for negatives per source).
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include "graph/hetero_link_split.h"
#include "nn/link_decoder.h"
#include "train/hetero_trainer.h"
#include "train/link_evaluate.h"
#include "train/link_trainer.h"

namespace directgnn {

// Trains on options.link.relation with options.link's split, negatives and decoder.
RunReport train_hetero_links(const HeteroDataset& dataset, const TrainOptions& options,
                             std::ostream& out);

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
