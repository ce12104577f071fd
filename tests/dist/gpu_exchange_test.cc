// A sharded table's exchange on the GPU (FeatureExchange::on_device): ids and rows cross in
// GPU memory, each owner gathering its part there from pinned host memory (the aligned
// zero-copy kernel) or from its GPU's memory. Two ranks on two threads share this machine's
// GPU over Gloo (which takes CUDA tensors), and a group of one runs the NCCL path. Skipped
// without a GPU.
#include <ATen/ATen.h>

#include "dist/feature_exchange.h"
#include "dist/two_ranks.h"
#include "gpu/runtime.h"
#include "test_util.h"

namespace directgnn {
namespace {

using testing::on_two_ranks;

#define SKIP_WITHOUT_GPU()                                                        \
  if (!gpu::available()) {                                                        \
    GTEST_SKIP() << "no GPU here (" << gpu::unavailable_reason() << "); skipped"; \
  }

const c10::Device kGpu(c10::kCUDA, 0);

// Rank 0 serves its part from pinned host memory, rank 1 from GPU memory; both ask for rows of
// both parts, through a cache of one remote row, and get the whole table's rows on the GPU.
TEST(GpuExchange, TwoRanksSharingTheGpuLandRowsInItsMemory) {
  SKIP_WITHOUT_GPU();
  const at::Tensor table = at::randn({50, 24}).to(at::kHalf);
  const std::vector<int64_t> offsets{0, 20, 50};
  const at::Tensor ask = at::tensor({49, 3, 20, 19, 0, 33, 33, 21}, at::kLong);
  std::vector<at::Tensor> got(2), on_cpu(2);
  std::vector<ExchangeCounts> counts(2);
  on_two_ranks([&](int r, ProcessGroup& group) {
    const at::Tensor part = table.narrow(0, offsets[r], offsets[r + 1] - offsets[r]).contiguous();
    const FeatureStore store(part, r == 0 ? Placement::kPinned : Placement::kDevice, 0);
    FeatureExchange ex(offsets, store, 0, group.subgroup("features", /*cpu_tensors=*/false));
    ex.on_device(kGpu);
    ex.cache_remote_rows(at::tensor({33, 3}, at::kLong), /*max_rows=*/1);
    got[r] = ex.gather(ask, kGpu);
    on_cpu[r] = ex.gather(ask);
    counts[r] = ex.counts();
  });
  const at::Tensor want = table.index_select(0, ask);
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(got[r].is_cuda()) << r;
    EXPECT_TRUE(got[r].cpu().equal(want)) << r;
    EXPECT_TRUE(on_cpu[r].device().is_cpu() && on_cpu[r].equal(want)) << r;
    EXPECT_EQ(counts[r].gathers, 2) << r;
  }
  // Rank 0 caches 33 (served here twice a gather), rank 1 caches 3.
  EXPECT_EQ(counts[0].cache_hits, 4);
  EXPECT_EQ(counts[1].cache_hits, 2);
}

// The NCCL path on a group of one: the counts, ids and rows cross over NCCL, and the owner's
// rows come from pinned host memory by the aligned kernel.
TEST(GpuExchange, AnNcclGroupOfOneServesItsPinnedRows) {
  SKIP_WITHOUT_GPU();
  DistEnv env;
  env.master_port = 0;
  DistOptions options;
  options.backend = DistBackend::kNccl;
  options.gpu_by_rank = true;
  options.timeout = std::chrono::seconds(30);
  auto group = ProcessGroup::create(env, options);
  ASSERT_EQ(group->backend(), DistBackend::kNccl);
  const at::Tensor table = at::randn({64, 100});
  const FeatureStore store(table, Placement::kPinned, 0);
  FeatureExchange ex({0, 64}, store, 0, group->subgroup("features"));
  EXPECT_ERROR_CONTAINS(ex.on_device(c10::Device(c10::kCPU)), "NCCL group exchanges GPU tensors");
  GatherOptions aligned;
  aligned.method = GatherMethod::kAligned;
  ex.on_device(kGpu, aligned);
  const at::Tensor ask = at::tensor({63, 0, 7, 7, 31}, at::kLong);
  const at::Tensor rows = ex.gather(ask, kGpu);
  EXPECT_TRUE(rows.is_cuda());
  EXPECT_TRUE(rows.cpu().equal(table.index_select(0, ask)));
  EXPECT_EQ(ex.gather(at::empty({0}, at::kLong), kGpu).sizes(), (std::vector<int64_t>{0, 100}));
}

}  // namespace
}  // namespace directgnn
