// Heterogeneous models (nn/hetero_model.h): an RGCN layer and the gcn and gat relation terms
// against hand-computed ones, the sampled forward pass against layer-wise inference with every
// neighbour for every kind (with norms and residuals), gradients, and the GPU against the CPU.
#include "nn/hetero_model.h"

#include <ATen/ATen.h>
#include <torch/utils.h>

#include <nlohmann/json.hpp>

#include "gpu/runtime.h"
#include "graph/hetero_test_graph.h"
#include "loader/hetero_stores.h"
#include "nn/hetero_convs.h"
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

// A hand-made graph for one relation a -> b: b0 <- {a0, a1}, b1 <- {a1}, b2 <- {}; a1 has two
// more out-edges in the whole graph (out-degrees 1 and 3), b0 one more in-edge (in-degrees 3, 1,
// 0), as a sampled block of a larger graph.
Block sampled_a_to_b() {
  Block b;
  b.indptr = at::tensor(std::vector<int64_t>{0, 2, 3, 3});
  b.indices = at::tensor(std::vector<int64_t>{0, 1, 1});
  b.num_dst = 3;
  b.num_src = 2;
  b.src_degree = at::tensor({1.0f, 3.0f});
  b.dst_degree = at::tensor({3.0f, 1.0f, 0.0f});
  return b;
}

TEST(HeteroConvs, GcnIsDglsGraphConvNormBothOnTheWholeGraphsDegrees) {
  const Block b = sampled_a_to_b();
  const at::Tensor x = at::tensor({1.0f, 3.0f, 5.0f, -1.0f}).view({2, 2});
  const at::Tensor w = at::tensor({1.0f, 2.0f, -1.0f, 0.5f}).view({2, 2});
  const at::Tensor bias = at::tensor({0.25f, -0.25f});
  const at::Tensor out = relation_gcn(b, x, w, bias);
  // b0: sampled 2 of its 3 in-edges, scaled by 3/2; each source by 1/sqrt(d_u d_v).
  const at::Tensor h0 = (x[0] / std::sqrt(1.0f * 3) + x[1] / std::sqrt(3.0f * 3)) * 1.5f;
  const at::Tensor h1 = x[1] / std::sqrt(3.0f * 1);
  const at::Tensor want = at::stack({at::matmul(w, h0) + bias, at::matmul(w, h1) + bias, bias});
  EXPECT_TRUE(at::allclose(out, want, 1e-5, 1e-6)) << out << want;
}

TEST(HeteroConvs, GatSoftmaxesOverTheInEdgesAloneWithoutSelfLoops) {
  const Block b = sampled_a_to_b();
  torch::manual_seed(3);
  RelationGat p;
  p.heads = 2;
  p.channels = 3;
  p.lin_src = at::randn({6, 2});
  p.lin_dst = at::randn({6, 4});
  p.att_src = at::randn({1, 2, 3});
  p.att_dst = at::randn({1, 2, 3});
  p.bias = at::randn({6});
  const at::Tensor x_src = at::randn({2, 2}), x_dst = at::randn({3, 4});
  const at::Tensor out = relation_gat(b, x_src, x_dst, p, 0.0, false);
  const at::Tensor hs = at::matmul(x_src, p.lin_src.t()).view({2, 2, 3});
  const at::Tensor hd = at::matmul(x_dst, p.lin_dst.t()).view({3, 2, 3});
  const at::Tensor ss = (hs * p.att_src).sum(-1), sd = (hd * p.att_dst).sum(-1);
  auto score = [&](int u, int v) { return at::leaky_relu(ss[u] + sd[v], 0.2); };
  // b0 over {a0, a1}; b1 over {a1} alone (weight 1); b2 has no edge: the bias alone.
  const at::Tensor e0 = score(0, 0), e1 = score(1, 0);
  const at::Tensor z = e0.exp() + e1.exp();
  const at::Tensor o0 = (e0.exp() / z).unsqueeze(1) * hs[0] + (e1.exp() / z).unsqueeze(1) * hs[1];
  const at::Tensor want = at::stack({o0.reshape({6}), hs[1].reshape({6}), at::zeros({6})}) + p.bias;
  EXPECT_TRUE(at::allclose(out, want, 1e-5, 1e-6)) << out << want;
}

struct KindCase {
  HeteroModelKind kind;
  int64_t bases = 0;
  Norm norm = Norm::kNone;
  bool residual = false;
};
void PrintTo(const KindCase& k, std::ostream* out) {
  *out << hetero_model_kind_name(k.kind) << " bases " << k.bases << " norm " << norm_name(k.norm)
       << (k.residual ? " residual" : "");
}

// The fan-outs, with the degrees gcn reads.
HeteroSamplerOptions every_neighbour(const HeteroDataset& ds, const std::string& fanouts,
                                     int64_t layers) {
  HeteroSamplerOptions o = parse_hetero_fanouts(ds, fanouts, "", layers);
  o.degrees = true;
  return o;
}

class HeteroModelKinds : public ::testing::TestWithParam<KindCase> {
 protected:
  HeteroModelConfig config(const HeteroDataset& ds) const {
    HeteroModelConfig c = HeteroModelConfig::for_dataset(ds);
    c.kind = GetParam().kind;
    c.num_bases = GetParam().bases;
    c.norm = GetParam().norm;
    c.residual = GetParam().residual;
    c.heads = 2;
    c.hidden = 8;
    return c;
  }
};

