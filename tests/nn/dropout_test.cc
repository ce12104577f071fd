// Dropout (nn/dropout.h): the CPU twin's mask, and on a GPU the same elements kept.
#include "nn/dropout.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "gpu/runtime.h"
#include "test_util.h"

namespace directgnn {
namespace {

TEST(Dropout, KeepsTheRightFractionScalesAndRepeatsForASeed) {
  const at::Tensor x = at::ones({1000, 100});
  at::manual_seed(3);
  const at::Tensor a = directgnn::dropout(x, 0.3, true);
  EXPECT_NEAR(a.ne(0).to(at::kDouble).mean().item<double>(), 0.7, 0.01);
  EXPECT_NEAR(a.max().item<float>(), 1.0f / 0.7f, 1e-6);
  at::set_num_threads(1);
  at::manual_seed(3);
  const at::Tensor b = directgnn::dropout(x, 0.3, true);
  at::set_num_threads(2);
  EXPECT_TRUE(a.equal(b));  // same seed, other thread count, same mask
  EXPECT_FALSE(directgnn::dropout(x, 0.3, true).equal(a));
  EXPECT_TRUE(directgnn::dropout(x, 0.3, false).equal(x));
}

TEST(Dropout, GradientFlowsThroughKeptElementsOnly) {
  at::Tensor x = at::randn({50, 20}).set_requires_grad(true);
  const at::Tensor y = directgnn::dropout(x, 0.5, true);
  y.sum().backward();
  EXPECT_TRUE(x.grad().eq(0).equal(y.detach().eq(0)));
}

TEST(GpuDropout, KeepsTheSameElementsAsTheCpu) {
  if (!gpu::available()) GTEST_SKIP() << "no GPU here (" << gpu::unavailable_reason() << ")";
  const at::Tensor x = at::ones({1000, 37});
  at::manual_seed(3);
  const at::Tensor cpu = directgnn::dropout(x, 0.3, true);
  at::manual_seed(3);
  const at::Tensor gpu = directgnn::dropout(x.to(c10::Device(c10::kCUDA, 0)), 0.3, true);
  EXPECT_TRUE(gpu.cpu().equal(cpu));
}

}  // namespace
}  // namespace directgnn
