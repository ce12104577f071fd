#include "feature/feature_store.h"

#include <ATen/ATen.h>

#include "test_util.h"

namespace directgnn {
namespace {

class GatherMatchesIndexSelect
    : public ::testing::TestWithParam<std::tuple<at::ScalarType, at::ScalarType, int64_t>> {};

TEST_P(GatherMatchesIndexSelect, OnFreshRandomIds) {
  const auto [dtype, id_type, width] = GetParam();
  const at::Tensor table = at::randn({1000, width}).to(dtype);
  const FeatureStore store(table);
  const at::Tensor ids = at::randint(0, 1000, {777}, at::kLong).to(id_type);  // with duplicates
  EXPECT_TRUE(store.gather(ids).equal(table.index_select(0, ids.to(at::kLong))));
  EXPECT_EQ(store.gather(at::empty({0}, id_type)).sizes(), (std::vector<int64_t>{0, width}));
}

INSTANTIATE_TEST_SUITE_P(DtypesIdsWidths, GatherMatchesIndexSelect,
                         ::testing::Combine(::testing::Values(at::kFloat, at::kHalf, at::kBFloat16),
                                            ::testing::Values(at::kInt, at::kLong),
                                            ::testing::Values(1, 3, 100, 513)));

TEST(FeatureStore, OutOfRangeIdsAreRefusedBeforeAnyRead) {
  const FeatureStore store(at::zeros({10, 4}));
  EXPECT_ERROR_CONTAINS(store.gather(at::tensor({1, 2, 10}, at::kLong)),
                        "ids[2] = 10 is out of range");
  EXPECT_ERROR_CONTAINS(store.gather(at::tensor({-1}, at::kInt)), "ids[0] = -1");
  EXPECT_ERROR_CONTAINS(store.gather(at::tensor({0.5})), "use int32 or int64");
  EXPECT_ERROR_CONTAINS(parse_placement("cuda-magic"), "not a placement");
}

}  // namespace
}  // namespace directgnn
