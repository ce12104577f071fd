// The model stack of every kind: layer-wise inference against block forward, gradients
// against finite differences, and its configuration.
#include "nn/model.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "model_test_util.h"
#include "sampling/sampler.h"
#include "test_util.h"

namespace directgnn {
namespace {

using testing::Fixture;
using testing::param;
using testing::tiny_graph;

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
  const Sampler sampler(f.ds.graph, {{-1, -1}});
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
  const Sampler sampler(f.ds.graph, {{-1, -1}});
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
