// Classification metrics over a subset of nodes.
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <vector>

namespace directgnn {

// Fraction of `ids` whose arg-max logit equals the label. logits [N, C], labels int64 [N].
double accuracy(const at::Tensor& logits, const at::Tensor& labels, const at::Tensor& ids);

// Per class k < num_classes: the fraction of `ids` labelled k whose arg-max logit is k (the
// class's recall); NaN for a class no id carries.
std::vector<double> class_accuracy(const at::Tensor& logits, const at::Tensor& labels,
                                   const at::Tensor& ids, int64_t num_classes);

// Area under the ROC curve of `scores` (higher = class 1) against 0/1 `targets`, with tied
// scores given their average rank. NaN when only one class is present.
double roc_auc(const at::Tensor& scores, const at::Tensor& targets);

}  // namespace directgnn
