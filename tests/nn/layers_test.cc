#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "graph/planted_partition.h"
#include "model_test_util.h"
#include "nn/aggregate.h"
#include "nn/dropout.h"
#include "nn/gcn_conv.h"
#include "nn/model.h"
#include "nn/sage_conv.h"
#include "sampling/neighbor_sampler.h"
#include "test_util.h"

namespace directgnn {
namespace {

using testing::param;

struct Fixture {
  Dataset ds;
  at::Tensor adjacency;  // dense [N, N]
  Block block;           // full neighbourhood, dst = src = all nodes in order
};

Fixture tiny_graph(int64_t n = 40) {
  PlantedPartitionOptions o;
  o.num_nodes = n;
  o.num_classes = 3;
  o.avg_degree = 4;
  o.feat_dim = 5;
  Fixture f{make_planted_partition(o), {}, {}};
  const NeighborSampler sampler(f.ds.graph, {-1});
  MiniBatch batch = sampler.sample(at::arange(n, at::kLong), 0);
  f.block = batch.blocks[0];
  EXPECT_EQ(f.block.num_src, n);  // every neighbour is already a seed
  f.adjacency = at::zeros({n, n});
  const at::Tensor rows = at::repeat_interleave(f.ds.graph.degrees());
  f.adjacency.index_put_({rows, f.ds.graph.indices.to(at::kLong)}, at::ones({rows.numel()}));
  return f;
}

TEST(SAGEConv, FullNeighbourhoodEqualsDenseMeanReference) {
  Fixture f = tiny_graph();
  SAGEConv conv(5, 7);
  const at::Tensor x = f.ds.features;
  const at::Tensor out = conv.forward(f.block, x, x).detach();
  const at::Tensor deg = f.adjacency.sum(1, true).clamp_min(1);
  const at::Tensor mean = at::mm(f.adjacency / deg, x);
  const at::Tensor expected = at::mm(mean, param(conv, "lin_l_weight").t()) +
                              param(conv, "lin_l_bias") +
                              at::mm(x, param(conv, "lin_r_weight").t());
  EXPECT_TRUE(at::allclose(out, expected, 1e-4, 1e-5)) << (out - expected).abs().max();
}

TEST(GCNConv, FullNeighbourhoodEqualsNormalisedAdjacencyReference) {
  Fixture f = tiny_graph();
  GCNConv conv(5, 7);
  const at::Tensor x = f.ds.features;
  const at::Tensor out = conv.forward(f.block, x, x).detach();
  const int64_t n = x.size(0);
  const at::Tensor a_hat = f.adjacency + at::eye(n);
  const at::Tensor d = a_hat.sum(1).pow(-0.5);
  const at::Tensor norm = d.unsqueeze(1) * a_hat * d.unsqueeze(0);
  const at::Tensor expected =
      at::mm(at::mm(norm, x), param(conv, "weight").t()) + param(conv, "bias");
  EXPECT_TRUE(at::allclose(out, expected, 1e-4, 1e-5)) << (out - expected).abs().max();
}

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
  const NeighborSampler sampler(ds.graph, {4});
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

class ModelTest : public ::testing::TestWithParam<std::string> {
 protected:
  // Two layers over the tiny graph's 5 features and 3 classes, without dropout.
  ModelConfig tiny_config() const {
    ModelConfig c;
    c.kind = parse_model_kind(GetParam());
    c.in_dim = 5;
    c.hidden = 6;
    c.num_classes = 3;
    c.layers = 2;
    c.dropout = 0;
    c.attn_dropout = 0;
    return c;
  }
};

TEST_P(ModelTest, LayerWiseInferenceEqualsBlockForward) {
  Fixture f = tiny_graph(60);
  GnnModel model(tiny_config());
  model.eval();
  const NeighborSampler sampler(f.ds.graph, {-1, -1});
  const MiniBatch batch = sampler.sample(at::arange(60, at::kLong), 0);
  const at::Tensor x = f.ds.features.index_select(0, batch.input_nodes);
  const at::Tensor via_blocks = model.forward(batch.blocks, x).detach();
  const at::Tensor layer_wise = model.infer(f.ds.graph, f.ds.features, /*chunk=*/7);
  EXPECT_TRUE(at::allclose(via_blocks, layer_wise, 1e-4, 1e-5));
}

TEST_P(ModelTest, GradientMatchesFiniteDifferences) {
  Fixture f = tiny_graph(30);
  at::manual_seed(5);
  GnnModel model(tiny_config());
  const NeighborSampler sampler(f.ds.graph, {-1, -1});
  const MiniBatch batch = sampler.sample(at::arange(10, at::kLong), 0);
  const at::Tensor x = f.ds.features.index_select(0, batch.input_nodes);
  const at::Tensor labels = f.ds.labels.narrow(0, 0, 10);
  auto loss = [&] { return at::cross_entropy_loss(model.forward(batch.blocks, x), labels); };
  testing::expect_gradient_matches_finite_differences(model, loss, 6);
}

INSTANTIATE_TEST_SUITE_P(Archs, ModelTest, ::testing::Values("sage", "gcn", "gat"));

TEST(ModelConfig, RejectsBadValues) {
  ModelConfig c;
  c.in_dim = 4;
  c.num_classes = 3;
  EXPECT_ERROR_CONTAINS(parse_model_kind("gin"), "model: 'gin' is unknown; use sage, gcn or gat");
  EXPECT_EQ(parse_model_kind(model_kind_name(ModelKind::kGat)), ModelKind::kGat);
  EXPECT_FALSE(ModelConfig{ModelKind::kGat}.aggregates_sources_first());
  EXPECT_TRUE(ModelConfig{ModelKind::kGcn}.aggregates_sources_first());
  c.layers = 0;
  EXPECT_ERROR_CONTAINS(c.validate(), "layers: must be at least 1");
  c.layers = 2;
  c.hidden = -3;
  EXPECT_ERROR_CONTAINS(c.validate(), "hidden: must be positive");
  c.hidden = 8;
  c.dropout = 1.5;
  EXPECT_ERROR_CONTAINS(c.validate(), "dropout: must be in [0, 1)");
}

}  // namespace
}  // namespace directgnn

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

}  // namespace
}  // namespace directgnn
