// Models of heterogeneous graphs, over the typed blocks of sampling/hetero_sampler.h.
//
// RGCN (Schlichtkrull et al.; DGL's RelGraphConv, PyG's RGCNConv with mean aggregation): node v
// of type t gets
//   h_v = W_self[t] x_v + b[t] + sum over relations r into t of W_r * mean_{u in N_r(v)} x_u
// Basis decomposition (num_bases > 0) writes each W_r of a layer as sum_b a[r][b] V_b, with
// V_b shared by the layer's relations; it needs every relation of the layer to read sources of
// one width, so a first layer over types of different widths keeps full weights.
// Heterogeneous SAGE (PyG's to_hetero(GraphSAGE) with the default sum over relations): a
// SAGEConv per relation, out_v = sum over r into t of (W_l,r mean_r(x_u) + b_r + W_r,r x_v).
// Heterogeneous GCN (DGL's HeteroGraphConv of GraphConv(norm='both'), summed) and GAT (PyG's
// to_hetero(GAT) with GATConv((-1, -1), add_self_loops=False), summed): nn/hetero_convs.h. GAT's
// hidden layers are `heads` heads of `hidden` channels, concatenated; its output layer has one.
//
// Every kind, on hidden layers, as the homogeneous models (nn/model.h): each type's sum is
// normalised (`norm`, per type), activated (ReLU; ELU for gat) and dropped out, then its input
// is added (`residual`, projected per type where the widths differ; not for a featureless
// type's empty input). With the defaults nothing is added.
//
// Inputs are per node type; a featureless type has width 0 and contributes only through the
// layers after the first (its nodes' first-layer outputs come from the relations into it).
// Hidden layers are followed by ReLU and dropout. The last layer emits logits for the target
// type only (or for each of several output types). Evaluation runs layer by layer over all nodes of
// every type with full neighbourhoods (infer), as the homogeneous models do.
#pragma once

#include <ATen/Tensor.h>
#include <torch/nn/module.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "graph/hetero_graph.h"
#include "nn/norm.h"
#include "sampling/hetero_sampler.h"

namespace directgnn {

// kMlp reads the target type's own features only (RGCN's per-type weights, no relation): the
// baseline a model of the relations must beat.
enum class HeteroModelKind { kRgcn, kHsage, kMlp, kGcn, kGat };
// "rgcn", "hsage", "mlp", "gcn" or "gat"; anything else throws naming the model parameter.
HeteroModelKind parse_hetero_model_kind(const std::string& name);
const char* hetero_model_kind_name(HeteroModelKind kind);

struct HeteroModelConfig {
  HeteroModelKind kind = HeteroModelKind::kRgcn;
  std::vector<int64_t> in_dims;                // per node type: input width (0: featureless)
  std::vector<std::pair<int, int>> relations;  // per relation: (source type, destination type)
  int target_type = 0;
  // The types the last layer emits (link prediction: both endpoints' types, num_classes wide:
  // the embeddings); empty: the target type alone.
  std::vector<int> output_types;
  int64_t hidden = 64;
  int64_t num_classes = 0;
  int64_t layers = 2;
  double dropout = 0.5;
  int64_t num_bases = 0;    // rgcn: 0 = a full weight per relation
  Norm norm = Norm::kNone;  // hidden layers, per type (see the top of this file)
  bool residual = false;
  int64_t heads = 8;        // gat: heads of each hidden layer
  double attn_dropout = 0;  // gat: dropout on the attention coefficients while training

  nlohmann::json to_json() const;
  static HeteroModelConfig from_json(const nlohmann::json& json, const std::string& where);
  void validate() const;
  // The configuration's types and relations from a dataset (in_dims from its feature tables).
  static HeteroModelConfig for_dataset(const HeteroDataset& dataset);
};

class HeteroModel : public torch::nn::Module {
 public:
  explicit HeteroModel(const HeteroModelConfig& config);

  // Logits [blocks.back().num_dst[target], num_classes] for inputs x[t] [blocks[0].num_src[t],
  // in_dims[t]] (float32 or float16, converted; an undefined tensor for a width-0 type).
  at::Tensor forward(const std::vector<HeteroBlock>& blocks, const std::vector<at::Tensor>& x);

  // The last layer's outputs per type: defined for the output types, of blocks.back().num_dst[t]
  // rows each.
  std::vector<at::Tensor> forward_outputs(const std::vector<HeteroBlock>& blocks,
                                          const std::vector<at::Tensor>& x);

  // Logits for every node of the target type, layer by layer with full neighbourhoods, `chunk`
  // destination nodes at a time, from `features` (per type, [count, in_dims[t]] or undefined).
  // No gradients, no dropout.
  at::Tensor infer(const HeteroDataset& dataset, const std::vector<at::Tensor>& features,
                   int64_t chunk = 65536);
  // The same for every output type: per type, [count, num_classes] or undefined.
  std::vector<at::Tensor> infer_outputs(const HeteroDataset& dataset,
                                        const std::vector<at::Tensor>& features,
                                        int64_t chunk = 65536);
  // Whether the last layer emits type t.
  bool emits(int t) const;

  const HeteroModelConfig& config() const { return config_; }

 private:
  // One layer: per type, the outputs of its `num_dst[t]` destination nodes, whose inputs are
  // x_dst[t] (undefined where the layer computes none: types other than the output types in the
  // last layer, or other than `only` when it is >= 0). x_src[t] holds the rows the blocks index.
  std::vector<at::Tensor> layer(size_t l, const std::vector<Block>& relations,
                                const std::vector<int64_t>& num_dst,
                                const std::vector<at::Tensor>& x_src,
                                const std::vector<at::Tensor>& x_dst, int only);
  // Relation r's term of its destinations' outputs in layer l.
  at::Tensor relation_term(size_t l, size_t r, const Block& block, const at::Tensor& x_src,
                           const at::Tensor& x_dst, int64_t rows);
  // A hidden layer's norm, activation, dropout and residual of type t's sum `h`.
  at::Tensor finish_hidden(size_t l, size_t t, at::Tensor h, const at::Tensor& x_dst);
  at::Tensor relation_weight(size_t l, size_t r) const;
  void make_relation(size_t l, size_t r, bool use_bases);
  void make_type_extras(size_t l, size_t t);
  int64_t in_width(size_t l, int type) const;
  int64_t out_width(size_t l) const;
  bool needed(size_t l, int type) const;

  HeteroModelConfig config_;
  // Per layer, per relation (rel_*, root_, gat's) or per type (self_, type_bias_, skip_).
  std::vector<std::vector<at::Tensor>> rel_weight_, rel_bias_, root_weight_, self_weight_,
      type_bias_, bases_, coeffs_, lin_dst_, att_src_, att_dst_, skip_;
  std::vector<std::vector<std::shared_ptr<FeatureNorm>>> norms_;
};

}  // namespace directgnn
