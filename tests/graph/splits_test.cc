#include "graph/splits.h"

#include <ATen/ATen.h>

#include "test_util.h"

namespace directgnn {
namespace {

TEST(RandomSplit, TwentyPerClassThenFiveHundredAndOneThousand) {
  const at::Tensor labels = at::arange(3000, at::kLong).remainder(5);
  const ChosenSplit s = random_split(labels, 5, 7);
  EXPECT_EQ(s.split.train.numel(), 100);
  EXPECT_EQ(s.split.val.numel(), 500);
  EXPECT_EQ(s.split.test.numel(), 1000);
  EXPECT_TRUE(
      at::bincount(labels.index_select(0, s.split.train)).equal(at::full({5}, 20, at::kLong)));
  const at::Tensor all = at::cat({s.split.train, s.split.val, s.split.test});
  EXPECT_EQ(std::get<0>(at::_unique(all)).numel(), all.numel());  // disjoint
  EXPECT_NE(s.description.find("seed 7"), std::string::npos);
  EXPECT_TRUE(random_split(labels, 5, 7).split.test.equal(s.split.test));
  EXPECT_FALSE(random_split(labels, 5, 8).split.test.equal(s.split.test));
}

TEST(RandomSplit, SkipsUnlabelledNodesAndShrinksWhenSmall) {
  at::Tensor labels = at::arange(300, at::kLong).remainder(3);
  labels.narrow(0, 0, 30).fill_(-1);
  const ChosenSplit s = random_split(labels, 3, 0);
  EXPECT_EQ(s.split.train.numel(), 60);
  EXPECT_EQ(s.split.val.numel() + s.split.test.numel(), 210);
  EXPECT_TRUE(labels.index_select(0, at::cat({s.split.train, s.split.val, s.split.test}))
                  .ge(0)
                  .all()
                  .item<bool>());
}

TEST(ChooseSplit, PicksStoredSplitsAndRejectsBadIndices) {
  Dataset ds;
  ds.source = "d";
  ds.labels = at::zeros({10}, at::kLong);
  ds.num_classes = 2;
  ds.splits.push_back(
      {at::tensor({0}, at::kLong), at::tensor({1}, at::kLong), at::tensor({2}, at::kLong)});
  ds.splits.push_back(
      {at::tensor({3}, at::kLong), at::tensor({4}, at::kLong), at::tensor({5}, at::kLong)});
  EXPECT_EQ(choose_split(ds, 1, 0).split.train.item<int64_t>(), 3);
  EXPECT_ERROR_CONTAINS(choose_split(ds, 2, 0), "split: 2 is out of range; ");
  EXPECT_ERROR_CONTAINS(choose_split(ds, 2, 0), " has 2 split(s): use 0..1");
  ds.splits.clear();
  EXPECT_ERROR_CONTAINS(choose_split(ds, 1, 0), "has no stored splits");
}

}  // namespace
}  // namespace directgnn
