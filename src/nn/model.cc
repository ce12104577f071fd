#include "nn/model.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <nlohmann/json.hpp>

#include "directgnn/error.h"
#include "nn/dropout.h"
#include "nn/gcn_conv.h"
#include "nn/sage_conv.h"

namespace directgnn {

nlohmann::json ModelConfig::to_json() const {
  return {{"arch", arch},     {"in_dim", in_dim},  {"hidden", hidden}, {"num_classes", num_classes},
          {"layers", layers}, {"dropout", dropout}};
}

ModelConfig ModelConfig::from_json(const nlohmann::json& json, const std::string& where) {
  ModelConfig c;
  try {
    c.arch = json.at("arch").get<std::string>();
    c.in_dim = json.at("in_dim").get<int64_t>();
    c.hidden = json.at("hidden").get<int64_t>();
    c.num_classes = json.at("num_classes").get<int64_t>();
    c.layers = json.at("layers").get<int64_t>();
    c.dropout = json.at("dropout").get<double>();
  } catch (const nlohmann::json::exception& e) {
    fail(where, ": model configuration is incomplete or mistyped: ", e.what());
  }
  c.validate();
  return c;
}

void ModelConfig::validate() const {
  DGNN_CHECK(arch == "sage" || arch == "gcn", "--model '", arch, "' is unknown; use sage or gcn");
  DGNN_CHECK(layers >= 1, "--layers must be at least 1, got ", layers);
  DGNN_CHECK(hidden >= 1, "--hidden must be positive, got ", hidden);
  DGNN_CHECK(dropout >= 0.0 && dropout < 1.0, "--dropout must be in [0, 1), got ", dropout);
  DGNN_CHECK(in_dim >= 1 && num_classes >= 2, "model needs an input dimension and >= 2 classes");
}

GnnModel::GnnModel(const ModelConfig& config) : config_(config) {
  config_.validate();
  for (int64_t l = 0; l < config_.layers; ++l) {
    const int64_t in = l == 0 ? config_.in_dim : config_.hidden;
    const int64_t out = l + 1 == config_.layers ? config_.num_classes : config_.hidden;
    std::shared_ptr<torch::nn::Module> conv;
    if (config_.arch == "sage") {
      conv = std::make_shared<SAGEConv>(in, out);
    } else {
      conv = std::make_shared<GCNConv>(in, out);
    }
    convs_.push_back(register_module("conv" + std::to_string(l), conv));
  }
}

at::Tensor GnnModel::layer(size_t l, const Block& block, const at::Tensor& x_src,
                           const at::Tensor& x_dst) {
  at::Tensor h = config_.arch == "sage"
                     ? static_cast<SAGEConv&>(*convs_[l]).forward(block, x_src, x_dst)
                     : static_cast<GCNConv&>(*convs_[l]).forward(block, x_src, x_dst);
  if (l + 1 < convs_.size()) {
    h = at::relu(h);
    h = directgnn::dropout(h, config_.dropout, is_training());
  }
  return h;
}

at::Tensor GnnModel::forward(const std::vector<Block>& blocks, const at::Tensor& x_in) {
  DGNN_CHECK(blocks.size() == convs_.size(), "model has ", convs_.size(),
             " layers but the batch has ", blocks.size(), " blocks");
  at::Tensor x = x_in.to(at::kFloat);
  for (size_t l = 0; l < blocks.size(); ++l) {
    x = layer(l, blocks[l], x, x.narrow(0, 0, blocks[l].num_dst));
  }
  return x;
}

at::Tensor GnnModel::infer(const CsrGraph& graph, const at::Tensor& features, int64_t chunk) {
  torch::NoGradGuard no_grad;
  const bool was_training = is_training();
  eval();
  const int64_t n = graph.num_nodes();
  const at::Tensor degree = graph.degrees().to(at::kFloat);
  const int64_t* indptr = graph.indptr.data_ptr<int64_t>();
  at::Tensor x = features;
  for (size_t l = 0; l < convs_.size(); ++l) {
    const int64_t out_dim = l + 1 == convs_.size() ? config_.num_classes : config_.hidden;
    at::Tensor next = at::empty({n, out_dim}, at::kFloat);
    // A float16 table (possibly larger than memory) is never widened as a whole: each chunk
    // reads and widens just the rows its edges touch.
    const bool narrow_table = x.scalar_type() != at::kFloat;
    for (int64_t lo = 0; lo < n; lo += chunk) {
      const int64_t hi = std::min(n, lo + chunk);
      Block block;
      block.num_dst = hi - lo;
      block.num_src = n;
      block.indptr = graph.indptr.narrow(0, lo, hi - lo + 1) - indptr[lo];
      block.indices = graph.indices.narrow(0, indptr[lo], indptr[hi] - indptr[lo]);
      // Source ids are global here, so the dst rows are not a prefix of the sources: their
      // inputs and degrees are given separately.
      block.src_degree = degree;
      block.dst_degree = degree.narrow(0, lo, hi - lo);
      if (narrow_table) {
        const auto [rows, local] =
            at::_unique(block.indices.to(at::kLong), /*sorted=*/true, /*return_inverse=*/true);
        block.indices = local;
        block.num_src = rows.numel();
        block.src_degree = degree.index_select(0, rows);
        const at::Tensor x_rows = x.index_select(0, rows).to(at::kFloat);
        const at::Tensor x_dst = x.narrow(0, lo, hi - lo).to(at::kFloat);
        next.narrow(0, lo, hi - lo).copy_(layer(l, block, x_rows, x_dst));
        continue;
      }
      next.narrow(0, lo, hi - lo).copy_(layer(l, block, x, x.narrow(0, lo, hi - lo)));
    }
    x = next;
  }
  if (was_training) train();
  return x;
}

}  // namespace directgnn
