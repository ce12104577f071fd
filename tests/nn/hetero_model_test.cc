// Heterogeneous models (nn/hetero_model.h): an RGCN layer against a hand-computed one, the
// sampled forward pass against layer-wise inference with every neighbour, and gradients.
#include "nn/hetero_model.h"

#include <ATen/ATen.h>
#include <torch/utils.h>

#include <nlohmann/json.hpp>

#include "gpu/runtime.h"
#include "graph/hetero_test_graph.h"
#include "test_util.h"

namespace directgnn {
namespace {

// A parameter of `model` by name.
at::Tensor param(HeteroModel& model, const std::string& name) {
  for (const auto& p : model.named_parameters()) {
    if (p.key() == name) return p.value();
  }
  ADD_FAILURE() << "no parameter " << name;
  return at::Tensor();
}

TEST(HeteroModel, RgcnLayerMatchesAHandComputedOne) {
  // Types: a (2 nodes, 2-d features), b (3 nodes, no features). Relation 0: a -> b,
  // relation 1: b -> a. One layer, so b gets its output from a's features only.
  HeteroModelConfig c;
  c.kind = HeteroModelKind::kRgcn;
  c.in_dims = {2, 0};
  c.relations = {{0, 1}, {1, 0}};
  c.target_type = 1;
  c.num_classes = 2;
  c.layers = 1;
  c.dropout = 0;
  HeteroModel model(c);
  at::NoGradGuard no_grad;
  param(model, "layer0_rel0_weight").copy_(at::tensor({1.0f, 2.0f, -1.0f, 0.5f}).view({2, 2}));
  param(model, "layer0_type1_bias").copy_(at::tensor({0.25f, -0.25f}));
  HeteroBlock block;
  block.num_src = {2, 3};
  block.num_dst = {0, 3};
  Block a_to_b;  // b0 <- {a0, a1}, b1 <- {a1}, b2 <- {}
  a_to_b.indptr = at::tensor(std::vector<int64_t>{0, 2, 3, 3});
  a_to_b.indices = at::tensor(std::vector<int64_t>{0, 1, 1});
  a_to_b.num_dst = 3;
  a_to_b.num_src = 2;
  Block b_to_a;
  b_to_a.indptr = at::zeros({1}, at::kLong);
  b_to_a.indices = at::zeros({0}, at::kLong);
  block.relations = {a_to_b, b_to_a};
  const at::Tensor xa = at::tensor({1.0f, 3.0f, 5.0f, -1.0f}).view({2, 2});
  const at::Tensor out = model.forward({block}, {xa, at::Tensor()});
  // mean(b0) = (3, 1): W (3,1) = (3 + 2, -3 + 0.5) = (5, -2.5); + bias.
  // mean(b1) = (5, -1): (5 - 2, -5 - 0.5) = (3, -5.5); b2: bias only.
  const at::Tensor want = at::tensor({5.25f, -2.75f, 3.25f, -5.75f, 0.25f, -0.25f}).view({3, 2});
  EXPECT_TRUE(at::allclose(out, want)) << out;
}

class HeteroModelKinds : public ::testing::TestWithParam<std::tuple<HeteroModelKind, int64_t>> {};

TEST_P(HeteroModelKinds, SampledForwardWithEveryNeighbourEqualsLayerWiseInference) {
  const HeteroDataset ds = testing::random_hetero(7);
  HeteroModelConfig c = HeteroModelConfig::for_dataset(ds);
  c.kind = std::get<0>(GetParam());
  c.num_bases = std::get<1>(GetParam());
  c.hidden = 8;
  c.layers = 2;
  torch::manual_seed(1);
  HeteroModel model(c);
  model.eval();
  const HeteroSampler sampler(ds, parse_hetero_fanouts(ds, "-1,-1", "", 2));
  const at::Tensor seeds = at::arange(0, 60, 4, at::kLong);
  const HeteroMiniBatch b = sampler.sample(0, seeds, 3);
  std::vector<at::Tensor> x(ds.node_types.size());
  x[0] = ds.node_types[0].features.index_select(0, b.input_nodes[0]);
  const at::Tensor sampled = model.forward(b.blocks, x);
  std::vector<at::Tensor> features;
  for (const NodeType& t : ds.node_types) features.push_back(t.features);
  const at::Tensor full = model.infer(ds, features, 7).index_select(0, seeds);
  EXPECT_TRUE(at::allclose(sampled, full, 1e-4, 1e-5)) << (sampled - full).abs().max();
}

// Link prediction's encoder: the last layer emits two types (paper and author), from seeds of
// both; each equals its type's rows of layer-wise inference.
TEST_P(HeteroModelKinds, SeveralOutputTypesEqualLayerWiseInference) {
  const HeteroDataset ds = testing::random_hetero(6);
  HeteroModelConfig c = HeteroModelConfig::for_dataset(ds);
  c.kind = std::get<0>(GetParam());
  c.num_bases = std::get<1>(GetParam());
  c.hidden = 8;
  c.num_classes = 8;
  c.output_types = {0, 1};
  torch::manual_seed(4);
  HeteroModel model(c);
  model.eval();
  const HeteroSampler sampler(ds, parse_hetero_fanouts(ds, "-1,-1", "", 2));
  std::vector<at::Tensor> seeds(ds.node_types.size());
  seeds[0] = at::arange(0, 60, 5, at::kLong);
  seeds[1] = at::arange(1, 40, 3, at::kLong);
  const HeteroMiniBatch b = sampler.sample(seeds, 2);
  std::vector<at::Tensor> x(ds.node_types.size());
  x[0] = ds.node_types[0].features.index_select(0, b.input_nodes[0]);
  const std::vector<at::Tensor> sampled = model.forward_outputs(b.blocks, x);
  std::vector<at::Tensor> features;
  for (const NodeType& t : ds.node_types) features.push_back(t.features);
  const std::vector<at::Tensor> full = model.infer_outputs(ds, features, 9);
  EXPECT_FALSE(sampled[2].defined());
  EXPECT_FALSE(full[2].defined());
  for (int t : {0, 1}) {
    const at::Tensor want = full[t].index_select(0, seeds[t]);
    EXPECT_TRUE(at::allclose(sampled[t], want, 1e-4, 1e-5)) << t;
  }
}

TEST_P(HeteroModelKinds, EveryParameterGetsAGradient) {
  const HeteroDataset ds = testing::random_hetero(8);
  HeteroModelConfig c = HeteroModelConfig::for_dataset(ds);
  c.kind = std::get<0>(GetParam());
  c.num_bases = std::get<1>(GetParam());
  c.hidden = 8;
  c.layers = 3;
  HeteroModel model(c);
  const HeteroSampler sampler(ds, parse_hetero_fanouts(ds, "-1,-1,-1", "", 3));
  const HeteroMiniBatch b = sampler.sample(0, at::arange(0, 60, at::kLong), 3);
  std::vector<at::Tensor> x(ds.node_types.size());
  x[0] = ds.node_types[0].features.index_select(0, b.input_nodes[0]);
  model.forward(b.blocks, x).pow(2).sum().backward();
  for (const auto& p : model.named_parameters()) {
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    EXPECT_GT(p.value().grad().abs().sum().item<double>(), 0) << p.key();
  }
}

INSTANTIATE_TEST_SUITE_P(All, HeteroModelKinds,
                         ::testing::Values(std::make_tuple(HeteroModelKind::kRgcn, int64_t{0}),
                                           std::make_tuple(HeteroModelKind::kRgcn, int64_t{2}),
                                           std::make_tuple(HeteroModelKind::kHsage, int64_t{0}),
                                           std::make_tuple(HeteroModelKind::kMlp, int64_t{0})));

TEST(HeteroModel, OnTheGpuEqualsTheCpu) {
  if (!gpu::available()) GTEST_SKIP() << "no GPU (bench/gpu/run.sh hetero runs this)";
  const HeteroDataset ds = testing::random_hetero(9);
  HeteroModelConfig c = HeteroModelConfig::for_dataset(ds);
  c.hidden = 8;
  c.dropout = 0;
  torch::manual_seed(2);
  HeteroModel cpu(c);
  torch::manual_seed(2);
  HeteroModel gpu(c);
  gpu.to(c10::Device(c10::kCUDA, 0));
  const HeteroSampler sampler(ds, parse_hetero_fanouts(ds, "4,3", "", 2));
  const HeteroMiniBatch b = sampler.sample(0, at::arange(0, 60, 3, at::kLong), 5);
  std::vector<at::Tensor> x(ds.node_types.size());
  x[0] = ds.node_types[0].features.index_select(0, b.input_nodes[0]);
  std::vector<HeteroBlock> blocks = b.blocks;
  for (HeteroBlock& block : blocks) {
    for (Block& r : block.relations) {
      r.indptr = r.indptr.cuda();
      r.indices = r.indices.cuda();
    }
  }
  const at::Tensor on_cpu = cpu.forward(b.blocks, x);
  const at::Tensor on_gpu = gpu.forward(blocks, {x[0].cuda(), at::Tensor(), at::Tensor()});
  on_gpu.sum().backward();
  EXPECT_TRUE(at::allclose(on_cpu, on_gpu.cpu(), 1e-4, 1e-5));
  for (const auto& p : gpu.parameters()) EXPECT_TRUE(p.grad().defined());
}

TEST(HeteroModel, ConfigRoundTripsThroughJson) {
  HeteroModelConfig c = HeteroModelConfig::for_dataset(testing::random_hetero(2));
  c.kind = HeteroModelKind::kHsage;
  c.hidden = 12;
  const HeteroModelConfig back = HeteroModelConfig::from_json(c.to_json(), "test");
  EXPECT_EQ(back.to_json(), c.to_json());
  EXPECT_ERROR_CONTAINS(parse_hetero_model_kind("gat"), "use rgcn, hsage or mlp");
}

}  // namespace
}  // namespace directgnn
