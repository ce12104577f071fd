#include "nn/norm.h"

#include <ATen/ATen.h>

#include "directgnn/error.h"

namespace directgnn {

Norm parse_norm(const std::string& name) {
  if (name == "none") return Norm::kNone;
  if (name == "batch") return Norm::kBatch;
  if (name == "layer") return Norm::kLayer;
  fail_argument("norm", "'", name, "' is unknown; use none, batch or layer");
}

const char* norm_name(Norm norm) {
  switch (norm) {
    case Norm::kBatch:
      return "batch";
    case Norm::kLayer:
      return "layer";
    case Norm::kNone:
      break;
  }
  return "none";
}

FeatureNorm::FeatureNorm(Norm kind, int64_t dim) : kind_(kind) {
  DGNN_CHECK(kind != Norm::kNone, "FeatureNorm needs batch or layer normalisation");
  weight_ = register_parameter("weight", at::ones({dim}));
  bias_ = register_parameter("bias", at::zeros({dim}));
  if (kind_ == Norm::kBatch) {
    running_mean_ = register_buffer("running_mean", at::zeros({dim}));
    running_var_ = register_buffer("running_var", at::ones({dim}));
  }
}

at::Tensor FeatureNorm::forward(const at::Tensor& x) {
  DGNN_CHECK(x.dim() == 2 && x.size(1) == weight_.size(0), "norm: x must be [rows, ",
             weight_.size(0), "], got ", x.sizes());
  if (kind_ == Norm::kLayer) return at::layer_norm(x, {x.size(1)}, weight_, bias_, kEps);
  DGNN_CHECK_ARG(!is_training() || x.size(0) != 1, "norm",
                 "batch needs more than one row per batch while training; use a larger "
                 "batch_size or norm layer");
  if (x.size(0) == 0) return x * weight_ + bias_;
  return at::batch_norm(x, weight_, bias_, running_mean_, running_var_, is_training(), kMomentum,
                        kEps, /*cudnn_enabled=*/true);
}

}  // namespace directgnn
