// torch::optim::Adam with a faster step for float32 parameters on the CPU.
//
// torch's C++ Adam runs eight or nine tensor operations per parameter, each a pass over memory
// and a dispatch, with three temporaries. This one runs two loops per parameter and torch's
// own square root between them, with the same floating-point operations in the same order
// (fused multiply-adds where ATen's kernels use them), so the parameters it produces are
// bitwise those of torch::optim::Adam (tests/train/fused_adam_test.cc checks it, and a probe
// checks it once per process before the first fused step). Its state and checkpoint format
// are torch::optim::Adam's. Other parameters (CUDA, other dtypes), amsgrad, a closure, ATen
// kernels that do not fuse (no AVX2/FMA, not x86-64) or a failed probe take torch's step.
#pragma once

#include <torch/optim/adam.h>

#include <vector>

namespace directgnn {

class FusedAdam : public torch::optim::Adam {
 public:
  using torch::optim::Adam::Adam;

  at::Tensor step(LossClosure closure = nullptr) override;

  // Whether this process's steps take the fused path (false: torch's step).
  bool fused() const;

 private:
  bool eligible() const;

  std::vector<at::Tensor> scratch_;  // one square-root buffer per parameter, reused
};

}  // namespace directgnn
