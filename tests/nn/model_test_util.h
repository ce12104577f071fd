// Helpers shared by the layer and model tests.
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

#include "graph/planted_partition.h"
#include "sampling/sampler.h"

namespace directgnn::testing {

// A tiny planted-partition graph, its dense adjacency and the full-neighbourhood block over it.
struct Fixture {
  Dataset ds;
  at::Tensor adjacency;  // dense [N, N]
  Block block;           // full neighbourhood, dst = src = all nodes in order
};

inline Fixture tiny_graph(int64_t n = 40) {
  PlantedPartitionOptions o;
  o.num_nodes = n;
  o.num_classes = 3;
  o.avg_degree = 4;
  o.feat_dim = 5;
  Fixture f{make_planted_partition(o), {}, {}};
  const Sampler sampler(f.ds.graph, {{-1}});
  MiniBatch batch = sampler.sample(at::arange(n, at::kLong), 0);
  f.block = batch.blocks[0];
  EXPECT_EQ(f.block.num_src, n);  // every neighbour is already a seed
  f.adjacency = at::zeros({n, n});
  const at::Tensor rows = at::repeat_interleave(f.ds.graph.degrees());
  f.adjacency.index_put_({rows, f.ds.graph.indices.to(at::kLong)}, at::ones({rows.numel()}));
  return f;
}

struct Sampled {
  Dataset ds;
  Block block;
  at::Tensor x_src;
};

// A sampled block (fewer destinations than sources) over a planted-partition graph.
inline Sampled sampled_block(int64_t fanout, uint64_t seed) {
  PlantedPartitionOptions o;
  o.num_nodes = 200;
  o.num_classes = 3;
  o.avg_degree = 6;
  o.feat_dim = 5;
  Sampled s{make_planted_partition(o), {}, {}};
  const Sampler sampler(s.ds.graph, {{fanout}});
  const MiniBatch batch = sampler.sample(at::arange(30, at::kLong), seed);
  s.block = batch.blocks[0];
  s.x_src = s.ds.features.index_select(0, batch.input_nodes);
  return s;
}

// A parameter of `m` by name, detached.
inline at::Tensor param(torch::nn::Module& m, const std::string& name) {
  return m.named_parameters()[name].detach();
}

// Autograd's gradient of `loss` against central differences, on the first `entries` of every
// parameter of `model`. A ReLU input crossing zero inside [-eps, eps] makes the one-sided
// slopes disagree; the central difference is meaningless there, so such coordinates are
// counted, not checked, and must stay few.
inline void expect_gradient_matches_finite_differences(torch::nn::Module& model,
                                                       const std::function<at::Tensor()>& loss,
                                                       int64_t entries) {
  model.zero_grad();
  const double centre = loss().item<double>();
  loss().backward();
  int checked = 0, kinks = 0;
  for (auto& p : model.named_parameters()) {
    const at::Tensor grad = p.value().grad().clone().view({-1});
    at::Tensor flat = p.value().detach().view({-1});
    for (int64_t i = 0; i < std::min<int64_t>(flat.numel(), entries); ++i) {
      const float saved = flat[i].item<float>();
      const float eps = 1e-3f;
      flat[i] = saved + eps;
      const double up = loss().item<double>();
      flat[i] = saved - eps;
      const double down = loss().item<double>();
      flat[i] = saved;
      const double right = (up - centre) / eps, left = (centre - down) / eps;
      if (std::abs(right - left) > 1e-3 + 5e-3 * std::abs(right + left)) {
        ++kinks;
        continue;
      }
      ++checked;
      const double numeric = (up - down) / (2 * eps);
      EXPECT_NEAR(grad[i].item<double>(), numeric, 2e-3 + 2e-2 * std::abs(numeric)) << p.key();
    }
  }
  EXPECT_GE(checked, 4 * kinks) << "too many non-smooth points for the check to mean anything";
}

}  // namespace directgnn::testing
