// Link prediction's metrics, as OGB's evaluator and scikit-learn compute them: ROC-AUC
// (train/metrics.h) and average precision for binary negatives; Hits@K against a shared
// negative set (ogbl-collab); MRR and Hits@K against each positive's own negatives
// (ogbl-citation2).
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>

namespace directgnn {

// scikit-learn's average_precision_score: the sum over score thresholds (tied scores form one
// threshold) of the precision there times the recall gained there. NaN without a positive.
double average_precision(const at::Tensor& scores, const at::Tensor& targets);

// OGB's Hits@K against shared negatives: the fraction of positives scoring strictly above the
// K-th best negative score; 1 when there are fewer than K negatives (as OGB).
double hits_at_k(const at::Tensor& pos_scores, const at::Tensor& neg_scores, int64_t k);

// Each positive's rank among its own negatives (pos [E], neg [E, K]), as OGB's evaluator:
// 1 + (optimistic + pessimistic) / 2, where tied negatives count in the pessimistic rank only.
at::Tensor ranks_among_negatives(const at::Tensor& pos_scores, const at::Tensor& neg_scores);
// The mean of 1 / rank, and the fraction of ranks <= k (per-source Hits@K).
double mean_reciprocal_rank(const at::Tensor& ranks);
double hits_of_ranks(const at::Tensor& ranks, int64_t k);

}  // namespace directgnn
