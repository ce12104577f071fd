#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <nlohmann/json.hpp>

#include "graph/planted_partition.h"
#include "model_test_util.h"
#include "nn/gat_conv.h"
#include "nn/model.h"
#include "sampling/sampler.h"
#include "test_util.h"

namespace directgnn {
namespace {

using testing::param;
using testing::Sampled;
using testing::sampled_block;

// How many times each source feeds each destination, self loop included: [num_dst, num_src].
at::Tensor edge_counts(const Block& b) {
  at::Tensor m = at::zeros({b.num_dst, b.num_src});
  const at::Tensor rows = at::repeat_interleave(b.indptr.diff());
  m.index_put_({rows, b.indices.to(at::kLong)}, at::ones({b.num_edges()}), /*accumulate=*/true);
  const at::Tensor diag = at::arange(b.num_dst, at::kLong);
  m.index_put_({diag, diag}, at::ones({b.num_dst}), /*accumulate=*/true);
  return m;
}

struct GatParams {
  at::Tensor weight, att_src, att_dst, bias;
};

// GAT written out densely: logits of absent edges are -inf (log 0), repeated edges weigh
// their count, a softmax over each destination's row per head.
at::Tensor dense_gat(const GatParams& p, const at::Tensor& counts, const at::Tensor& x_src,
                     int64_t heads, bool concat) {
  const int64_t nd = counts.size(0), ns = counts.size(1), c = p.weight.size(0) / heads;
  const at::Tensor h = at::mm(x_src, p.weight.t()).view({ns, heads, c});
  const at::Tensor s_src = (h * p.att_src).sum(-1);                   // [ns, H]
  const at::Tensor s_dst = (h.narrow(0, 0, nd) * p.att_dst).sum(-1);  // [nd, H]
  const at::Tensor logits = at::leaky_relu(s_dst.t().unsqueeze(2) + s_src.t().unsqueeze(1), 0.2) +
                            at::log(counts).unsqueeze(0);  // [H, nd, ns]
  const at::Tensor alpha = at::softmax(logits, 2);
  const at::Tensor out = at::einsum("hij,jhc->ihc", {alpha, h});  // [nd, H, C]
  return (concat ? out.reshape({nd, heads * c}) : out.mean(1)) + p.bias;
}

GatParams params_of(GATConv& conv) {
  return {param(conv, "lin_weight"), param(conv, "att_src"), param(conv, "att_dst"),
          param(conv, "bias")};
}

class GatConvTest : public ::testing::TestWithParam<bool> {};

TEST_P(GatConvTest, ForwardAndBackwardEqualTheDenseReference) {
  const bool concat = GetParam();
  const Sampled s = sampled_block(4, 7);
  at::manual_seed(11);
  GATConv conv(5, 4, 3, concat, /*attn_dropout=*/0.0);
  {
    at::NoGradGuard no_grad;
    conv.named_parameters()["bias"].copy_(at::randn_like(conv.named_parameters()["bias"]));
  }
  at::Tensor xa = s.x_src.clone().set_requires_grad(true);
  const at::Tensor out = conv.forward(s.block, xa, xa.narrow(0, 0, s.block.num_dst));
  ASSERT_EQ(out.size(1), concat ? 12 : 4);
  GatParams ref = params_of(conv);
  for (at::Tensor* t : {&ref.weight, &ref.att_src, &ref.att_dst, &ref.bias}) {
    *t = t->clone().set_requires_grad(true);
  }
  at::Tensor xb = s.x_src.clone().set_requires_grad(true);
  const at::Tensor expected = dense_gat(ref, edge_counts(s.block), xb, 3, concat);
  EXPECT_TRUE(at::allclose(out.detach(), expected.detach(), 1e-4, 1e-5))
      << (out - expected).abs().max();
  const at::Tensor g = at::randn_like(out);
  out.backward(g);
  expected.backward(g);
  EXPECT_TRUE(at::allclose(xa.grad(), xb.grad(), 1e-4, 1e-5));
  const auto named = conv.named_parameters();
  EXPECT_TRUE(at::allclose(named["lin_weight"].grad(), ref.weight.grad(), 1e-4, 1e-5));
  EXPECT_TRUE(at::allclose(named["att_src"].grad(), ref.att_src.grad(), 1e-4, 1e-5));
  EXPECT_TRUE(at::allclose(named["att_dst"].grad(), ref.att_dst.grad(), 1e-4, 1e-5));
  EXPECT_TRUE(at::allclose(named["bias"].grad(), ref.bias.grad(), 1e-4, 1e-5));
}

INSTANTIATE_TEST_SUITE_P(ConcatOrMean, GatConvTest, ::testing::Bool());

// Destination inputs given apart from the sources (as layer-wise inference does) give what
// the prefix of the sources gives.
TEST(GATConv, SeparateDestinationInputsEqualThePrefix) {
  const Sampled s = sampled_block(3, 2);
  at::manual_seed(12);
  GATConv conv(5, 4, 2, true, 0.0);
  const at::Tensor prefix = conv.forward(s.block, s.x_src, s.x_src.narrow(0, 0, s.block.num_dst));
  const at::Tensor apart =
      conv.forward(s.block, s.x_src, s.x_src.narrow(0, 0, s.block.num_dst).clone());
  EXPECT_TRUE(at::allclose(prefix, apart, 1e-5, 1e-6));
}

// Attention dropout: only while training, and it changes the output.
TEST(GATConv, AttentionDropoutOnlyWhileTraining) {
  const Sampled s = sampled_block(4, 3);
  at::manual_seed(13);
  GATConv conv(5, 4, 2, true, 0.5);
  const at::Tensor x_dst = s.x_src.narrow(0, 0, s.block.num_dst);
  const at::Tensor a = conv.forward(s.block, s.x_src, x_dst).detach();
  conv.eval();
  const at::Tensor b = conv.forward(s.block, s.x_src, x_dst);
  EXPECT_TRUE(b.equal(conv.forward(s.block, s.x_src, x_dst)));
  EXPECT_FALSE(at::allclose(a, b, 1e-3, 1e-3));
}

ModelConfig gat_config() {
  ModelConfig c;
  c.kind = ModelKind::kGat;
  c.in_dim = 5;
  c.hidden = 3;
  c.heads = 4;
  c.num_classes = 3;
  c.layers = 2;
  c.dropout = 0.0;
  c.attn_dropout = 0.0;
  return c;
}

TEST(GatModel, HiddenLayersConcatenateHeadsAndTheOutputHasOneHead) {
  GnnModel model(gat_config());
  const auto p = model.named_parameters();
  EXPECT_EQ(p["conv0.lin_weight"].sizes().vec(), (std::vector<int64_t>{12, 5}));
  EXPECT_EQ(p["conv0.att_src"].sizes().vec(), (std::vector<int64_t>{1, 4, 3}));
  EXPECT_EQ(p["conv0.bias"].sizes().vec(), (std::vector<int64_t>{12}));
  EXPECT_EQ(p["conv1.lin_weight"].sizes().vec(), (std::vector<int64_t>{3, 12}));
  EXPECT_EQ(p["conv1.att_dst"].sizes().vec(), (std::vector<int64_t>{1, 1, 3}));
  EXPECT_EQ(model.config().hidden_width(), 12);
}

TEST(GatModel, ConfigRoundTripsAndOldConfigsLoadWithDefaults) {
  ModelConfig c = gat_config();
  c.heads = 2;
  c.attn_dropout = 0.25;
  const ModelConfig back = ModelConfig::from_json(c.to_json(), "m.json");
  EXPECT_EQ(back.kind, ModelKind::kGat);
  EXPECT_EQ(back.heads, 2);
  EXPECT_EQ(back.attn_dropout, 0.25);
  nlohmann::json old = c.to_json();
  old.erase("heads");
  old.erase("attn_dropout");
  const ModelConfig loaded = ModelConfig::from_json(old, "old.json");
  EXPECT_EQ(loaded.heads, ModelConfig().heads);
  EXPECT_EQ(loaded.attn_dropout, ModelConfig().attn_dropout);
  nlohmann::json bad = c.to_json();
  bad["heads"] = 0;
  EXPECT_ERROR_CONTAINS(ModelConfig::from_json(bad, "meta.json"), "heads: must be at least 1");
  bad["heads"] = "two";
  EXPECT_ERROR_CONTAINS(ModelConfig::from_json(bad, "meta.json"), "meta.json");
}

TEST(GatModel, RejectsBadHeadsAndAttentionDropout) {
  ModelConfig c = gat_config();
  c.heads = 0;
  EXPECT_ERROR_CONTAINS(c.validate(), "heads: must be at least 1, got 0");
  c.heads = 1;
  c.attn_dropout = 1.0;
  EXPECT_ERROR_CONTAINS(c.validate(), "attn_dropout: must be in [0, 1), got 1");
  c.attn_dropout = -0.1;
  EXPECT_ERROR_CONTAINS(c.validate(), "attn_dropout");
}

}  // namespace
}  // namespace directgnn
