// The sparse aggregation (nn/aggregate.h): the CPU twin against dense products, the
// device-generic twin against the CPU one, and on a GPU the CUDA tensors against the CPU.
#include "nn/aggregate.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "gpu/runtime.h"
#include "graph/planted_partition.h"
#include "model_test_util.h"
#include "sampling/sampler.h"
#include "test_util.h"

namespace directgnn {
namespace {

using testing::Fixture;
using testing::param;
using testing::tiny_graph;

TEST(CsrAggregate, BackwardEqualsTransposedDenseProduct) {
  Fixture f = tiny_graph();
  const at::Tensor weight = at::rand({f.block.num_edges()});
  at::Tensor x = f.ds.features.clone().set_requires_grad(true);
  const at::Tensor y = csr_aggregate(f.block.indptr, f.block.indices, weight, x);
  const at::Tensor g = at::randn_like(y);
  y.backward(g);
  at::Tensor dense = at::zeros({x.size(0), x.size(0)});
  const at::Tensor rows = at::repeat_interleave(f.block.indptr.diff());
  dense.index_put_({rows, f.block.indices.to(at::kLong)}, weight);
  EXPECT_TRUE(at::allclose(y.detach(), at::mm(dense, f.ds.features), 1e-4, 1e-5));
  EXPECT_TRUE(at::allclose(x.grad(), at::mm(dense.t(), g), 1e-4, 1e-5));
}

// The GPU path's tensor-operation aggregation agrees with the CPU kernels, weighted and mean,
// forward and backward, on a sampled (not square) block.
TEST(CsrAggregate, GenericPathMatchesTheCpuKernels) {
  PlantedPartitionOptions o;
  o.num_nodes = 300;
  o.avg_degree = 6;
  o.feat_dim = 7;
  const Dataset ds = make_planted_partition(o);
  const Sampler sampler(ds.graph, {{4}});
  const Block b = sampler.sample(at::arange(50, at::kLong), 3).blocks[0];
  const at::Tensor x0 = at::randn({b.num_src, 7});
  for (const bool weighted : {false, true}) {
    const at::Tensor w = weighted ? at::rand({b.num_edges()}) : at::Tensor();
    at::Tensor xa = x0.clone().set_requires_grad(true), xb = x0.clone().set_requires_grad(true);
    const at::Tensor ya = csr_aggregate(b.indptr, b.indices, w, xa);
    const at::Tensor yb = csr_aggregate_generic(b.indptr, b.indices, w, xb);
    EXPECT_TRUE(at::allclose(ya, yb, 1e-5, 1e-6)) << "weighted " << weighted;
    const at::Tensor g = at::randn_like(ya);
    ya.backward(g);
    yb.backward(g);
    EXPECT_TRUE(at::allclose(xa.grad(), xb.grad(), 1e-5, 1e-6)) << "weighted " << weighted;
  }
}

TEST(CsrAggregate, RowsWithoutEdgesGiveZeroMean) {
  const at::Tensor indptr = at::tensor({0, 0, 2}, at::kLong);
  const at::Tensor indices = at::tensor({0, 1}, at::kInt);
  const at::Tensor x = at::tensor({1.0f, 3.0f}).view({2, 1});
  const at::Tensor y = csr_aggregate(indptr, indices, at::Tensor(), x);
  EXPECT_FLOAT_EQ(y[0][0].item<float>(), 0.0f);
  EXPECT_FLOAT_EQ(y[1][0].item<float>(), 2.0f);
}

// On a GPU, the aggregation runs the device-generic twin on CUDA tensors: the same sums as the
// CPU kernels, weighted and mean, forward and backward.
TEST(CsrAggregate, CudaTensorsMatchTheCpu) {
  if (!gpu::available()) GTEST_SKIP() << "no GPU here (" << gpu::unavailable_reason() << ")";
  PlantedPartitionOptions o;
  o.num_nodes = 400;
  o.avg_degree = 8;
  o.feat_dim = 1;
  const Dataset ds = make_planted_partition(o);
  const Block b = Sampler(ds.graph, {{5}}).sample(at::arange(60, at::kLong), 2).blocks[0];
  const c10::Device cuda(c10::kCUDA, 0);
  const at::Tensor x0 = at::randn({b.num_src, 33});
  for (const bool weighted : {false, true}) {
    const at::Tensor w = weighted ? at::rand({b.num_edges()}) : at::Tensor();
    at::Tensor xc = x0.clone().set_requires_grad(true);
    at::Tensor xg = x0.to(cuda).set_requires_grad(true);
    const at::Tensor yc = csr_aggregate(b.indptr, b.indices, w, xc);
    const at::Tensor yg =
        csr_aggregate(b.indptr.to(cuda), b.indices.to(cuda), weighted ? w.to(cuda) : w, xg);
    ASSERT_TRUE(yg.is_cuda());
    EXPECT_TRUE(at::allclose(yg.cpu(), yc, 1e-5, 1e-6)) << "weighted " << weighted;
    const at::Tensor g = at::randn_like(yc);
    yc.backward(g);
    yg.backward(g.to(cuda));
    EXPECT_TRUE(at::allclose(xg.grad().cpu(), xc.grad(), 1e-5, 1e-6)) << "weighted " << weighted;
  }
}

}  // namespace
}  // namespace directgnn
