// y = x W^T (+ b) for float32 CPU tensors, differentiable in x, W and b.
//
// Why not at::linear: BLAS runs single-threaded in this process (core/threads.h), so the
// product is split into row blocks over the one OpenMP pool instead. The weight gradient sums
// per-block partial products in block order, so results repeat run to run.
#pragma once

#include <ATen/Tensor.h>

namespace directgnn {

// x [M, K], weight [N, K], bias [N] or undefined.
at::Tensor parallel_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

// Glorot (Xavier) uniform over `shape`, U(-b, b) with b = sqrt(6 / (fan_in + fan_out)), as
// DGL's GraphConv and PyG's GATConv initialise their weights (draws from torch's generator).
at::Tensor glorot(at::IntArrayRef shape, int64_t fan_in, int64_t fan_out);

}  // namespace directgnn
