// Dropout whose mask is a parallel, stateless hash of (seed, element index).
//
// Why not at::dropout: torch 1.13's CPU Bernoulli draws every element from one serial
// generator, which cost ~20% of a GraphSAGE training step on 2 cores. The seed of each call
// comes from torch's default generator, so torch::manual_seed still fixes the masks, and the
// result does not depend on the number of threads.
#pragma once

#include <ATen/Tensor.h>

namespace directgnn {

// x scaled by 1/(1-p) where kept, zero elsewhere; x itself when !training or p == 0.
at::Tensor dropout(const at::Tensor& x, double p, bool training);

}  // namespace directgnn
