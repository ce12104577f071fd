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
// "task": "link" in its description; `directgnn eval` reproduces its metrics.
//
// Batches come from the LinkLoader (loader/link_loader.h): any feature placement (disk
// included), prepared ahead by its workers. Data-parallel ranks each train on their own shard
// of every epoch's positives with their own negative stream, averaging gradients; evaluation
// shares the nodes to embed between ranks and sums them into place, so every rank scores
// every pair and the metrics are exactly those of one process. On a GPU the model trains
// there, the sampler runs on the CPU and the rows are gathered by the loader's method; the
// evaluation runs on a CPU copy of the model. The training state (train/checkpoint.h, "task":
// "link", with the link options and the progress) is saved every `checkpoint_every` steps, on a
// stop signal and at the end of a run that keeps one; a run given `resume_dir` continues it and
// ends bitwise like the run that was not stopped.
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
#include "train/run_loop.h"
#include "train/trainer.h"

namespace directgnn {

struct LinkTrainReport {
  int64_t epochs = 0, best_epoch = -1, steps_per_epoch = 0;
  LinkMetrics best_val, test;  // at the best validation epoch
  // Per epoch: sample_s and gather_s are the loader's (overlapping training when it prefetches),
  // wait_s what the training loop waited for its batches.
  double epoch_time_s = 0, sample_s = 0, gather_s = 0, compute_s = 0, wait_s = 0, eval_s = 0;
  std::string split_description, primary_metric, param_digest, device, mode;

  nlohmann::json to_json() const;
};

// The validation metric that picks the best epoch for a negatives layout: "mrr" or "roc_auc".
std::string primary_link_metric(LinkNegatives layout);

// Trains with options.link's decoder, negatives and evaluation.
LinkTrainReport train_links(const Dataset& dataset, const TrainOptions& options, std::ostream& out);

// The message-passing graphs of a split's scores: validation over the training edges (a
// directed graph symmetrised, sampling/link_sampler.h), and with use_val_edges a test graph
// that adds the validation edges (none otherwise: the test split uses `graph` too).
struct LinkGraphs {
  CsrGraph graph;
  std::optional<CsrGraph> test_graph;
};
LinkGraphs link_graphs(const ChosenLinkSplit& split, bool directed, bool use_val_edges);

// A split's metrics as training reports them, each split scored over its graph (a sharded
// table's rows from `exchange`).
LinkEvalResult evaluate_link_model(LinkModel& model, const at::Tensor& features,
                                   const LinkSplit& split, const LinkGraphs& graphs, int64_t hits_k,
                                   ProcessGroup* group = nullptr,
                                   FeatureExchange* exchange = nullptr);

// A link checkpoint (its directory and description) made ready to score or embed: the options,
// the model with its parameters, the split rebuilt from the dataset and the seed, and the
// graphs. Throws naming the checkpoint when the dataset's features do not fit the model.
struct LinkCheckpoint {
  LinkOptions link;
  std::unique_ptr<LinkModel> model;
  ChosenLinkSplit split;
  LinkGraphs graphs;
};
LinkCheckpoint load_link_checkpoint(const std::string& dir, const nlohmann::json& meta,
                                    const Dataset& ds);
// The validation metric's value for a layout (MRR per source, ROC-AUC shared).
double primary_value(const LinkMetrics& metrics, LinkNegatives layout);
// The metrics as JSON (those a layout does not give are left out), and back (missing: NaN).
nlohmann::json metrics_json(const LinkMetrics& metrics);
LinkMetrics metrics_from_json(const nlohmann::json& json);
// " | Val AUC 0.9012 | Val AP 0.8977 | Val Hits@50 0.4120": `split`'s metrics that the layout
// gives, for the epoch line.
std::string link_metrics_text(const char* split, const LinkMetrics& metrics, int64_t hits_k);
// The rows of `rows` in the seeded order of `seed` (an epoch's shuffled positive edges).
at::Tensor shuffled_rows(const at::Tensor& rows, uint64_t seed);
// An evaluation's validation and test metrics as the loop takes them: the value that picks the
// best epoch is the layout's primary metric on the validation split.
Evaluation link_evaluation(const LinkEvalResult& r, LinkNegatives layout, int64_t hits_k);

}  // namespace directgnn
