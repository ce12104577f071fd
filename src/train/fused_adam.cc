#include "train/fused_adam.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <torch/csrc/autograd/grad_mode.h>
#include <torch/csrc/autograd/variable.h>

#include <cmath>
#include <memory>
#include <vector>

namespace directgnn {
namespace {

// Adam's scalars for one parameter's step, rounded to float as ATen rounds a Scalar for a
// float32 tensor.
struct Coefficients {
  float weight_decay = 0, beta1 = 0, one_minus_beta1 = 0, beta2 = 0, one_minus_beta2 = 0;
  float sqrt_bias_correction2 = 0, eps = 0, neg_step_size = 0;
};

Coefficients coefficients(const torch::optim::AdamOptions& o, int64_t step) {
  const auto [beta1, beta2] = o.betas();
  const double bias_correction1 = 1 - std::pow(beta1, step);
  const double bias_correction2 = 1 - std::pow(beta2, step);
  Coefficients c;
  c.weight_decay = static_cast<float>(o.weight_decay());
  c.beta1 = static_cast<float>(beta1);
  c.one_minus_beta1 = static_cast<float>(1 - beta1);
  c.beta2 = static_cast<float>(beta2);
  c.one_minus_beta2 = static_cast<float>(1 - beta2);
  c.sqrt_bias_correction2 = static_cast<float>(std::sqrt(bias_correction2));
  c.eps = static_cast<float>(o.eps());
  c.neg_step_size = static_cast<float>(-(o.lr() / bias_correction1));
  return c;
}

#if defined(__x86_64__)
// The moments, as torch's Adam computes them: grad.add(p, wd) is fma(p, wd, grad);
// exp_avg.mul_(b1).add_(grad, 1 - b1) is fma(grad, 1 - b1, exp_avg * b1);
// exp_avg_sq.mul_(b2).addcmul_(grad, grad, 1 - b2) is fma((1 - b2) * grad, grad, exp_avg_sq * b2).
// This file is compiled with -ffp-contract=off, so only the written fmas are fused.
template <bool kDecay>
__attribute__((target("avx2,fma"))) void update_moments(const float* __restrict grad,
                                                        const float* __restrict param,
                                                        float* __restrict exp_avg,
                                                        float* __restrict exp_avg_sq, int64_t n,
                                                        const Coefficients& c) {
  const float wd = c.weight_decay, b1 = c.beta1, c1 = c.one_minus_beta1;
  const float b2 = c.beta2, c2 = c.one_minus_beta2;
  for (int64_t i = 0; i < n; ++i) {
    const float g = kDecay ? __builtin_fmaf(param[i], wd, grad[i]) : grad[i];
    exp_avg[i] = __builtin_fmaf(g, c1, exp_avg[i] * b1);
    exp_avg_sq[i] = __builtin_fmaf(c2 * g, g, exp_avg_sq[i] * b2);
  }
}

// p.addcdiv_(exp_avg, root / sqrt(bc2) + eps, -step_size): ATen's addcdiv rounds
// (value * t1) / t2 and then adds, with no fused operation.
__attribute__((target("avx2,fma"))) void update_param(float* __restrict param,
                                                      const float* __restrict exp_avg,
                                                      const float* __restrict root, int64_t n,
                                                      const Coefficients& c) {
  const float q = c.sqrt_bias_correction2, eps = c.eps, s = c.neg_step_size;
  for (int64_t i = 0; i < n; ++i) {
    const float denom = root[i] / q + eps;
    param[i] = param[i] + (s * exp_avg[i]) / denom;
  }
}

// ATen's vector kernels fuse a * b + c only at AVX2 and above; its DEFAULT kernels round twice.
bool fma_kernels() {
  const std::string aten = at::get_cpu_capability();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
         (aten == "AVX2" || aten == "AVX512");
}
#else
bool fma_kernels() { return false; }
template <bool kDecay>
void update_moments(const float*, const float*, float*, float*, int64_t, const Coefficients&) {}
void update_param(float*, const float*, const float*, int64_t, const Coefficients&) {}
#endif

constexpr int64_t kGrain = 16384;

bool is_float_cpu(const at::Tensor& t, const at::Tensor& like) {
  return t.defined() && !t.is_sparse() && t.device().is_cpu() && t.scalar_type() == at::kFloat &&
         t.is_contiguous() && t.sizes() == like.sizes();
}

// One step of `p` (float32, CPU, contiguous, with a gradient) and its state, fused.
void fused_step(at::Tensor& p, torch::optim::AdamParamState& state,
                const torch::optim::AdamOptions& options, at::Tensor& root) {
  state.step(state.step() + 1);
  const Coefficients c = coefficients(options, state.step());
  const float* grad = p.grad().const_data_ptr<float>();
  float* param = p.data_ptr<float>();
  float* exp_avg = state.exp_avg().data_ptr<float>();
  float* exp_avg_sq = state.exp_avg_sq().data_ptr<float>();
  const bool decay = options.weight_decay() != 0;
  at::parallel_for(0, p.numel(), kGrain, [&](int64_t lo, int64_t hi) {
    (decay ? update_moments<true> : update_moments<false>)(grad + lo, param + lo, exp_avg + lo,
                                                           exp_avg_sq + lo, hi - lo, c);
  });
  // torch's square root (MKL's, not always the correctly rounded one), so the bits match.
  if (!root.defined() || root.sizes() != p.sizes()) root = at::empty_like(p);
  at::sqrt_out(root, state.exp_avg_sq());
  const float* r = root.const_data_ptr<float>();
  at::parallel_for(0, p.numel(), kGrain, [&](int64_t lo, int64_t hi) {
    update_param(param + lo, exp_avg + lo, r + lo, hi - lo, c);
  });
  // As torch's in-place operations do, so autograd sees that these tensors changed.
  for (const at::Tensor& t : {p, state.exp_avg(), state.exp_avg_sq()}) {
    torch::autograd::impl::bump_version(t);
  }
}

std::unique_ptr<torch::optim::AdamParamState> fresh_state(const at::Tensor& p) {
  auto state = std::make_unique<torch::optim::AdamParamState>();
  state->step(0);
  state->exp_avg(at::zeros_like(p, at::MemoryFormat::Preserve));
  state->exp_avg_sq(at::zeros_like(p, at::MemoryFormat::Preserve));
  return state;
}

// Once per process: a few steps of both on a probe with weight decay, compared bit for bit.
// A torch whose Adam or kernels round otherwise than this file assumes gets torch's step.
bool probe_matches() {
  torch::NoGradGuard no_grad;
  const auto options = torch::optim::AdamOptions(0.01).weight_decay(5e-4);
  at::Tensor fused = at::linspace(-3.0, 3.0, 1031, at::kFloat);
  at::Tensor reference = fused.clone().set_requires_grad(true);
  torch::optim::Adam torch_adam({reference}, options);
  auto state = fresh_state(fused);
  at::Tensor root;
  for (int step = 1; step <= 3; ++step) {
    const at::Tensor grad = at::sin(at::linspace(0.0, 40.0 * step, 1031, at::kFloat)) * 0.01;
    fused.mutable_grad() = grad;
    reference.mutable_grad() = grad.clone();
    fused_step(fused, *state, options, root);
    torch_adam.step();
  }
  return at::equal(fused, reference.detach());
}

bool fused_available() {
  static const bool available = fma_kernels() && probe_matches();
  return available;
}

}  // namespace

bool FusedAdam::fused() const { return fused_available() && eligible(); }

bool FusedAdam::eligible() const {
  for (const auto& group : param_groups_) {
    if (static_cast<const torch::optim::AdamOptions&>(group.options()).amsgrad()) return false;
    for (const at::Tensor& p : group.params()) {
      if (!p.grad().defined()) continue;
      if (!is_float_cpu(p, p) || !is_float_cpu(p.grad(), p)) return false;
      const auto it = state_.find(p.unsafeGetTensorImpl());
      if (it == state_.end()) continue;
      const auto& s = static_cast<const torch::optim::AdamParamState&>(*it->second);
      if (!is_float_cpu(s.exp_avg(), p) || !is_float_cpu(s.exp_avg_sq(), p)) return false;
    }
  }
  return true;
}

at::Tensor FusedAdam::step(LossClosure closure) {
  if (closure != nullptr || !fused()) return torch::optim::Adam::step(std::move(closure));
  torch::NoGradGuard no_grad;
  size_t index = 0;
  for (auto& group : param_groups_) {
    const auto& options = static_cast<const torch::optim::AdamOptions&>(group.options());
    for (at::Tensor& p : group.params()) {
      const size_t slot = index++;
      if (!p.grad().defined()) continue;
      auto it = state_.find(p.unsafeGetTensorImpl());
      if (it == state_.end()) it = state_.emplace(p.unsafeGetTensorImpl(), fresh_state(p)).first;
      if (scratch_.size() <= slot) scratch_.resize(slot + 1);
      fused_step(p, static_cast<torch::optim::AdamParamState&>(*it->second), options,
                 scratch_[slot]);
    }
  }
  return {};
}

}  // namespace directgnn
