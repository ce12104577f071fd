// Dropout whose mask is a parallel, stateless hash of (seed, element index).
//
// Why not at::dropout: its masks depend on the device (CPU and CUDA generators differ) and,
// on the CPU, drew every element from one serial generator (torch 1.13: ~20% of a GraphSAGE
// step on 2 cores). This hash gives the same mask on the CPU and the GPU, whatever the
// number of threads. The seed of each call comes from torch's default generator, so
// torch::manual_seed still fixes the masks.
#pragma once

#include <ATen/Tensor.h>

namespace directgnn {

// x scaled by 1/(1-p) where kept, zero elsewhere; x itself when !training or p == 0.
at::Tensor dropout(const at::Tensor& x, double p, bool training);

}  // namespace directgnn
