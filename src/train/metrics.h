// Classification metrics over a subset of nodes.
#pragma once

#include <ATen/Tensor.h>

namespace directgnn {

// Fraction of `ids` whose arg-max logit equals the label. logits [N, C], labels int64 [N].
double accuracy(const at::Tensor& logits, const at::Tensor& labels, const at::Tensor& ids);

// Area under the ROC curve of `scores` (higher = class 1) against 0/1 `targets`, with tied
// scores given their average rank. NaN when only one class is present.
double roc_auc(const at::Tensor& scores, const at::Tensor& targets);

}  // namespace directgnn
