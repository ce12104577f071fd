// Link prediction's decoders: a score (a logit) for each (src, dst) pair from the encoder's
// embeddings of its endpoints. `dot`: their dot product, as GAE. `mlp`: OGB's baseline
// LinkPredictor, an MLP on their Hadamard product (hidden layers of the embedding width, ReLU
// and dropout between them, one output). Plain ATen operations: the same code runs on the CPU
// and the GPU.
#pragma once

#include <ATen/Tensor.h>
#include <torch/nn/module.h>

#include <memory>
#include <string>
#include <vector>

#include "nn/hetero_model.h"
#include "nn/model.h"

namespace directgnn {

enum class DecoderKind { kDot, kMlp };
// "dot" or "mlp"; anything else throws naming the decoder parameter.
DecoderKind parse_decoder_kind(const std::string& name);
const char* decoder_kind_name(DecoderKind kind);

class LinkDecoder : public torch::nn::Module {
 public:
  // `dim`: the embeddings' width; `layers`: the MLP's linear layers (>= 1; 2: one hidden).
  LinkDecoder(DecoderKind kind, int64_t dim, int64_t layers = 2, double dropout = 0.0);
  // Logits [E] for embeddings h_src, h_dst [E, dim] (row i scores pair i).
  at::Tensor forward(const at::Tensor& h_src, const at::Tensor& h_dst);
  DecoderKind kind() const { return kind_; }

 private:
  DecoderKind kind_;
  double dropout_;
  std::vector<at::Tensor> weights_, biases_;
};

// A link prediction model: the encoder (nn/model.h; its output layer gives the embeddings)
// and the decoder, as one module, so that a checkpoint holds both.
class LinkModel : public torch::nn::Module {
 public:
  LinkModel(const ModelConfig& encoder, DecoderKind decoder, int64_t decoder_layers);
  GnnModel& encoder() { return *encoder_; }
  LinkDecoder& decoder() { return *decoder_; }

 private:
  std::shared_ptr<GnnModel> encoder_;
  std::shared_ptr<LinkDecoder> decoder_;
};

// Link prediction on a heterogeneous graph: a HeteroModel encoder whose last layer emits both
// endpoint types' embeddings (num_classes wide) and the decoder, as one module.
class HeteroLinkModel : public torch::nn::Module {
 public:
  HeteroLinkModel(const HeteroModelConfig& encoder, DecoderKind decoder, int64_t decoder_layers);
  HeteroModel& encoder() { return *encoder_; }
  LinkDecoder& decoder() { return *decoder_; }

 private:
  std::shared_ptr<HeteroModel> encoder_;
  std::shared_ptr<LinkDecoder> decoder_;
};

}  // namespace directgnn
