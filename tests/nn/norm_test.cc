#include "nn/norm.h"

#include <ATen/ATen.h>
#include <torch/optim/adam.h>

#include <nlohmann/json.hpp>
#include <tuple>

#include "graph/planted_partition.h"
#include "model_test_util.h"
#include "nn/model.h"
#include "sampling/sampler.h"
#include "test_util.h"
#include "train/checkpoint.h"

namespace directgnn {
namespace {

using testing::param;

// Normalises each row (dim 1) or each column (dim 0) with its biased variance, by hand.
at::Tensor standardise(const at::Tensor& x, int64_t dim) {
  const int64_t n = x.size(dim);
  const at::Tensor mean = x.sum(dim, true) / n;
  const at::Tensor var = (x - mean).pow(2).sum(dim, true) / n;
  return (x - mean) / (var + FeatureNorm::kEps).sqrt();
}

// FeatureNorm with a random scale and shift, so both enter the comparison.
FeatureNorm random_affine_norm(Norm kind, int64_t dim) {
  FeatureNorm norm(kind, dim);
  torch::NoGradGuard no_grad;
  norm.named_parameters()["weight"].copy_(at::randn({dim}));
  norm.named_parameters()["bias"].copy_(at::randn({dim}));
  return norm;
}

TEST(FeatureNorm, ParsesNamesAtTheBoundary) {
  EXPECT_EQ(parse_norm("none"), Norm::kNone);
  EXPECT_EQ(parse_norm("batch"), Norm::kBatch);
  EXPECT_EQ(parse_norm("layer"), Norm::kLayer);
  for (const Norm n : {Norm::kNone, Norm::kBatch, Norm::kLayer}) {
    EXPECT_EQ(parse_norm(norm_name(n)), n);
  }
  EXPECT_ERROR_CONTAINS(parse_norm("group"), "norm: 'group' is unknown");
}

TEST(FeatureNorm, LayerNormForwardAndBackwardEqualTheDenseFormula) {
  at::manual_seed(1);
  FeatureNorm norm = random_affine_norm(Norm::kLayer, 6);
  const at::Tensor x0 = at::randn({9, 6}) * 3 + 1;
  at::Tensor xa = x0.clone().set_requires_grad(true), xb = x0.clone().set_requires_grad(true);
  const at::Tensor weight = norm.named_parameters()["weight"];
  const at::Tensor bias = norm.named_parameters()["bias"];
  const at::Tensor ya = norm.forward(xa);
  const at::Tensor yb = standardise(xb, 1) * weight.detach() + bias.detach();
  EXPECT_TRUE(at::allclose(ya, yb, 1e-4, 1e-5)) << (ya - yb).abs().max();
  const at::Tensor g = at::randn_like(ya);
  ya.backward(g);
  yb.backward(g);
  EXPECT_TRUE(at::allclose(xa.grad(), xb.grad(), 1e-4, 1e-5));
  // d/dweight = sum over rows of g * normalised x, d/dbias = sum of g.
  EXPECT_TRUE(at::allclose(weight.grad(), (g * standardise(x0, 1)).sum(0), 1e-4, 1e-5));
  EXPECT_TRUE(at::allclose(bias.grad(), g.sum(0), 1e-4, 1e-5));
  // Eval mode changes nothing for layer norm.
  norm.eval();
  EXPECT_TRUE(at::allclose(norm.forward(x0), yb.detach(), 1e-4, 1e-5));
}

TEST(FeatureNorm, BatchNormUsesBatchStatisticsInTrainingAndRunningOnesInEval) {
  at::manual_seed(2);
  FeatureNorm norm = random_affine_norm(Norm::kBatch, 4);
  const at::Tensor weight = norm.named_parameters()["weight"];
  const at::Tensor bias = norm.named_parameters()["bias"];
  const at::Tensor x1 = at::randn({16, 4}) * 2 + 5, x2 = at::randn({10, 4}) - 3;
  at::Tensor xa = x1.clone().set_requires_grad(true), xb = x1.clone().set_requires_grad(true);
  const at::Tensor ya = norm.forward(xa);
  const at::Tensor yb = standardise(xb, 0) * weight.detach() + bias.detach();
  EXPECT_TRUE(at::allclose(ya, yb, 1e-4, 1e-5)) << (ya - yb).abs().max();
  const at::Tensor g = at::randn_like(ya);
  ya.backward(g);
  yb.backward(g);
  EXPECT_TRUE(at::allclose(xa.grad(), xb.grad(), 1e-4, 1e-5));
  EXPECT_TRUE(at::allclose(weight.grad(), (g * standardise(x1, 0)).sum(0), 1e-4, 1e-5));
  norm.forward(x2);
  // Running statistics: exponential averages (momentum 0.1) of the batch mean and of the
  // unbiased batch variance, from 0 and 1.
  auto mean = [](const at::Tensor& x) { return x.sum(0) / x.size(0); };
  auto var = [&](const at::Tensor& x) { return (x - mean(x)).pow(2).sum(0) / (x.size(0) - 1); };
  const at::Tensor rm = 0.9 * (0.1 * mean(x1)) + 0.1 * mean(x2);
  const at::Tensor rv = 0.9 * (0.9 + 0.1 * var(x1)) + 0.1 * var(x2);
  const auto buffers = norm.named_buffers();
  EXPECT_TRUE(at::allclose(buffers["running_mean"], rm, 1e-4, 1e-5));
  EXPECT_TRUE(at::allclose(buffers["running_var"], rv, 1e-4, 1e-5));
  // Eval: the running statistics, row by row, and they stay as they are.
  norm.eval();
  const at::Tensor y = norm.forward(x2);
  const at::Tensor expected =
      (x2 - rm) / (rv + FeatureNorm::kEps).sqrt() * weight.detach() + bias.detach();
  EXPECT_TRUE(at::allclose(y, expected, 1e-4, 1e-5));
  EXPECT_TRUE(at::allclose(norm.forward(x2.narrow(0, 3, 1)), expected.narrow(0, 3, 1), 1e-4, 1e-5));
  EXPECT_TRUE(at::allclose(norm.named_buffers()["running_mean"], rm, 1e-6, 1e-7));
  norm.train();
  EXPECT_ERROR_CONTAINS(norm.forward(x2.narrow(0, 0, 1)), "more than one row");
}

struct Tiny {
  Dataset ds;
  at::Tensor adjacency;  // dense [N, N]
};

Tiny tiny_graph(int64_t n) {
  PlantedPartitionOptions o;
  o.num_nodes = n;
  o.num_classes = 3;
  o.avg_degree = 4;
  o.feat_dim = 5;
  Tiny t{make_planted_partition(o), at::zeros({n, n})};
  const at::Tensor rows = at::repeat_interleave(t.ds.graph.degrees());
  t.adjacency.index_put_({rows, t.ds.graph.indices.to(at::kLong)}, at::ones({rows.numel()}));
  return t;
}

ModelConfig tiny_config(const std::string& arch, Norm norm, bool residual, int64_t layers) {
  ModelConfig c;
  c.kind = parse_model_kind(arch);
  c.in_dim = 5;
  c.hidden = 6;
  c.num_classes = 3;
  c.layers = layers;
  c.dropout = 0;
  c.attn_dropout = 0;
  c.norm = norm;
  c.residual = residual;
  return c;
}

// A three-layer GraphSAGE with layer norm and residuals over every node, written out with
// dense matrices: layer 0 projects its 5 inputs to 6 for the skip, layer 1 adds its input.
TEST(ResidualModel, SageWithLayerNormEqualsTheDenseReference) {
  const Tiny t = tiny_graph(40);
  at::manual_seed(3);
  GnnModel model(tiny_config("sage", Norm::kLayer, true, 3));
  {
    torch::NoGradGuard no_grad;
    for (auto& p : model.named_parameters()) {
      if (p.key().find("norm") != std::string::npos) p.value().copy_(at::randn_like(p.value()));
    }
  }
  const at::Tensor x = t.ds.features;
  const at::Tensor mean_op = t.adjacency / t.adjacency.sum(1, true).clamp_min(1);
  auto sage = [&](const at::Tensor& h, int l) {
    const std::string c = "conv" + std::to_string(l) + ".";
    return at::mm(at::mm(mean_op, h), param(model, c + "lin_l_weight").t()) +
           param(model, c + "lin_l_bias") + at::mm(h, param(model, c + "lin_r_weight").t());
  };
  auto norm = [&](const at::Tensor& h, int l) {
    const std::string n = "norm" + std::to_string(l) + ".";
    return standardise(h, 1) * param(model, n + "weight") + param(model, n + "bias");
  };
  const at::Tensor h0 = at::relu(norm(sage(x, 0), 0)) + at::mm(x, param(model, "skip0_weight").t());
  const at::Tensor h1 = at::relu(norm(sage(h0, 1), 1)) + h0;
  const at::Tensor expected = sage(h1, 2);
  EXPECT_FALSE(model.named_parameters().contains("skip1_weight"));
  const Sampler sampler(t.ds.graph, {{-1, -1, -1}});
  const MiniBatch batch = sampler.sample(at::arange(40, at::kLong), 0);
  const at::Tensor got = model.forward(batch.blocks, x.index_select(0, batch.input_nodes));
  EXPECT_TRUE(at::allclose(got.detach(), expected, 1e-4, 1e-5)) << (got - expected).abs().max();
  EXPECT_TRUE(at::allclose(model.infer(t.ds.graph, x, /*chunk=*/9), expected, 1e-4, 1e-5));
}

// The defaults add nothing: the same parameter names as the plain stack, and a configuration
// saved before norm and residual existed loads to an identical model and forward.
TEST(ResidualModel, DefaultsAreThePlainStack) {
  for (const std::string arch : {"sage", "gcn"}) {
    const ModelConfig plain = tiny_config(arch, Norm::kNone, false, 3);
    nlohmann::json old = plain.to_json();
    EXPECT_EQ(old["norm"], "none");
    EXPECT_EQ(old["residual"], false);
    old.erase("norm");
    old.erase("residual");
    old.erase("heads");
    old.erase("attn_dropout");
    const ModelConfig loaded = ModelConfig::from_json(old, "old.json");
    EXPECT_EQ(loaded.norm, Norm::kNone);
    EXPECT_FALSE(loaded.residual);
    at::manual_seed(4);
    GnnModel a(plain);
    at::manual_seed(4);
    GnnModel b(loaded);
    std::vector<std::string> names;
    for (const auto& p : a.named_parameters()) names.push_back(p.key());
    const std::vector<std::string> expected_names =
        arch == "sage" ? std::vector<std::string>{"conv0.lin_l_weight", "conv0.lin_l_bias",
                                                  "conv0.lin_r_weight", "conv1.lin_l_weight",
                                                  "conv1.lin_l_bias",   "conv1.lin_r_weight",
                                                  "conv2.lin_l_weight", "conv2.lin_l_bias",
                                                  "conv2.lin_r_weight"}
                       : std::vector<std::string>{"conv0.weight", "conv0.bias",   "conv1.weight",
                                                  "conv1.bias",   "conv2.weight", "conv2.bias"};
    EXPECT_EQ(names, expected_names) << arch;
    EXPECT_TRUE(a.named_buffers().is_empty());
    const Tiny t = tiny_graph(30);
    a.eval();
    b.eval();
    EXPECT_TRUE(a.infer(t.ds.graph, t.ds.features).equal(b.infer(t.ds.graph, t.ds.features)));
  }
  ModelConfig bad = tiny_config("sage", Norm::kNone, false, 2);
  nlohmann::json j = bad.to_json();
  j["norm"] = "group";
  EXPECT_ERROR_CONTAINS(ModelConfig::from_json(j, "meta.json"), "meta.json");
}

TEST(ResidualModel, CheckpointKeepsBatchNormStatistics) {
  testing::TempDirectory dir;
  const Tiny t = tiny_graph(50);
  const ModelConfig config = tiny_config("gcn", Norm::kBatch, true, 3);
  at::manual_seed(6);
  GnnModel a(config);
  const Sampler sampler(t.ds.graph, {{3, 3, 3}});
  const MiniBatch batch = sampler.sample(at::arange(20, at::kLong), 1);
  a.forward(batch.blocks, t.ds.features.index_select(0, batch.input_nodes));  // moves the stats
  EXPECT_FALSE(a.named_buffers()["norm0.running_mean"].equal(at::zeros({6})));
  torch::optim::Adam optimizer(a.parameters(), torch::optim::AdamOptions(0.1));
  save_checkpoint(dir.file("ck"), a, optimizer, {{"model", config.to_json()}});
  const nlohmann::json meta = read_checkpoint_meta(dir.file("ck"));
  EXPECT_EQ(meta["model"]["norm"], "batch");
  at::manual_seed(7);
  GnnModel b(ModelConfig::from_json(meta["model"], "meta"));
  EXPECT_EQ(b.config().norm, Norm::kBatch);
  EXPECT_TRUE(b.config().residual);
  load_checkpoint(dir.file("ck"), b, nullptr);
  const auto ba = a.named_buffers(), bb = b.named_buffers();
  ASSERT_EQ(ba.size(), 4u);  // running mean and variance of the two hidden layers
  for (const auto& item : ba) EXPECT_TRUE(item.value().equal(bb[item.key()])) << item.key();
  for (const auto& item : a.named_parameters()) {
    EXPECT_TRUE(item.value().equal(b.named_parameters()[item.key()])) << item.key();
  }
  a.eval();
  b.eval();
  EXPECT_TRUE(a.infer(t.ds.graph, t.ds.features).equal(b.infer(t.ds.graph, t.ds.features)));
}

using Variant = std::tuple<std::string, Norm, bool>;

class NormResidualTest : public ::testing::TestWithParam<Variant> {
 protected:
  ModelConfig config() const {
    const auto& [arch, norm, residual] = GetParam();
    return tiny_config(arch, norm, residual, 3);
  }
};

// Eval mode (batch norm on running statistics): the sampled-block forward with every
// neighbour and the chunked layer-wise inference agree.
TEST_P(NormResidualTest, LayerWiseInferenceEqualsBlockForward) {
  const Tiny t = tiny_graph(60);
  at::manual_seed(8);
  GnnModel model(config());
  const Sampler sampler(t.ds.graph, {{-1, -1, -1}});
  const MiniBatch batch = sampler.sample(at::arange(60, at::kLong), 0);
  const at::Tensor x = t.ds.features.index_select(0, batch.input_nodes);
  model.forward(batch.blocks, x);  // training step: batch norm's running stats move
  model.eval();
  const at::Tensor via_blocks = model.forward(batch.blocks, x).detach();
  const at::Tensor layer_wise = model.infer(t.ds.graph, t.ds.features, /*chunk=*/7);
  EXPECT_TRUE(at::allclose(via_blocks, layer_wise, 1e-4, 1e-5));
  const at::Tensor some = at::tensor({3, 17, 42}, at::kLong);
  EXPECT_TRUE(at::allclose(model.infer_nodes(t.ds.graph, t.ds.features, some, 2),
                           layer_wise.index_select(0, some), 1e-4, 1e-5));
}

// Training mode, sampled blocks: autograd's gradient of the first entries of every parameter
// (norm scale and shift, skip projection included) against central differences.
TEST_P(NormResidualTest, GradientMatchesFiniteDifferences) {
  const Tiny t = tiny_graph(40);
  at::manual_seed(9);
  GnnModel model(config());
  const Sampler sampler(t.ds.graph, {{4, 4, 4}});
  const MiniBatch batch = sampler.sample(at::arange(12, at::kLong), 3);
  const at::Tensor x = t.ds.features.index_select(0, batch.input_nodes);
  const at::Tensor labels = t.ds.labels.narrow(0, 0, 12);
  auto loss = [&] { return at::cross_entropy_loss(model.forward(batch.blocks, x), labels); };
  testing::expect_gradient_matches_finite_differences(model, loss, 5);
}

INSTANTIATE_TEST_SUITE_P(Variants, NormResidualTest,
                         ::testing::Combine(::testing::Values("sage", "gcn", "gat"),
                                            ::testing::Values(Norm::kNone, Norm::kBatch,
                                                              Norm::kLayer),
                                            ::testing::Bool()),
                         [](const ::testing::TestParamInfo<Variant>& info) {
                           return std::get<0>(info.param) + "_" +
                                  norm_name(std::get<1>(info.param)) +
                                  (std::get<2>(info.param) ? "_residual" : "");
                         });

}  // namespace
}  // namespace directgnn
