#include "train/link_metrics.h"

#include <ATen/ATen.h>

#include <cmath>

#include "test_util.h"
#include "train/link_trainer.h"
#include "train/metrics.h"

namespace directgnn {
namespace {

at::Tensor t(std::vector<double> v) { return at::tensor(v, at::kDouble); }
at::Tensor labels(std::vector<int64_t> v) { return at::tensor(v, at::kLong); }

TEST(AveragePrecision, HandCountedWithAndWithoutTies) {
  // Ranked 1 0 1 0: precision 1 at recall 1/2, 2/3 at recall 1.
  EXPECT_NEAR(average_precision(t({0.9, 0.8, 0.7, 0.6}), labels({1, 0, 1, 0})), 0.5 + 0.5 * 2 / 3.0,
              1e-12);
  // A tie of a positive and a negative is one threshold: precision 1/2 there.
  EXPECT_NEAR(average_precision(t({0.5, 0.5, 0.2}), labels({1, 0, 1})), 0.25 + 0.5 * 2 / 3.0,
              1e-12);
  EXPECT_DOUBLE_EQ(average_precision(t({3, 2, 1}), labels({1, 1, 0})), 1.0);
  EXPECT_TRUE(std::isnan(average_precision(t({3, 2}), labels({0, 0}))));
  // Perfectly wrong ranking: positives last.
  EXPECT_NEAR(average_precision(t({4, 3, 2, 1}), labels({0, 0, 1, 1})), 0.5 * 1 / 3.0 + 0.5 * 0.5,
              1e-12);
}

TEST(HitsAtK, CountsPositivesStrictlyAboveTheKthNegative) {
  const at::Tensor neg = t({4, 2, 0, 3});
  EXPECT_NEAR(hits_at_k(t({5, 3, 1}), neg, 2), 1 / 3.0, 1e-12);  // K-th best negative: 3
  EXPECT_NEAR(hits_at_k(t({5, 3, 1}), neg, 3), 2 / 3.0, 1e-12);  // 2
  EXPECT_DOUBLE_EQ(hits_at_k(t({0}), neg, 5), 1.0);              // fewer negatives than K
  EXPECT_ERROR_CONTAINS(hits_at_k(t({0}), neg, 0), "at least 1");
}

TEST(Mrr, TiedNegativesCountHalfAsOgbRanksThem) {
  const at::Tensor ranks =
      ranks_among_negatives(t({3, 10}), t({5, 3, 1, 3, 1, 2, 3, 4}).view({2, 4}));
  // Row 0: one negative above, two tied: rank 1 + (1 + 3) / 2 = 3. Row 1: first.
  EXPECT_TRUE(ranks.equal(t({3, 1})));
  EXPECT_NEAR(mean_reciprocal_rank(ranks), (1 / 3.0 + 1) / 2, 1e-12);
  EXPECT_DOUBLE_EQ(hits_of_ranks(ranks, 1), 0.5);
  EXPECT_DOUBLE_EQ(hits_of_ranks(ranks, 3), 1.0);
}

TEST(RocAuc, ScoresPositivesAgainstNegatives) {
  // 2 positives, 2 negatives: pairs (pos > neg): 5>4, 5>1, 2>1 of 4 -> 0.75.
  EXPECT_DOUBLE_EQ(roc_auc(t({5, 2, 4, 1}), labels({1, 1, 0, 0})), 0.75);
}

// A training state keeps the best metrics as JSON: every value comes back bitwise, and those
// a layout does not give (NaN, left out of the JSON) come back NaN.
TEST(LinkMetricsJson, RoundTripsValuesBitwiseAndMissingOnesAsNan) {
  LinkMetrics m;
  m.roc_auc = 0.1 + 0.2;
  m.ap = 1.0 / 3.0;
  const nlohmann::json j = nlohmann::json::parse(metrics_json(m).dump());
  EXPECT_FALSE(j.contains("mrr"));
  const LinkMetrics back = metrics_from_json(j);
  EXPECT_EQ(back.roc_auc, m.roc_auc);
  EXPECT_EQ(back.ap, m.ap);
  EXPECT_TRUE(std::isnan(back.hits));
  EXPECT_TRUE(std::isnan(back.mrr));
}

}  // namespace
}  // namespace directgnn
