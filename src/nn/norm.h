// Feature normalisation between GNN layers: batch norm or layer norm over the feature
// dimension of a [rows, dim] tensor, with a learned scale (ones) and shift (zeros), as
// torch.nn.BatchNorm1d and torch.nn.LayerNorm with their defaults (eps 1e-5, momentum 0.1).
//
// Batch norm normalises with the statistics of the rows it is given while training (the
// destination nodes of a sampled block) and updates the running mean and (unbiased) variance;
// in eval mode it uses the running statistics, so layer-wise inference over chunks gives each
// row the same result whatever the chunk. The running statistics are registered buffers, so
// Module::save keeps them in checkpoints and Module::to moves them with the model.
// Plain ATen operations: the same code runs on the CPU and the GPU.
#pragma once

#include <ATen/Tensor.h>
#include <torch/nn/module.h>

#include <string>

namespace directgnn {

enum class Norm { kNone, kBatch, kLayer };

// "none", "batch" or "layer"; anything else throws naming the norm parameter.
Norm parse_norm(const std::string& name);
const char* norm_name(Norm norm);

class FeatureNorm : public torch::nn::Module {
 public:
  FeatureNorm(Norm kind, int64_t dim);
  // x [rows, dim] float32; batch norm in training mode needs at least one row.
  at::Tensor forward(const at::Tensor& x);

  static constexpr double kEps = 1e-5;
  static constexpr double kMomentum = 0.1;

 private:
  Norm kind_;
  at::Tensor weight_, bias_, running_mean_, running_var_;
};

}  // namespace directgnn
