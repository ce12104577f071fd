#include "nn/link_decoder.h"

#include <ATen/ATen.h>

#include <cmath>

#include "directgnn/error.h"
#include "nn/linear.h"

namespace directgnn {

DecoderKind parse_decoder_kind(const std::string& name) {
  if (name == "dot") return DecoderKind::kDot;
  if (name == "mlp") return DecoderKind::kMlp;
  fail_argument("decoder", "'", name,
                "' is not dot (the embeddings' dot product) or mlp (an MLP on their Hadamard "
                "product, as OGB's baselines)");
}

const char* decoder_kind_name(DecoderKind kind) {
  return kind == DecoderKind::kDot ? "dot" : "mlp";
}

LinkDecoder::LinkDecoder(DecoderKind kind, int64_t dim, int64_t layers, double dropout)
    : kind_(kind), dropout_(dropout) {
  DGNN_CHECK_ARG(dim >= 1, "hidden", "the embedding width must be positive, got ", dim);
  if (kind_ != DecoderKind::kMlp) return;
  DGNN_CHECK_ARG(layers >= 1, "decoder_layers", "must be at least 1, got ", layers);
  DGNN_CHECK_ARG(dropout >= 0 && dropout < 1, "dropout", "must be in [0, 1), got ", dropout);
  // PyTorch's Linear initialisation: U(-1/sqrt(in), 1/sqrt(in)).
  const double bound = 1.0 / std::sqrt(static_cast<double>(dim));
  for (int64_t l = 0; l < layers; ++l) {
    const int64_t out = l + 1 == layers ? 1 : dim;
    const std::string name = "mlp" + std::to_string(l);
    weights_.push_back(
        register_parameter(name + "_weight", at::empty({out, dim}).uniform_(-bound, bound)));
    biases_.push_back(register_parameter(name + "_bias", at::empty({out}).uniform_(-bound, bound)));
  }
}

at::Tensor LinkDecoder::forward(const at::Tensor& h_src, const at::Tensor& h_dst) {
  DGNN_CHECK(h_src.sizes() == h_dst.sizes() && h_src.dim() == 2,
             "link decoder: source and destination embeddings must both be [E, dim]");
  if (kind_ == DecoderKind::kDot) return (h_src * h_dst).sum(1);
  at::Tensor h = h_src * h_dst;
  for (size_t l = 0; l < weights_.size(); ++l) {
    // The CPU's product over the one OpenMP pool (nn/linear.h), BLAS's on a GPU.
    h = h.is_cpu() && h.scalar_type() == at::kFloat ? parallel_linear(h, weights_[l], biases_[l])
                                                    : at::linear(h, weights_[l], biases_[l]);
    if (l + 1 == weights_.size()) break;
    h = at::relu(h);
    if (dropout_ > 0 && is_training()) h = at::dropout(h, dropout_, true);
  }
  return h.view({-1});
}

LinkModel::LinkModel(const ModelConfig& encoder, DecoderKind decoder, int64_t decoder_layers)
    : encoder_(register_module("encoder", std::make_shared<GnnModel>(encoder))),
      // No dropout in the decoder, as OGB's baselines run it.
      decoder_(register_module(
          "decoder", std::make_shared<LinkDecoder>(decoder, encoder.num_classes, decoder_layers))) {
}

HeteroLinkModel::HeteroLinkModel(const HeteroModelConfig& encoder, DecoderKind decoder,
                                 int64_t decoder_layers)
    : encoder_(register_module("encoder", std::make_shared<HeteroModel>(encoder))),
      decoder_(register_module(
          "decoder", std::make_shared<LinkDecoder>(decoder, encoder.num_classes, decoder_layers))) {
}

}  // namespace directgnn
