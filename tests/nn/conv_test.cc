// SAGEConv and GCNConv against dense references over the full neighbourhood.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "model_test_util.h"
#include "nn/gcn_conv.h"
#include "nn/sage_conv.h"
#include "test_util.h"

namespace directgnn {
namespace {

using testing::Fixture;
using testing::param;
using testing::tiny_graph;

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

}  // namespace
}  // namespace directgnn
