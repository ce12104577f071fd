#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <nlohmann/json.hpp>

#include "graph/planted_partition.h"
#include "model_test_util.h"
#include "nn/attention.h"
#include "nn/gat_conv.h"
#include "nn/model.h"
#include "sampling/neighbor_sampler.h"
#include "test_util.h"

namespace directgnn {
namespace {

using testing::param;

struct Sampled {
  Dataset ds;
  Block block;
  at::Tensor x_src;
};

// A sampled block (fewer destinations than sources) over a planted-partition graph.
Sampled sampled_block(int64_t fanout, uint64_t seed) {
  PlantedPartitionOptions o;
  o.num_nodes = 200;
  o.num_classes = 3;
  o.avg_degree = 6;
  o.feat_dim = 5;
  Sampled s{make_planted_partition(o), {}, {}};
  const NeighborSampler sampler(s.ds.graph, {fanout});
  const MiniBatch batch = sampler.sample(at::arange(30, at::kLong), seed);
  s.block = batch.blocks[0];
  s.x_src = s.ds.features.index_select(0, batch.input_nodes);
  return s;
}

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
