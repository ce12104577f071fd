// Link prediction's evaluation: every needed node's final-layer embedding by full-neighbourhood,
// layer-wise inference (GnnModel::infer_nodes), then the split's positives and fixed negatives
// scored by the decoder in chunks, and the metrics their layout gives (train/link_metrics.h):
// shared negatives: ROC-AUC, average precision and Hits@K over positives and negatives;
// negatives per source: MRR and Hits@K of each positive's rank among its own.
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <limits>

#include "dist/feature_exchange.h"
#include "dist/process_group.h"
#include "graph/csr_graph.h"
#include "graph/link_split.h"
#include "nn/link_decoder.h"
#include "nn/model.h"

namespace directgnn {

// One split's metrics; NaN where its negatives' layout gives none.
struct LinkMetrics {
  double roc_auc = std::numeric_limits<double>::quiet_NaN();
  double ap = std::numeric_limits<double>::quiet_NaN();
  double hits = std::numeric_limits<double>::quiet_NaN();  // Hits@K
  double mrr = std::numeric_limits<double>::quiet_NaN();
};

// Metrics of positive scores [E] against negative scores ([M] shared, or [E, K] per source).
LinkMetrics link_metrics(const at::Tensor& pos, const at::Tensor& neg, LinkNegatives layout,
                         int64_t hits_k);

struct LinkEvalOptions {
  int64_t hits_k = 50;    // ogbl-collab's K
  int64_t chunk = 65536;  // pairs scored (and nodes inferred) at a time
  bool val = true;        // score the validation split
  bool test = true;       // score the test split
  // Data-parallel ranks: each embeds an equal share of the nodes, summed into place across
  // ranks, then every rank scores every pair (the same metrics as one process).
  ProcessGroup* group = nullptr;
  // A feature table sharded over the group's ranks: layer 0's input rows come from it, one
  // exchange per rank (`features` is then not read).
  FeatureExchange* exchange = nullptr;
};

struct LinkEvalResult {
  LinkMetrics val, test;
};

// `graph` is the message-passing graph the embeddings are computed on (the training edges;
// with validation edges added for test scores where a run allows it).
LinkEvalResult evaluate_links(GnnModel& model, LinkDecoder& decoder, const CsrGraph& graph,
                              const at::Tensor& features, const LinkSplit& split,
                              const LinkEvalOptions& options);

}  // namespace directgnn
