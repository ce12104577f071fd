// Process groups of one rank on each backend: the collectives really run, and the backend
// choice follows the GPUs; two Gloo ranks on threads for the checks every rank agrees on.
#include "dist/process_group.h"

#include <ATen/ATen.h>

#include "directgnn/error.h"
#include "dist/two_ranks.h"
#include "gpu/runtime.h"
#include "test_util.h"

namespace directgnn {
namespace {

DistEnv world_of_one() {
  DistEnv env;
  env.master_port = 0;  // the store picks a free port
  return env;
}

DistOptions with_backend(DistBackend backend, bool gpu_by_rank) {
  DistOptions options;
  options.backend = backend;
  options.timeout = std::chrono::seconds(30);
  options.gpu_by_rank = gpu_by_rank;
  return options;
}

// All-reduce, broadcast, bucketed mean and barrier on a group of one leave values unchanged.
void expect_collectives_work(ProcessGroup& group, const at::Device& device) {
  std::vector<at::Tensor> ts{at::arange(5, at::TensorOptions().dtype(at::kFloat).device(device)),
                             at::full({3}, 2.5, at::kDouble)};
  group.all_reduce_sum(ts);
  EXPECT_TRUE(ts[0].cpu().equal(at::arange(5, at::kFloat)));
  EXPECT_TRUE(ts[1].equal(at::full({3}, 2.5, at::kDouble)));
  group.broadcast(ts, 0);
  EXPECT_TRUE(ts[0].cpu().equal(at::arange(5, at::kFloat)));
  std::vector<at::Tensor> grads{at::ones({4, 2}, at::TensorOptions().device(device)),
                                at::full({7}, 3.0, at::TensorOptions().device(device))};
  group.all_reduce_mean(grads, /*bucket_bytes=*/16);
  EXPECT_TRUE(grads[0].cpu().equal(at::ones({4, 2})));
  EXPECT_TRUE(grads[1].cpu().equal(at::full({7}, 3.0)));
  group.barrier();
}

TEST(DistBackends, GlooGroupOfOneRunsItsCollectives) {
  auto group = ProcessGroup::create(world_of_one(), with_backend(DistBackend::kGloo, false));
  EXPECT_EQ(group->backend(), DistBackend::kGloo);
  EXPECT_EQ(group->size(), 1);
  expect_collectives_work(*group, at::kCPU);
}

TEST(DistBackends, AutoPicksGlooForCpuRanks) {
  auto group = ProcessGroup::create(world_of_one(), with_backend(DistBackend::kAuto, false));
  EXPECT_EQ(group->backend(), DistBackend::kGloo);
}

TEST(DistBackends, NcclWithoutAGpuOfItsOwnNamesTheRank) {
  if (gpu::available()) GTEST_SKIP() << "a GPU is present; NcclGroupOfOne runs instead";
  EXPECT_ERROR_CONTAINS(
      ProcessGroup::create(world_of_one(), with_backend(DistBackend::kNccl, true)),
      "dist_backend: nccl: rank(s) 0 have no GPU of their own");
}

TEST(DistBackends, NcclGroupOfOneOnTheGpu) {
  if (!gpu::available()) {
    GTEST_SKIP() << "no GPU here (" << gpu::unavailable_reason() << "); skipped";
  }
  auto group = ProcessGroup::create(world_of_one(), with_backend(DistBackend::kNccl, true));
  EXPECT_EQ(group->backend(), DistBackend::kNccl);
  expect_collectives_work(*group, at::Device(at::kCUDA, 0));
  // auto picks NCCL for a rank with a GPU of its own.
  auto automatic = ProcessGroup::create(world_of_one(), with_backend(DistBackend::kAuto, true));
  EXPECT_EQ(automatic->backend(), DistBackend::kNccl);
}

// A check that fails on one rank fails on both, each with its message, and the two go on to
// their next collectives together instead of one waiting for the other.
TEST(DistBackends, ACheckRefusedOnOneRankFailsEveryRank) {
  std::vector<std::string> errors(2);
  testing::on_two_ranks([&](int r, ProcessGroup& group) {
    try {
      group.check_on_every_rank([&] { DGNN_CHECK(r != 1, "rank 1's own reason"); },
                                "the test's check");
    } catch (const Error& e) {
      errors[r] = e.what();
    }
    group.check_on_every_rank([] {}, "a check every rank passes");
    group.barrier();
  });
  EXPECT_NE(errors[0].find("rank 0 of 2: rank(s) 1 refused the test's check"), std::string::npos)
      << errors[0];
  EXPECT_NE(errors[1].find("rank 1's own reason"), std::string::npos) << errors[1];
}

TEST(DistBackends, RanksGetTheirLocalGpuAndShareWhenTooFew) {
  DistEnv env;
  env.local_world_size = 4;
  env.local_rank = 3;
  EXPECT_EQ(rank_gpu(env, 4), 3);
  EXPECT_EQ(rank_gpu(env, 2), 1);
  EXPECT_EQ(rank_gpu(env, 1), 0);
  EXPECT_EQ(rank_gpu(env, 0), 0);
}

}  // namespace
}  // namespace directgnn
