#include "train/link_evaluate.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <cmath>

#include "graph/planted_partition.h"
#include "test_util.h"
#include "train/link_metrics.h"
#include "train/metrics.h"

namespace directgnn {
namespace {

TEST(LinkDecoder, DotIsTheDotProductAndMlpLearns) {
  at::manual_seed(0);
  const at::Tensor a = at::randn({5, 4}), b = at::randn({5, 4});
  LinkDecoder dot(DecoderKind::kDot, 4);
  EXPECT_TRUE(dot.forward(a, b).allclose((a * b).sum(1)));
  EXPECT_TRUE(dot.parameters().empty());
  LinkDecoder mlp(DecoderKind::kMlp, 4, 3, 0.1);
  EXPECT_EQ(mlp.parameters().size(), 6u);  // three linear layers
  const at::Tensor score = mlp.forward(a, b);
  EXPECT_EQ(score.sizes(), (at::IntArrayRef{5}));
  score.sum().backward();
  for (const at::Tensor& p : mlp.parameters()) EXPECT_TRUE(p.grad().defined());
  mlp.eval();
  EXPECT_TRUE(mlp.forward(b, a).allclose(mlp.forward(a, b)));  // Hadamard: symmetric
  EXPECT_ERROR_CONTAINS(parse_decoder_kind("cosine"), "dot");
  EXPECT_ERROR_CONTAINS(LinkDecoder(DecoderKind::kMlp, 4, 0), "at least 1");
}

TEST(LinkMetricsOfLayouts, SharedGivesAucApHitsAndPerSourceGivesMrrHits) {
  const at::Tensor pos = at::tensor(std::vector<double>{5, 2}, at::kDouble);
  const at::Tensor neg = at::tensor(std::vector<double>{4, 1}, at::kDouble);
  const LinkMetrics shared = link_metrics(pos, neg, LinkNegatives::kShared, 1);
  EXPECT_DOUBLE_EQ(shared.roc_auc, 0.75);
  EXPECT_DOUBLE_EQ(shared.hits, 0.5);  // only 5 is above the best negative, 4
  EXPECT_TRUE(std::isnan(shared.mrr));
  const LinkMetrics own = link_metrics(pos, neg.view({2, 1}), LinkNegatives::kPerSource, 1);
  EXPECT_DOUBLE_EQ(own.mrr, 1.0);  // 5 > 4 and 2 > 1: both first
  EXPECT_TRUE(std::isnan(own.roc_auc));
}

// evaluate_links against the same scores computed by hand from every node's embedding, with
// chunks small enough to cross their boundaries.
TEST(EvaluateLinks, ScoresTheSplitAsTheEmbeddingsOfEveryNodeDo) {
  at::manual_seed(1);
  PlantedPartitionOptions po;
  po.num_nodes = 300;
  po.feat_dim = 6;
  const Dataset ds = make_planted_partition(po);
  for (const int64_t k : {0, 5}) {
    LinkSplitOptions so;
    so.neg_per_source = k;
    const RandomLinkSplit r = random_link_split(ds.graph, false, so);
    ModelConfig c;
    c.in_dim = 6;
    c.hidden = 8;
    c.num_classes = 8;  // the embedding width
    GnnModel model(c);
    LinkDecoder decoder(DecoderKind::kMlp, 8);
    LinkEvalOptions o;
    o.chunk = 7;
    o.hits_k = 3;
    const LinkEvalResult got = evaluate_links(model, decoder, r.graph, ds.features, r.split, o);
    torch::NoGradGuard no_grad;
    decoder.eval();
    const at::Tensor h = model.infer(r.graph, ds.features);
    auto score = [&](const at::Tensor& s, const at::Tensor& d) {
      return decoder.forward(h.index_select(0, s.reshape(-1)), h.index_select(0, d.reshape(-1)));
    };
    const at::Tensor pos = score(r.split.test.select(1, 0), r.split.test.select(1, 1));
    const at::Tensor neg =
        k == 0 ? score(r.split.test_neg.select(1, 0), r.split.test_neg.select(1, 1))
               : score(r.split.test.select(1, 0).view({-1, 1}).expand({-1, k}), r.split.test_neg)
                     .view({-1, k});
    const LinkMetrics want = link_metrics(pos, neg, r.split.negatives, 3);
    if (k == 0) {
      EXPECT_NEAR(got.test.roc_auc, want.roc_auc, 1e-6);
      EXPECT_NEAR(got.test.ap, want.ap, 1e-6);
    } else {
      EXPECT_NEAR(got.test.mrr, want.mrr, 1e-6);
    }
    EXPECT_NEAR(got.test.hits, want.hits, 1e-6);
    EXPECT_FALSE(std::isnan(got.val.hits));
  }
}

TEST(EvaluateLinks, NeedsStoredNegatives) {
  PlantedPartitionOptions po;
  po.num_nodes = 100;
  const Dataset ds = make_planted_partition(po);
  RandomLinkSplit r = random_link_split(ds.graph, false, {});
  r.split.negatives = LinkNegatives::kNone;
  ModelConfig c;
  c.in_dim = ds.feat_dim();
  c.num_classes = 4;
  GnnModel model(c);
  LinkDecoder decoder(DecoderKind::kDot, 4);
  EXPECT_ERROR_CONTAINS(evaluate_links(model, decoder, r.graph, ds.features, r.split, {}),
                        "stores no validation and test negatives");
}

}  // namespace
}  // namespace directgnn
