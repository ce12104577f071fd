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

#include <fcntl.h>
#include <unistd.h>

#include "core/resources.h"
#include "io/npy.h"

namespace directgnn {
namespace {

// A memory-mapped table larger than RAM (a sparse file: no disk or memory is used): host
// placement maps it fine; pinning it is refused up front with the sizes and what to do.
TEST(FeatureStore, PinningATableLargerThanRamFailsEarlyWithTheSizes) {
  const HostMemory mem = host_memory();
  ASSERT_GT(mem.total, 0);
  const int64_t dim = 128;
  const int64_t rows = (mem.total + (int64_t{8} << 30)) / (dim * 4);
  testing::TempDirectory dir;
  const std::string path = dir.file("huge.npy");
  const std::string header = npy_header_for(at::kFloat, {rows, dim});
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, header.data(), header.size()), static_cast<ssize_t>(header.size()));
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(header.size() + rows * dim * 4)), 0);
  close(fd);
  const at::Tensor table = load_npy(path);  // mapped, larger than RAM + swap
  ASSERT_EQ(table.size(0), rows);
  const FeatureStore host(table, Placement::kHost);
  EXPECT_TRUE(host.gather(at::tensor({int64_t{0}, rows - 1})).eq(0).all().item<bool>());
  EXPECT_ERROR_CONTAINS(FeatureStore(table, Placement::kPinned),
                        "features: pinned: the feature table is " + gib_text(rows * dim * 4));
  EXPECT_ERROR_CONTAINS(FeatureStore(table, Placement::kPinned), "set features to host");
}

}  // namespace
}  // namespace directgnn
