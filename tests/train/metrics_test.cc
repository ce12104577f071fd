#include "train/metrics.h"

#include <ATen/ATen.h>

#include <cmath>

#include "test_util.h"

namespace directgnn {
namespace {

TEST(Accuracy, CountsArgMaxHitsOnTheSubset) {
  const at::Tensor logits = at::tensor({1.0f, 0.0f, 0.0f, 1.0f, 1.0f, 0.0f}).view({3, 2});
  const at::Tensor labels = at::tensor({0, 1, 1}, at::kLong);
  EXPECT_DOUBLE_EQ(accuracy(logits, labels, at::tensor({0, 1, 2}, at::kLong)), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(accuracy(logits, labels, at::tensor({2}, at::kLong)), 0.0);
}

TEST(ClassAccuracy, IsEachClassRecallOnTheSubsetAndNanForAnAbsentClass) {
  // Rows predict 0, 1, 0, 1, 1; labels 0, 1, 1, 1, 0; class 2 has no node.
  const at::Tensor logits =
      at::tensor({2.f, 0.f, 0.f, 0.f, 2.f, 0.f, 2.f, 0.f, 0.f, 0.f, 2.f, 0.f, 0.f, 2.f, 0.f})
          .view({5, 3});
  const at::Tensor labels = at::tensor({0, 1, 1, 1, 0}, at::kLong);
  const std::vector<double> all =
      class_accuracy(logits, labels, at::tensor({0, 1, 2, 3, 4}, at::kLong), 3);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_DOUBLE_EQ(all[0], 0.5);        // rows 0 (hit) and 4 (miss)
  EXPECT_DOUBLE_EQ(all[1], 2.0 / 3.0);  // rows 1, 3 hit; row 2 misses
  EXPECT_TRUE(std::isnan(all[2]));
  const std::vector<double> some = class_accuracy(logits, labels, at::tensor({2, 4}, at::kLong), 3);
  EXPECT_DOUBLE_EQ(some[0], 0.0);
  EXPECT_DOUBLE_EQ(some[1], 0.0);
}

TEST(RocAuc, HandCountedCasesWithTies) {
  // Perfect ranking, reversed ranking, and a hand-counted case with one tie:
  // scores 0.1(0) 0.4(1) 0.4(0) 0.8(1): pairs (pos, neg) = 4, wins 3 + half a tie = 3.5.
  EXPECT_DOUBLE_EQ(roc_auc(at::tensor({0.1, 0.2, 0.8, 0.9}), at::tensor({0, 0, 1, 1})), 1.0);
  EXPECT_DOUBLE_EQ(roc_auc(at::tensor({0.9, 0.8, 0.2, 0.1}), at::tensor({0, 0, 1, 1})), 0.0);
  EXPECT_DOUBLE_EQ(roc_auc(at::tensor({0.1, 0.4, 0.4, 0.8}), at::tensor({0, 1, 0, 1})), 3.5 / 4);
  EXPECT_TRUE(std::isnan(roc_auc(at::tensor({0.1, 0.4}), at::tensor({1, 1}))));
}

}  // namespace
}  // namespace directgnn
