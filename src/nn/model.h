// The GNN models: a stack of SAGEConv, GCNConv or GATConv layers with an activation (ReLU;
// ELU for GAT, as in the GAT paper and PyG's example) and dropout between them.
// Optionally (--norm, --residual) each hidden layer l computes
//   h = dropout(act(norm(conv_l(x)))) + skip_l(x_dst)
// where x_dst is the layer's input at its destination nodes (the prefix of a sampled block's
// sources) and skip_l is the identity, or a bias-free linear map when the input width is not
// the hidden width (layer 0 normally). The output layer has neither: its width is the number of
// classes. With the defaults (no norm, no residual) nothing is added, so parameters, random
// draws and outputs are those of the plain stack.
// GAT follows PyG's GAT example: hidden layers have `heads` heads of `hidden` channels each,
// concatenated (hidden * heads wide); the output layer has one head.
// Training runs on sampled blocks; evaluation runs layer by layer over the whole graph with
// every neighbour (as DGL's offline inference), so its cost is linear in nodes and edges
// instead of exploding with the number of hops.
#pragma once

#include <ATen/Tensor.h>
#include <torch/nn/module.h>

#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "graph/csr_graph.h"
#include "nn/norm.h"
#include "sampling/block.h"

namespace directgnn {

// The layer type of a model: GraphSAGE (mean), GCN, or GAT (graph attention).
enum class ModelKind { kSage, kGcn, kGat };
// "sage", "gcn" or "gat"; anything else throws naming the model parameter.
ModelKind parse_model_kind(const std::string& name);
const char* model_kind_name(ModelKind kind);

struct ModelConfig {
  ModelKind kind = ModelKind::kSage;
  int64_t in_dim = 0;
  int64_t hidden = 256;  // per head for gat
  int64_t num_classes = 0;
  int64_t layers = 2;
  double dropout = 0.5;
  Norm norm = Norm::kNone;    // on hidden layers, after the convolution, before the activation
  bool residual = false;      // add each hidden layer's input (projected when widths differ)
  int64_t heads = 8;          // gat: attention heads of each hidden layer
  double attn_dropout = 0.6;  // gat: dropout on the attention coefficients, while training

  // What the trainer and the loader ask of a kind:
  // hidden layers have `heads` attention heads, concatenated (GAT);
  bool has_heads() const { return kind == ModelKind::kGat; }
  // layer 0 aggregates its sources before it projects them (SAGE, GCN; GAT projects every
  // source first), so it can read them from the feature table in place.
  bool aggregates_sources_first() const { return kind != ModelKind::kGat; }
  // A hidden layer's output width: hidden, or hidden * heads with heads (concatenated).
  int64_t hidden_width() const { return has_heads() ? hidden * heads : hidden; }

  nlohmann::json to_json() const;
  // Configurations saved before norm, residual, heads and attn_dropout existed load with
  // their defaults.
  static ModelConfig from_json(const nlohmann::json& json, const std::string& where);
  void validate() const;
};

// What layer-wise inference may be given: where each layer's output rows go (a tensor of
// [rows, dim] float32, for example one backed by a memory-mapped file, so that layers larger
// than memory stream through the page cache; at::empty when unset), and a callback after each
// chunk of destination nodes (layer, rows done, rows of the layer).
struct InferHooks {
  std::function<at::Tensor(size_t layer, int64_t rows, int64_t dim)> output;
  std::function<void(size_t layer, int64_t done, int64_t rows)> progress;
  // Where layer 0's input rows come from when the feature table is not all here (sharded
  // over ranks): the rows of the sorted global ids asked for, as a dense [len(ids), F] table.
  // Unset: `features` is the whole table, read by global id.
  std::function<at::Tensor(const at::Tensor& ids)> input_rows;
};

class GnnModel : public torch::nn::Module {
 public:
  explicit GnnModel(const ModelConfig& config);

  // Logits [blocks.back().num_dst, num_classes] for input features x [blocks[0].num_src, in]
  // (float32 or float16; converted to float32). With a `source_table` (SAGE and GCN), x holds
  // only blocks[0]'s destination rows, and blocks[0] reads its sources from the table by
  // global id (its indices and src_degree are global; MinibatchLoader's sources_in_place).
  at::Tensor forward(const std::vector<Block>& blocks, const at::Tensor& x,
                     const at::Tensor& source_table = at::Tensor());

  // Logits for every node of `graph`, with full neighbourhoods, `chunk` destination nodes at
  // a time. Runs without gradients and without dropout.
  at::Tensor infer(const CsrGraph& graph, const at::Tensor& features, int64_t chunk = 65536);
  // The same for `targets` only (int64 ids; the result's rows follow their sorted unique
  // order). Each layer computes just the nodes the next one reads: for a few thousand
  // targets on a huge graph, memory and time follow their neighbourhoods, not the graph.
  at::Tensor infer_nodes(const CsrGraph& graph, const at::Tensor& features,
                         const at::Tensor& targets, int64_t chunk = 65536,
                         const InferHooks& hooks = {});

  // Layer l's outputs for `block`'s destinations, as infer computes them (the caller sets eval
  // mode and turns gradients off): `x_src` the rows block.indices index, `x_dst` the
  // destinations' own rows, both float32. For inference whose layers span machines
  // (train/evaluate.h, PartEvaluator).
  at::Tensor infer_layer(size_t l, const Block& block, const at::Tensor& x_src,
                         const at::Tensor& x_dst) {
    return layer(l, block, x_src, x_dst);
  }
  size_t num_layers() const { return convs_.size(); }

  const ModelConfig& config() const { return config_; }

 private:
  at::Tensor layer(size_t l, const Block& block, const at::Tensor& x_src, const at::Tensor& x_dst);

  ModelConfig config_;
  std::vector<std::shared_ptr<torch::nn::Module>> convs_;
  std::vector<std::shared_ptr<FeatureNorm>> norms_;  // per hidden layer; null without --norm
  std::vector<at::Tensor> skip_weights_;  // per hidden layer; undefined for an identity skip
};

}  // namespace directgnn
