// Every GPU gather method against the CPU oracle, on fresh random ids: row widths from 1 to
// 4099 bytes of 1-, 2- and 4-byte elements, tables (pinned or on the GPU) starting 0, 4, 8 and
// 64 bytes past a 128-byte boundary, int32 and int64 ids with duplicates, empty batches, and
// out-of-range ids refused before any kernel runs. Skipped, saying why, where no GPU is present;
// the CPU-only behaviour is tested below.
#include "feature/gpu_gather.h"

#include <ATen/ATen.h>

#include <cstdlib>
#include <string>

#include "feature/feature_store.h"
#include "gpu/runtime.h"
#include "io/npy.h"
#include "test_util.h"

namespace directgnn {
namespace {

#define REQUIRE_GPU()                                                             \
  if (!gpu::available()) {                                                        \
    GTEST_SKIP() << "no GPU here (" << gpu::unavailable_reason() << "); skipped"; \
  }

struct Case {
  Placement placement;
  GatherMethod method;
  bool sort_ids;
  int64_t max_threads;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << placement_name(c.placement) << "/" << gather_method_name(c.method)
      << (c.sort_ids ? "/sorted" : "") << (c.max_threads > 0 ? "/capped" : "");
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name =
      placement_name(info.param.placement) + "_" + gather_method_name(info.param.method) +
      (info.param.sort_ids ? "_sorted" : "") + (info.param.max_threads > 0 ? "_capped" : "");
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  return name;
}

class GpuGather : public ::testing::TestWithParam<Case> {};

// DIRECTGNN_GATHER_TEST_GRID=small (bench/gpu/run.sh sets it under compute-sanitizer, where the
// full grid's ~20k gathers take too long): row widths of whole 4-byte elements on both sides of
// the 16-byte, 128-byte and 512-byte boundaries, base offsets 4, 8 and 64, 2- and 4-byte elements.
bool small_grid() {
  const char* grid = std::getenv("DIRECTGNN_GATHER_TEST_GRID");
  return grid != nullptr && std::string(grid) == "small";
}

std::vector<int64_t> widths() {
  if (small_grid()) return {4, 8, 12, 16, 20, 124, 128, 132, 400, 508, 512, 516, 2408, 4096};
  std::vector<int64_t> w;
  for (int64_t i = 1; i <= 40; ++i) w.push_back(i);
  for (int64_t i : {63,  64,  65,  100,  127,  128,  129,  255,  256,  257,  400,
                    508, 512, 513, 1000, 1024, 2047, 2048, 2408, 4095, 4096, 4099}) {
    w.push_back(i);
  }
  return w;
}

// The same bytes viewed as a table of 1-, 2- or 4-byte elements, `width` bytes per row.
at::Tensor table_view(const at::Tensor& buffer, int64_t start, int64_t rows, int64_t width,
                      at::ScalarType dtype) {
  const int64_t elem = static_cast<int64_t>(c10::elementSize(dtype));
  return buffer.narrow(0, start, rows * width).view(dtype).view({rows, width / elem});
}

TEST_P(GpuGather, MatchesTheCpuOracle) {
  REQUIRE_GPU();
  const Case c = GetParam();
  const c10::Device cuda(c10::kCUDA, 0);
  GatherOptions options;
  options.method = c.method;
  options.sort_ids = c.sort_ids;
  options.max_threads = c.max_threads;
  const int64_t rows = 301;
  // One byte buffer, pinned once as a whole (or copied to the GPU once); each case's table is
  // a view of it that starts `offset` bytes past a 128-byte boundary, so device tables are
  // tested at offsets too. Widths that allow it are also viewed as 2- and 4-byte elements:
  // the naive kernel moves whole elements.
  const int64_t buffer_bytes = rows * 4099 + 256;
  const at::Tensor buffer = at::randint(0, 256, {buffer_bytes}, at::kByte);
  const at::Tensor source = c.placement == Placement::kDevice ? buffer.to(cuda) : buffer;
  const FeatureStore whole(source.view({1, buffer_bytes}), c.placement);
  const int64_t lead =
      (128 - static_cast<int64_t>(reinterpret_cast<uint64_t>(source.data_ptr()) % 128)) % 128;
  const std::vector<int64_t> offsets =
      small_grid() ? std::vector<int64_t>{4, 8, 64} : std::vector<int64_t>{0, 4, 8, 64};
  const std::vector<at::ScalarType> dtypes =
      small_grid() ? std::vector<at::ScalarType>{at::kShort, at::kInt}
                   : std::vector<at::ScalarType>{at::kByte, at::kShort, at::kInt};
  for (const int64_t offset : offsets) {
    for (const int64_t width : widths()) {
      for (const at::ScalarType dtype : dtypes) {
        if (width % static_cast<int64_t>(c10::elementSize(dtype)) != 0) continue;
        const at::Tensor table = table_view(source, lead + offset, rows, width, dtype);
        const at::Tensor host = table_view(buffer, lead + offset, rows, width, dtype);
        const FeatureStore store(table, c.placement);
        for (const at::ScalarType id_type : {at::kInt, at::kLong}) {
          const at::Tensor ids = at::randint(0, rows, {997}, at::kLong).to(id_type);
          const at::Tensor expected = host.index_select(0, ids.to(at::kLong));
          const at::Tensor got = store.gather(ids, cuda, options);
          ASSERT_TRUE(got.device().is_cuda());
          ASSERT_TRUE(got.cpu().equal(expected))
              << "width " << width << ", offset " << offset << ", " << dtype << ", ids " << id_type;
          ASSERT_TRUE(store.gather(ids.to(cuda), cuda, options).cpu().equal(expected))
              << "ids on the GPU, width " << width << ", offset " << offset << ", " << dtype;
        }
      }
    }
  }
}

TEST_P(GpuGather, FloatTablesOfEveryDtype) {
  REQUIRE_GPU();
  const Case c = GetParam();
  GatherOptions options{c.method, c.sort_ids, c.max_threads};
  for (const at::ScalarType dtype : {at::kFloat, at::kHalf, at::kBFloat16}) {
    const at::Tensor table = at::randn({5000, 100}).to(dtype);
    const FeatureStore store(table, c.placement);
    const at::Tensor ids = at::randint(0, 5000, {20000}, at::kLong);
    const at::Tensor got = store.gather(ids, c10::Device(c10::kCUDA, 0), options);
    EXPECT_EQ(got.scalar_type(), dtype);
    EXPECT_TRUE(got.cpu().equal(table.index_select(0, ids))) << dtype;
  }
}

TEST_P(GpuGather, EmptyAndOutOfRangeIds) {
  REQUIRE_GPU();
  const Case c = GetParam();
  GatherOptions options{c.method, c.sort_ids, c.max_threads};
  const c10::Device cuda(c10::kCUDA, 0);
  const FeatureStore store(at::randn({10, 7}), c.placement);
  const at::Tensor empty = store.gather(at::empty({0}, at::kInt), cuda, options);
  EXPECT_EQ(empty.sizes(), (std::vector<int64_t>{0, 7}));
  EXPECT_TRUE(empty.device().is_cuda());
  EXPECT_ERROR_CONTAINS(store.gather(at::tensor({1, 2, 10}, at::kLong), cuda, options),
                        "ids[2] = 10 is out of range for a table of 10 rows");
  EXPECT_ERROR_CONTAINS(store.gather(at::tensor({-3}, at::kInt).to(cuda), cuda, options),
                        "ids[0] = -3 is out of range");
}

INSTANTIATE_TEST_SUITE_P(
    Methods, GpuGather,
    ::testing::Values(Case{Placement::kHost, GatherMethod::kCpuCopy, false, 0},
                      Case{Placement::kPinned, GatherMethod::kCpuCopy, false, 0},
                      Case{Placement::kPinned, GatherMethod::kZeroCopy, false, 0},
                      Case{Placement::kPinned, GatherMethod::kZeroCopy, true, 0},
                      Case{Placement::kPinned, GatherMethod::kAligned, false, 0},
                      Case{Placement::kPinned, GatherMethod::kAligned, true, 0},
                      Case{Placement::kPinned, GatherMethod::kAligned, false, 512},
                      Case{Placement::kDevice, GatherMethod::kZeroCopy, false, 0},
                      Case{Placement::kDevice, GatherMethod::kAligned, false, 0},
                      Case{Placement::kDevice, GatherMethod::kAligned, true, 0}),
    case_name);

TEST(GpuGatherRules, MethodsThatDoNotFitThePlacementAreRefused) {
  REQUIRE_GPU();
  const c10::Device cuda(c10::kCUDA, 0);
  const at::Tensor ids = at::tensor({0, 1}, at::kLong);
  const FeatureStore host(at::randn({4, 4}));
  EXPECT_ERROR_CONTAINS(host.gather(ids, cuda, {GatherMethod::kAligned}),
                        "has GPU threads read the table, which needs it pinned");
  const FeatureStore device(at::randn({4, 4}), Placement::kDevice);
  EXPECT_ERROR_CONTAINS(device.gather(ids, cuda, {GatherMethod::kCpuCopy}),
                        "the table is on the GPU");
  EXPECT_TRUE(device.gather(ids).equal(device.table().index_select(0, ids)));
}

TEST(GpuGatherRules, PinsAMemoryMappedNpyInPlace) {
  REQUIRE_GPU();
  testing::TempDirectory dir;
  const at::Tensor table = at::randn({3000, 100});
  save_npy(dir.file("features.npy"), table);
  const at::Tensor mapped = load_npy(dir.file("features.npy"));
  const void* before = mapped.data_ptr();
  const FeatureStore store(mapped, Placement::kPinned);
  EXPECT_EQ(store.table().data_ptr(), before) << "pinning must not copy the table";
  const at::Tensor ids = at::randint(0, 3000, {5000}, at::kLong);
  EXPECT_TRUE(store.gather(ids, c10::Device(c10::kCUDA, 0), {GatherMethod::kAligned})
                  .cpu()
                  .equal(table.index_select(0, ids)));
}

TEST(GpuGatherRules, KeepsATableAlreadyOnTheGpuInPlace) {
  REQUIRE_GPU();
  const c10::Device cuda(c10::kCUDA, 0);
  const at::Tensor table = at::randn({1000, 33}).to(cuda);
  const FeatureStore store(table, Placement::kDevice);
  EXPECT_EQ(store.table().data_ptr(), table.data_ptr()) << "a GPU table must not be copied";
  const at::Tensor ids = at::randint(0, 1000, {4000}, at::kLong);
  const at::Tensor expected = table.cpu().index_select(0, ids);
  EXPECT_TRUE(store.gather(ids, cuda).cpu().equal(expected));
  EXPECT_TRUE(store.gather(ids).equal(expected));  // onto the CPU
  EXPECT_ERROR_CONTAINS(FeatureStore(table, Placement::kPinned),
                        "a table already on a GPU can only be placed 'device'");
}

TEST(GpuGatherRules, CpuCopyRunsAheadOfItsCopies) {
  REQUIRE_GPU();
  // Many back-to-back cpu-copy gathers reuse the two staging buffers; every result must
  // still hold its own rows once the stream drains.
  const at::Tensor table = at::randn({20000, 64});
  const FeatureStore store(table, Placement::kPinned);
  std::vector<at::Tensor> ids, got;
  for (int i = 0; i < 12; ++i) {
    ids.push_back(at::randint(0, 20000, {5000 + 1000 * i}, at::kLong));
    got.push_back(store.gather(ids.back(), c10::Device(c10::kCUDA, 0), {GatherMethod::kCpuCopy}));
  }
  gpu::synchronize(0);
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_TRUE(got[i].cpu().equal(table.index_select(0, ids[i]))) << "gather " << i;
  }
}

TEST(GpuGatherRules, WithoutAGpuEveryGpuPathSaysWhy) {
  if (gpu::available()) GTEST_SKIP() << "a GPU is present; the GPU tests above run instead";
  EXPECT_ERROR_CONTAINS(FeatureStore(at::zeros({4, 4}), Placement::kPinned),
                        "features: pinned needs a GPU");
  EXPECT_ERROR_CONTAINS(FeatureStore(at::zeros({4, 4}), Placement::kDevice),
                        "features: device needs a GPU");
  const FeatureStore host(at::zeros({4, 4}));
  EXPECT_ERROR_CONTAINS(host.gather(at::tensor({0}, at::kLong), c10::Device(c10::kCUDA, 0)),
                        "feature gather onto cuda:0");
  EXPECT_ERROR_CONTAINS(gpu::pinned_copy_bandwidth(1 << 20, 3, 0), "needs a GPU");
  EXPECT_FALSE(gpu::unavailable_reason().empty());
}

}  // namespace
}  // namespace directgnn
