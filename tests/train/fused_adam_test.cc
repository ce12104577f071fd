#include "train/fused_adam.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <cmath>
#include <sstream>
#include <vector>

namespace directgnn {
namespace {

// Parameters of awkward sizes (vector tails, one element, none, a layer's weight), made twice
// alike.
std::vector<at::Tensor> parameters(at::ScalarType dtype = at::kFloat) {
  at::manual_seed(3);
  std::vector<at::Tensor> params;
  for (const auto& shape :
       std::vector<std::vector<int64_t>>{{1}, {7}, {0}, {33}, {64, 1433}, {64}}) {
    params.push_back(at::randn(shape, at::TensorOptions(dtype)).set_requires_grad(true));
  }
  return params;
}

std::vector<at::Tensor> clones(const std::vector<at::Tensor>& params) {
  std::vector<at::Tensor> out;
  for (const at::Tensor& p : params) out.push_back(p.detach().clone().set_requires_grad(true));
  return out;
}

// Gives both sets the same gradients: random, of varied scale, some exactly zero, and none
// for parameter `skip` (as for a layer a step did not use).
void set_grads(std::vector<at::Tensor>& a, std::vector<at::Tensor>& b, int64_t step, size_t skip) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (i == skip) {
      a[i].mutable_grad() = at::Tensor();
      b[i].mutable_grad() = at::Tensor();
      continue;
    }
    at::Tensor g = at::randn_like(a[i].detach()) * std::pow(10.0, step % 7 - 4);
    g.masked_fill_(at::rand_like(g) < 0.1, 0);
    a[i].mutable_grad() = g.clone();
    b[i].mutable_grad() = g.clone();
  }
}

void expect_bitwise_equal(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b,
                          int64_t step) {
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_TRUE(at::equal(a[i], b[i]))
        << "parameter " << i << " differs after step " << step << ", max |diff| "
        << (a[i] - b[i]).abs().max().item<double>();
  }
}

void train_side_by_side(torch::optim::AdamOptions options, int64_t steps) {
  std::vector<at::Tensor> pa = parameters(), pb = clones(pa);
  FusedAdam fused(pa, options);
  torch::optim::Adam reference(pb, options);
  if (!fused.fused())
    GTEST_SKIP() << "the fused path is off here: ATen's kernels do not fuse "
                    "multiply-adds, or the start-up probe found other rounding";
  for (int64_t step = 0; step < steps; ++step) {
    set_grads(pa, pb, step, step % 5 == 3 ? 2 : pa.size());
    fused.step();
    reference.step();
    expect_bitwise_equal(pa, pb, step);
    if (::testing::Test::HasFailure()) return;  // one report, not one per step
  }
}

TEST(FusedAdam, MatchesTorchAdamBitwiseWithWeightDecay) {
  train_side_by_side(torch::optim::AdamOptions(0.01).weight_decay(5e-4), 60);
}

TEST(FusedAdam, MatchesTorchAdamBitwiseWithoutWeightDecayAndOtherBetas) {
  train_side_by_side(torch::optim::AdamOptions(0.003).betas({0.8, 0.95}).eps(1e-6), 60);
}

// Saves `from`'s state and loads it into `to`, through bytes as a checkpoint does.
void copy_state(const torch::optim::Optimizer& from, torch::optim::Optimizer& to) {
  torch::serialize::OutputArchive saved;
  from.save(saved);
  std::stringstream bytes;
  saved.save_to(bytes);
  torch::serialize::InputArchive loaded;
  loaded.load_from(bytes);
  to.load(loaded);
}

// A state saved by either optimizer resumes in the other with the same bits: the checkpoint
// format is torch's.
TEST(FusedAdam, StateRoundTripsThroughTorchAdamBothWays) {
  const auto options = torch::optim::AdamOptions(0.01).weight_decay(5e-4);
  std::vector<at::Tensor> pa = parameters(), pb = clones(pa);
  FusedAdam fused(pa, options);
  torch::optim::Adam reference(pb, options);
  for (int64_t step = 0; step < 5; ++step) {
    set_grads(pa, pb, step, pa.size());
    fused.step();
    reference.step();
  }
  std::vector<at::Tensor> pc = clones(pa), pd = clones(pb);
  torch::optim::Adam torch_resumed(pc, options);
  copy_state(fused, torch_resumed);
  FusedAdam fused_resumed(pd, options);
  copy_state(reference, fused_resumed);
  for (int64_t step = 5; step < 10; ++step) {
    set_grads(pb, pc, step, pa.size());
    for (size_t i = 0; i < pa.size(); ++i) {
      pa[i].mutable_grad() = pb[i].grad().clone();
      pd[i].mutable_grad() = pb[i].grad().clone();
    }
    for (torch::optim::Optimizer* o : std::initializer_list<torch::optim::Optimizer*>{
             &fused, &reference, &torch_resumed, &fused_resumed}) {
      o->step();
    }
    expect_bitwise_equal(pa, pb, step);
    expect_bitwise_equal(pc, pb, step);
    expect_bitwise_equal(pd, pb, step);
  }
}

// Groups with their own options step with their own coefficients.
TEST(FusedAdam, ParameterGroupsKeepTheirOptions) {
  std::vector<at::Tensor> pa = parameters(), pb = clones(pa);
  const auto groups = [](const std::vector<at::Tensor>& p) {
    return std::vector<torch::optim::OptimizerParamGroup>{
        {{p[0], p[1], p[2]}, std::make_unique<torch::optim::AdamOptions>(0.05)},
        {{p[3], p[4], p[5]},
         std::make_unique<torch::optim::AdamOptions>(
             torch::optim::AdamOptions(0.001).weight_decay(1e-2).betas({0.5, 0.9}))}};
  };
  FusedAdam fused(groups(pa), torch::optim::AdamOptions(1.0));
  torch::optim::Adam reference(groups(pb), torch::optim::AdamOptions(1.0));
  for (int64_t step = 0; step < 20; ++step) {
    set_grads(pa, pb, step, pa.size());
    fused.step();
    reference.step();
    expect_bitwise_equal(pa, pb, step);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(FusedAdam, OtherDtypesAndAmsgradTakeTorchsStep) {
  std::vector<at::Tensor> pa = parameters(at::kDouble), pb = clones(pa);
  FusedAdam fused(pa, torch::optim::AdamOptions(0.01));
  torch::optim::Adam reference(pb, torch::optim::AdamOptions(0.01));
  set_grads(pa, pb, 0, pa.size());
  EXPECT_FALSE(fused.fused());
  fused.step();
  reference.step();
  expect_bitwise_equal(pa, pb, 0);

  std::vector<at::Tensor> pc = parameters();
  FusedAdam ams(pc, torch::optim::AdamOptions(0.01).amsgrad(true));
  EXPECT_FALSE(ams.fused());
}

}  // namespace
}  // namespace directgnn
