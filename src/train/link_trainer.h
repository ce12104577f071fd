// Link prediction training (`directgnn train --task link`): each epoch shuffles the training
// positives; a batch of them, with negatives, goes through the link sampler
// (sampling/link_sampler.h); the encoder (nn/model.h, its output width the embedding's)
// embeds the batch's endpoints from their sampled blocks, the decoder (nn/link_decoder.h)
// scores each pair, and an Adam step follows on the binary cross-entropy of the scores
// (positives 1, negatives 0). Every `eval_every` epochs, evaluate_links (train/link_evaluate.h)
// scores the validation split (and the test split) with full neighbourhoods; the test metrics
// reported are those of the epoch with the best validation metric: MRR for negatives per
// source, ROC-AUC for shared negatives.
//
// The best-validation model (encoder and decoder) goes to the checkpoint directory, with
// "task": "link" in its description; `directgnn eval` reproduces its metrics. So far on the
// CPU in one process, with the feature table in memory: a GPU device, data-parallel ranks,
// the training state and resume are refused by name (issue 31 lists them).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>

#include "graph/splits.h"
#include "io/dataset.h"
#include "nn/link_decoder.h"
#include "sampling/link_sampler.h"
#include "train/link_evaluate.h"
#include "train/trainer.h"

namespace directgnn {

struct LinkTrainOptions {
  DecoderKind decoder = DecoderKind::kDot;
  int64_t decoder_layers = 2;  // mlp: linear layers
  LinkSamplerOptions sampling;
  int64_t hits_k = 50;
  // Test scores pass messages over the training and validation edges (ogbl-collab's rule
  // allows it); validation scores always over the training edges only.
  bool use_val_edges = false;
};

struct LinkTrainReport {
  int64_t epochs = 0, best_epoch = -1, steps_per_epoch = 0;
  LinkMetrics best_val, test;  // at the best validation epoch
  double epoch_time_s = 0, sample_s = 0, gather_s = 0, compute_s = 0, eval_s = 0;
  std::string split_description, primary_metric, param_digest;

  nlohmann::json to_json() const;
};

// The validation metric that picks the best epoch for a negatives layout: "mrr" or "roc_auc".
std::string primary_link_metric(LinkNegatives layout);

LinkTrainReport train_links(const Dataset& dataset, const TrainOptions& options,
                            const LinkTrainOptions& link, std::ostream& out);

// The message-passing graphs of a split's scores: validation over the training edges (a
// directed graph symmetrised, sampling/link_sampler.h), and with use_val_edges a test graph
// that adds the validation edges (none otherwise: the test split uses `graph` too).
struct LinkGraphs {
  CsrGraph graph;
  std::optional<CsrGraph> test_graph;
};
LinkGraphs link_graphs(const ChosenLinkSplit& split, bool directed, bool use_val_edges);

// A split's metrics as training reports them, each split scored over its graph.
LinkEvalResult evaluate_link_model(LinkModel& model, const at::Tensor& features,
                                   const LinkSplit& split, const LinkGraphs& graphs,
                                   int64_t hits_k);

// A link checkpoint (its directory and description) made ready to score or embed: the options,
// the model with its parameters, the split rebuilt from the dataset and the seed, and the
// graphs. Throws naming the checkpoint when the dataset's features do not fit the model.
struct LinkCheckpoint {
  LinkTrainOptions link;
  std::unique_ptr<LinkModel> model;
  ChosenLinkSplit split;
  LinkGraphs graphs;
};
LinkCheckpoint load_link_checkpoint(const std::string& dir, const nlohmann::json& meta,
                                    const Dataset& ds);
// The validation metric's value for a layout (MRR per source, ROC-AUC shared).
double primary_value(const LinkMetrics& metrics, LinkNegatives layout);
nlohmann::json metrics_json(const LinkMetrics& metrics);
// The link options as a checkpoint records them, and back (throws naming `where`).
nlohmann::json link_options_json(const LinkTrainOptions& options);
LinkTrainOptions link_options_from_json(const nlohmann::json& json, const std::string& where);

}  // namespace directgnn
