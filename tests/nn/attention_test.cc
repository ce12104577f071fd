// Multi-head attention (nn/attention.h): the softmax over each destination's edges, the CPU
// twin of the aggregation against the device-generic one, and on a GPU the CUDA tensors against
// the CPU.
#include "nn/attention.h"

#include <ATen/ATen.h>

#include "gpu/runtime.h"
#include "model_test_util.h"
#include "nn/gat_conv.h"
#include "test_util.h"

namespace directgnn {
namespace {

using testing::Sampled;
using testing::sampled_block;

// The GPU path's tensor-operation aggregation agrees with the CPU kernel, forward and
// backward (in both the coefficients and the sources), for int32 and int64 ids.
TEST(MultiHeadAggregate, GenericPathMatchesTheCpuKernel) {
  const Sampled s = sampled_block(4, 5);
  const int64_t heads = 3, width = 3 * 20;  // rows of 60 floats: threads split mid-head
  at::manual_seed(14);
  const at::Tensor alpha0 = at::rand({s.block.num_edges(), heads});
  const at::Tensor h0 = at::randn({s.block.num_src, width});
  for (const auto id_type : {at::kInt, at::kLong}) {
    const at::Tensor indices = s.block.indices.to(id_type);
    at::Tensor aa = alpha0.clone().set_requires_grad(true),
               ab = alpha0.clone().set_requires_grad(true);
    at::Tensor ha = h0.clone().set_requires_grad(true), hb = h0.clone().set_requires_grad(true);
    const at::Tensor ya = multi_head_aggregate(s.block.indptr, indices, aa, ha);
    const at::Tensor yb = multi_head_aggregate_generic(s.block.indptr, indices, ab, hb);
    EXPECT_TRUE(at::allclose(ya, yb, 1e-5, 1e-6)) << id_type;
    const at::Tensor g = at::randn_like(ya);
    ya.backward(g);
    yb.backward(g);
    EXPECT_TRUE(at::allclose(aa.grad(), ab.grad(), 1e-4, 1e-5)) << id_type;
    EXPECT_TRUE(at::allclose(ha.grad(), hb.grad(), 1e-5, 1e-6)) << id_type;
  }
}

TEST(EdgeSoftmax, SumsToOnePerDestinationAndHandlesRowsWithoutEdges) {
  const at::Tensor indptr = at::tensor({0, 0, 3, 4}, at::kLong);
  const at::Tensor indices = at::tensor({0, 1, 3, 2}, at::kInt);
  const at::Tensor src = at::randn({4, 2}) * 50;  // large logits: the maximum keeps exp finite
  const EdgeAttention a = edge_softmax(indptr, indices, src, src.narrow(0, 0, 3),
                                       at::randn({3, 2}) * 50, GATConv::kNegativeSlope);
  EXPECT_TRUE(at::allclose(a.self[0], at::ones({2})));  // row 0: only its self loop
  const at::Tensor sums = a.self.index_add(0, at::tensor({1, 1, 1, 2}, at::kLong), a.edges);
  EXPECT_TRUE(at::allclose(sums, at::ones({3, 2}), 1e-5, 1e-6));
  EXPECT_TRUE(at::isfinite(a.edges).all().item<bool>());
}

// On a GPU, attention runs the device-generic twin on CUDA tensors: the same coefficients and
// aggregation as the CPU, forward and backward.
TEST(Attention, CudaTensorsMatchTheCpu) {
  if (!gpu::available()) GTEST_SKIP() << "no GPU here (" << gpu::unavailable_reason() << ")";
  const Sampled s = sampled_block(4, 9);
  const c10::Device cuda(c10::kCUDA, 0);
  const int64_t heads = 2, width = 2 * 24;
  at::manual_seed(3);
  const at::Tensor src0 = at::randn({s.block.num_src, heads}),
                   dst0 = at::randn({s.block.num_dst, heads});
  const at::Tensor h0 = at::randn({s.block.num_src, width});
  auto run = [&](const c10::Device& d, at::Tensor& h, at::Tensor& src) {
    h = h0.to(d).set_requires_grad(true);
    src = src0.to(d).set_requires_grad(true);
    const at::Tensor indptr = s.block.indptr.to(d), indices = s.block.indices.to(d);
    const EdgeAttention a =
        edge_softmax(indptr, indices, src, src.narrow(0, 0, s.block.num_dst), dst0.to(d), 0.2);
    return multi_head_aggregate(indptr, indices, a.edges, h) +
           (h.narrow(0, 0, s.block.num_dst).view({s.block.num_dst, heads, -1}) *
            a.self.unsqueeze(2))
               .view({s.block.num_dst, width});
  };
  at::Tensor hc, sc, hg, sg;
  const at::Tensor yc = run(c10::Device(c10::kCPU), hc, sc), yg = run(cuda, hg, sg);
  EXPECT_TRUE(at::allclose(yg.cpu(), yc, 1e-4, 1e-5));
  const at::Tensor g = at::randn_like(yc);
  yc.backward(g);
  yg.backward(g.to(cuda));
  EXPECT_TRUE(at::allclose(hg.grad().cpu(), hc.grad(), 1e-4, 1e-5));
  EXPECT_TRUE(at::allclose(sg.grad().cpu(), sc.grad(), 1e-4, 1e-5));
}

}  // namespace
}  // namespace directgnn