TEST_P(HeteroModelKinds, SampledForwardWithEveryNeighbourEqualsLayerWiseInference) {
  const HeteroDataset ds = testing::random_hetero(7);
  HeteroModelConfig c = config(ds);
  c.layers = 2;
  torch::manual_seed(1);
  HeteroModel model(c);
  model.eval();
  const HeteroSampler sampler(ds, every_neighbour(ds, "-1,-1", 2));
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
  HeteroModelConfig c = config(ds);
  c.num_classes = 8;
  c.output_types = {0, 1};
  torch::manual_seed(4);
  HeteroModel model(c);
  model.eval();
  const HeteroSampler sampler(ds, every_neighbour(ds, "-1,-1", 2));
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
  HeteroModelConfig c = config(ds);
  c.layers = 3;
  HeteroModel model(c);
  const HeteroSampler sampler(ds, every_neighbour(ds, "-1,-1,-1", 3));
  const HeteroMiniBatch b = sampler.sample(0, at::arange(0, 60, at::kLong), 3);
  std::vector<at::Tensor> x(ds.node_types.size());
  x[0] = ds.node_types[0].features.index_select(0, b.input_nodes[0]);
  model.forward(b.blocks, x).pow(2).sum().backward();
  for (const auto& p : model.named_parameters()) {
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    EXPECT_GT(p.value().grad().abs().sum().item<double>(), 0) << p.key();
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, HeteroModelKinds,
    ::testing::Values(KindCase{HeteroModelKind::kRgcn}, KindCase{HeteroModelKind::kRgcn, 2},
                      KindCase{HeteroModelKind::kHsage}, KindCase{HeteroModelKind::kMlp},
                      KindCase{HeteroModelKind::kGcn}, KindCase{HeteroModelKind::kGat},
                      KindCase{HeteroModelKind::kRgcn, 0, Norm::kBatch, true},
                      KindCase{HeteroModelKind::kGcn, 0, Norm::kLayer, true},
                      KindCase{HeteroModelKind::kGat, 0, Norm::kBatch, true},
                      KindCase{HeteroModelKind::kHsage, 0, Norm::kLayer, false}));

TEST(HeteroModel, OnTheGpuEqualsTheCpu) {
  if (!gpu::available()) GTEST_SKIP() << "no GPU (bench/gpu/run.sh hetero runs this)";
  const HeteroDataset ds = testing::random_hetero(9);
  const HeteroSampler sampler(ds, every_neighbour(ds, "4,3", 2));
  const HeteroMiniBatch b = sampler.sample(0, at::arange(0, 60, 3, at::kLong), 5);
  std::vector<at::Tensor> x(ds.node_types.size());
  x[0] = ds.node_types[0].features.index_select(0, b.input_nodes[0]);
  std::vector<HeteroBlock> blocks = b.blocks;
  hetero_blocks_to(blocks, c10::Device(c10::kCUDA, 0));
  for (HeteroModelKind kind : {HeteroModelKind::kRgcn, HeteroModelKind::kHsage,
                               HeteroModelKind::kGcn, HeteroModelKind::kGat}) {
    HeteroModelConfig c = HeteroModelConfig::for_dataset(ds);
    c.kind = kind;
    c.hidden = 8;
    c.heads = 2;
    c.dropout = 0;
    c.norm = Norm::kBatch;
    c.residual = true;
    torch::manual_seed(2);
    HeteroModel cpu(c);
    torch::manual_seed(2);
    HeteroModel gpu(c);
    gpu.to(c10::Device(c10::kCUDA, 0));
    const at::Tensor on_cpu = cpu.forward(b.blocks, x);
    const at::Tensor on_gpu = gpu.forward(blocks, {x[0].cuda(), at::Tensor(), at::Tensor()});
    on_gpu.sum().backward();
    EXPECT_TRUE(at::allclose(on_cpu, on_gpu.cpu(), 1e-4, 1e-5)) << hetero_model_kind_name(kind);
    for (const auto& p : gpu.parameters()) EXPECT_TRUE(p.grad().defined());
  }
}

TEST(HeteroModel, ConfigRoundTripsThroughJson) {
  HeteroModelConfig c = HeteroModelConfig::for_dataset(testing::random_hetero(2));
  c.kind = HeteroModelKind::kHsage;
  c.hidden = 12;
  const HeteroModelConfig back = HeteroModelConfig::from_json(c.to_json(), "test");
  EXPECT_EQ(back.to_json(), c.to_json());
  c.kind = HeteroModelKind::kGat;
  c.norm = Norm::kLayer;
  c.residual = true;
  c.heads = 3;
  c.attn_dropout = 0.25;
  const HeteroModelConfig gat = HeteroModelConfig::from_json(c.to_json(), "test");
  EXPECT_EQ(gat.to_json(), c.to_json());
  // A checkpoint written before norm, residual, heads and attention dropout applied here.
  nlohmann::json old = c.to_json();
  for (const char* key : {"norm", "residual", "heads", "attn_dropout"}) old.erase(key);
  const HeteroModelConfig read = HeteroModelConfig::from_json(old, "test");
  EXPECT_EQ(read.norm, Norm::kNone);
  EXPECT_FALSE(read.residual);
  EXPECT_ERROR_CONTAINS(parse_hetero_model_kind("gin"), "use rgcn, hsage, gcn, gat or mlp");
}

}  // namespace
}  // namespace directgnn
