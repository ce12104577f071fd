#include "nn/hetero_model.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "directgnn/error.h"
#include "nn/aggregate.h"
#include "nn/dropout.h"
#include "nn/hetero_convs.h"
#include "nn/linear.h"

namespace directgnn {
namespace {

// PyTorch's Linear initialisation: U(-1/sqrt(in), 1/sqrt(in)).
at::Tensor uniform_init(at::IntArrayRef shape, int64_t fan_in) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(1, fan_in)));
  return at::empty(shape).uniform_(-bound, bound);
}

// x as float32, or an empty [rows, 0] tensor for a featureless type.
at::Tensor as_input(const at::Tensor& x, int64_t rows) {
  if (!x.defined() || x.size(1) == 0) return at::empty({rows, 0});
  return x.scalar_type() == at::kFloat ? x : x.to(at::kFloat);
}

at::Tensor accumulate(const at::Tensor& acc, const at::Tensor& term) {
  return acc.defined() ? acc + term : term;
}

}  // namespace

HeteroModelKind parse_hetero_model_kind(const std::string& name) {
  if (name == "rgcn") return HeteroModelKind::kRgcn;
  if (name == "hsage") return HeteroModelKind::kHsage;
  if (name == "mlp") return HeteroModelKind::kMlp;
  if (name == "gcn") return HeteroModelKind::kGcn;
  if (name == "gat") return HeteroModelKind::kGat;
  fail("model '", name, "' does not train heterogeneous graphs; use rgcn, hsage, gcn, gat or mlp");
}

const char* hetero_model_kind_name(HeteroModelKind kind) {
  switch (kind) {
    case HeteroModelKind::kRgcn:
      return "rgcn";
    case HeteroModelKind::kHsage:
      return "hsage";
    case HeteroModelKind::kMlp:
      return "mlp";
    case HeteroModelKind::kGcn:
      return "gcn";
    case HeteroModelKind::kGat:
      return "gat";
  }
  return "?";
}

nlohmann::json HeteroModelConfig::to_json() const {
  nlohmann::json rels = nlohmann::json::array();
  for (const auto& [s, d] : relations) rels.push_back({s, d});
  return {{"kind", hetero_model_kind_name(kind)},
          {"in_dims", in_dims},
          {"relations", rels},
          {"target_type", target_type},
          {"output_types", output_types},
          {"hidden", hidden},
          {"num_classes", num_classes},
          {"layers", layers},
          {"dropout", dropout},
          {"num_bases", num_bases},
          {"norm", norm_name(norm)},
          {"residual", residual},
          {"heads", heads},
          {"attn_dropout", attn_dropout}};
}

HeteroModelConfig HeteroModelConfig::from_json(const nlohmann::json& json,
                                               const std::string& where) {
  HeteroModelConfig c;
  try {
    c.kind = parse_hetero_model_kind(json.at("kind").get<std::string>());
    c.in_dims = json.at("in_dims").get<std::vector<int64_t>>();
    for (const nlohmann::json& r : json.at("relations")) {
      c.relations.emplace_back(r.at(0).get<int>(), r.at(1).get<int>());
    }
    c.target_type = json.at("target_type").get<int>();
    c.output_types = json.value("output_types", std::vector<int>());
    c.hidden = json.at("hidden").get<int64_t>();
    c.num_classes = json.at("num_classes").get<int64_t>();
    c.layers = json.at("layers").get<int64_t>();
    c.dropout = json.at("dropout").get<double>();
    c.num_bases = json.at("num_bases").get<int64_t>();
    // Written since these options applied to heterogeneous models; older checkpoints had none.
    c.norm = parse_norm(json.value("norm", std::string("none")));
    c.residual = json.value("residual", false);
    c.heads = json.value("heads", int64_t{8});
    c.attn_dropout = json.value("attn_dropout", 0.0);
  } catch (const nlohmann::json::exception& e) {
    fail(where, ": the heterogeneous model's configuration is incomplete: ", e.what());
  }
  c.validate();
  return c;
}

void HeteroModelConfig::validate() const {
  const int types = static_cast<int>(in_dims.size());
  DGNN_CHECK(types > 0 && !relations.empty(),
             "a heterogeneous model needs node types and relations");
  DGNN_CHECK_ARG(target_type >= 0 && target_type < types, "target type", "is out of range");
  for (int t : output_types) {
    DGNN_CHECK_ARG(t >= 0 && t < types, "output types", "name a type out of range");
  }
  for (const auto& [s, d] : relations) {
    DGNN_CHECK(s >= 0 && s < types && d >= 0 && d < types, "a relation's type is out of range");
  }
  for (int64_t w : in_dims) DGNN_CHECK(w >= 0, "an input width is negative");
  DGNN_CHECK_ARG(hidden > 0, "hidden", "must be positive, got ", hidden);
  DGNN_CHECK_ARG(num_classes >= 2, "num_classes", "must be at least 2, got ", num_classes);
  DGNN_CHECK_ARG(layers >= 1, "layers", "must be at least 1, got ", layers);
  DGNN_CHECK_ARG(dropout >= 0.0 && dropout < 1.0, "dropout", "must be in [0, 1), got ", dropout);
  DGNN_CHECK_ARG(num_bases >= 0, "bases", "must not be negative, got ", num_bases);
  DGNN_CHECK_ARG(num_bases == 0 || kind == HeteroModelKind::kRgcn, "bases", "apply to rgcn only");
  DGNN_CHECK_ARG(heads >= 1, "heads", "must be at least 1, got ", heads);
  DGNN_CHECK_ARG(attn_dropout >= 0.0 && attn_dropout < 1.0, "attn_dropout",
                 "must be in [0, 1), got ", attn_dropout);
}

HeteroModelConfig HeteroModelConfig::for_dataset(const HeteroDataset& ds) {
  HeteroModelConfig c;
  for (const NodeType& t : ds.node_types) c.in_dims.push_back(t.feat_dim());
  for (const Relation& r : ds.relations) c.relations.emplace_back(r.src_type, r.dst_type);
  c.target_type = ds.target_type;
  c.num_classes = ds.num_classes;
  return c;
}

int64_t HeteroModel::in_width(size_t l, int type) const {
  return l == 0 ? config_.in_dims[static_cast<size_t>(type)] : out_width(l - 1);
}

int64_t HeteroModel::out_width(size_t l) const {
  if (l + 1 == static_cast<size_t>(config_.layers)) return config_.num_classes;
  return config_.kind == HeteroModelKind::kGat ? config_.hidden * config_.heads : config_.hidden;
}

bool HeteroModel::emits(int t) const {
  if (config_.output_types.empty()) return t == config_.target_type;
  return std::find(config_.output_types.begin(), config_.output_types.end(), t) !=
         config_.output_types.end();
}

// The last layer computes the output types only, an MLP's every layer too: no parameters for
// the others.
bool HeteroModel::needed(size_t l, int type) const {
  const bool last = l + 1 == static_cast<size_t>(config_.layers);
  return (!last && config_.kind != HeteroModelKind::kMlp) || emits(type);
}

HeteroModel::HeteroModel(const HeteroModelConfig& config) : config_(config) {
  config_.validate();
  const size_t L = static_cast<size_t>(config_.layers);
  const size_t types = config_.in_dims.size(), rels = config_.relations.size();
  for (auto* v : {&rel_weight_, &rel_bias_, &root_weight_, &self_weight_, &type_bias_, &bases_,
                  &coeffs_, &lin_dst_, &att_src_, &att_dst_, &skip_}) {
    v->resize(L);
  }
  norms_.resize(L);
  // rgcn and mlp have a self weight and bias per type; mlp reads no relation.
  const bool rgcn = config_.kind == HeteroModelKind::kRgcn || config_.kind == HeteroModelKind::kMlp;
  for (size_t l = 0; l < L; ++l) {
    const std::string p = "layer" + std::to_string(l) + "_";
    const int64_t out = out_width(l);
    bool same_width = true;
    for (const auto& rel : config_.relations) {
      same_width = same_width && in_width(l, rel.first) == in_width(l, config_.relations[0].first);
    }
    const bool use_bases =
        config_.kind == HeteroModelKind::kRgcn && config_.num_bases > 0 && same_width;
    if (use_bases) {
      const int64_t in = in_width(l, config_.relations[0].first);
      bases_[l].push_back(
          register_parameter(p + "bases", uniform_init({config_.num_bases, out, in}, in)));
      coeffs_[l].push_back(register_parameter(
          p + "coeffs",
          uniform_init({static_cast<int64_t>(rels), config_.num_bases}, config_.num_bases)));
    }
    for (size_t r = 0; r < rels; ++r) make_relation(l, r, use_bases);
    if (rgcn) {
      for (size_t t = 0; t < types; ++t) {
        const int64_t in = in_width(l, static_cast<int>(t));
        const std::string q = p + "type" + std::to_string(t) + "_";
        const bool want = needed(l, static_cast<int>(t));
        self_weight_[l].push_back(want && in > 0
                                      ? register_parameter(q + "self", uniform_init({out, in}, in))
                                      : at::Tensor());
        type_bias_[l].push_back(want ? register_parameter(q + "bias", at::zeros({out}))
                                     : at::Tensor());
      }
    }
    for (size_t t = 0; t < types; ++t) make_type_extras(l, t);
  }
}

// Relation r's parameters in layer l (undefined where the layer computes no output for r's
// destination type, or where the kind has none).
void HeteroModel::make_relation(size_t l, size_t r, bool use_bases) {
  const auto [s, d] = config_.relations[r];
  const int64_t in_s = in_width(l, s), in_d = in_width(l, d), out = out_width(l);
  const std::string q = "layer" + std::to_string(l) + "_rel" + std::to_string(r) + "_";
  const bool want = needed(l, d);
  // `init` runs only for a parameter that is made: every draw of the random stream is one the
  // model keeps.
  auto make = [&](const std::string& name, const auto& init, bool wanted) {
    return wanted && want ? register_parameter(q + name, init()) : at::Tensor();
  };
  const HeteroModelKind kind = config_.kind;
  const bool last = l + 1 == static_cast<size_t>(config_.layers);
  const auto zeros = [&] { return at::zeros({out}); };
  if (kind == HeteroModelKind::kGat) {
    const int64_t heads = last ? 1 : config_.heads, channels = last ? out : config_.hidden;
    const int64_t width = heads * channels;
    const auto projection = [&](int64_t in) {
      return [width, in] { return glorot({width, in}, in, width); };
    };
    const auto attention = [&] { return glorot({1, heads, channels}, heads, channels); };
    // A featureless source (width 0) sends nothing to attend to: the relation gives its bias;
    // a featureless destination scores by its sources alone.
    const bool reads = in_s > 0;
    rel_weight_[l].push_back(make("lin_src", projection(in_s), reads));
    lin_dst_[l].push_back(make("lin_dst", projection(in_d), reads && in_d > 0));
    att_src_[l].push_back(make("att_src", attention, reads));
    att_dst_[l].push_back(make("att_dst", attention, reads && in_d > 0));
    rel_bias_[l].push_back(make("bias", zeros, true));
    return;
  }
  if (kind == HeteroModelKind::kGcn) {
    const auto weight = [&] { return glorot({out, in_s}, in_s, out); };
    rel_weight_[l].push_back(make("weight", weight, in_s > 0));
    rel_bias_[l].push_back(make("bias", zeros, true));
    return;
  }
  const auto weight = [&] { return uniform_init({out, in_s}, in_s); };
  const auto bias = [&] { return uniform_init({out}, in_s); };
  const auto root = [&] { return uniform_init({out, in_d}, in_d); };
  const bool reads = kind != HeteroModelKind::kMlp;
  rel_weight_[l].push_back(make("weight", weight, reads && in_s > 0 && !use_bases));
  if (kind != HeteroModelKind::kHsage) return;
  rel_bias_[l].push_back(make("bias", bias, true));
  root_weight_[l].push_back(make("root", root, in_d > 0));
}

// A hidden layer's norm and residual projection of type t, where asked for: registered only
// then, so a default model has the parameters (and draws the random numbers) it always had.
void HeteroModel::make_type_extras(size_t l, size_t t) {
  const bool hidden = l + 1 < static_cast<size_t>(config_.layers);
  const bool want = hidden && needed(l, static_cast<int>(t));
  const int64_t in = in_width(l, static_cast<int>(t)), out = out_width(l);
  const std::string q = "layer" + std::to_string(l) + "_type" + std::to_string(t) + "_";
  norms_[l].push_back(
      want && config_.norm != Norm::kNone
          ? register_module(q + "norm", std::make_shared<FeatureNorm>(config_.norm, out))
          : nullptr);
  skip_[l].push_back(want && config_.residual && in > 0 && in != out
                         ? register_parameter(q + "skip", uniform_init({out, in}, in))
                         : at::Tensor());
}

at::Tensor HeteroModel::relation_weight(size_t l, size_t r) const {
  if (!bases_[l].empty()) {
    // W_r = sum_b a[r][b] V_b
    return at::tensordot(coeffs_[l][0][static_cast<int64_t>(r)], bases_[l][0], {0}, {0});
  }
  return rel_weight_[l][r];
}

at::Tensor HeteroModel::relation_term(size_t l, size_t r, const Block& b, const at::Tensor& x_src,
                                      const at::Tensor& x_dst, int64_t rows) {
  const int s = config_.relations[r].first;
  const bool reads = in_width(l, s) > 0;
  switch (config_.kind) {
    case HeteroModelKind::kRgcn: {
      if (!reads) return at::Tensor();
      const at::Tensor mean = csr_aggregate(b.indptr, b.indices, at::Tensor(), x_src);
      return parallel_linear(mean, relation_weight(l, r), at::Tensor());
    }
    case HeteroModelKind::kGcn:
      return reads ? relation_gcn(b, x_src, rel_weight_[l][r], rel_bias_[l][r])
                   : rel_bias_[l][r].expand({rows, out_width(l)});
    case HeteroModelKind::kGat: {
      if (!reads) return rel_bias_[l][r].expand({rows, out_width(l)});
      const bool last = l + 1 == static_cast<size_t>(config_.layers);
      RelationGat p{rel_weight_[l][r],
                    lin_dst_[l][r],
                    att_src_[l][r],
                    att_dst_[l][r],
                    rel_bias_[l][r],
                    last ? 1 : config_.heads,
                    last ? out_width(l) : config_.hidden,
                    !last};
      return relation_gat(b, x_src, x_dst, p, config_.attn_dropout, is_training());
    }
    case HeteroModelKind::kHsage: {
      at::Tensor term =
          reads ? parallel_linear(csr_aggregate(b.indptr, b.indices, at::Tensor(), x_src),
                                  rel_weight_[l][r], rel_bias_[l][r])
                : rel_bias_[l][r].expand({rows, out_width(l)});
      if (root_weight_[l][r].defined()) {
        term = term + parallel_linear(x_dst, root_weight_[l][r], at::Tensor());
      }
      return term;
    }
    default:
      return at::Tensor();  // mlp reads no relation
  }
}

at::Tensor HeteroModel::finish_hidden(size_t l, size_t t, at::Tensor h, const at::Tensor& x_dst) {
  // Batch norm needs a row to take statistics of; a type without destinations here has none.
  if (norms_[l][t] && h.size(0) > 0) h = norms_[l][t]->forward(h);
  h = config_.kind == HeteroModelKind::kGat ? at::elu(h) : at::relu(h);
  h = directgnn::dropout(h, config_.dropout, is_training());
  if (config_.residual && x_dst.size(1) > 0) {
    h = h + (skip_[l][t].defined() ? parallel_linear(x_dst, skip_[l][t], at::Tensor()) : x_dst);
  }
  return h;
}

std::vector<at::Tensor> HeteroModel::layer(size_t l, const std::vector<Block>& blocks,
                                           const std::vector<int64_t>& num_dst,
                                           const std::vector<at::Tensor>& x_src,
                                           const std::vector<at::Tensor>& x_dst_of, int only) {
  const bool last = l + 1 == static_cast<size_t>(config_.layers);
  const bool rgcn = config_.kind == HeteroModelKind::kRgcn || config_.kind == HeteroModelKind::kMlp;
  const size_t types = config_.in_dims.size();
  std::vector<at::Tensor> out(types);
  for (size_t t = 0; t < types; ++t) {
    if (!needed(l, static_cast<int>(t))) continue;
    if (only >= 0 && static_cast<int>(t) != only) continue;
    const int64_t rows = num_dst[t];
    const at::Tensor& x_dst = x_dst_of[t];
    at::Tensor acc;
    if (rgcn) {
      acc = self_weight_[l][t].defined()
                ? parallel_linear(x_dst, self_weight_[l][t], type_bias_[l][t])
                : type_bias_[l][t].expand({rows, out_width(l)});
    }
    for (size_t r = 0; r < config_.relations.size(); ++r) {
      const auto [s, d] = config_.relations[r];
      if (d != static_cast<int>(t)) continue;
      const at::Tensor term = relation_term(l, r, blocks[r], x_src[s], x_dst, rows);
      if (term.defined()) acc = accumulate(acc, term);
    }
    if (!acc.defined()) acc = at::zeros({rows, out_width(l)});
    out[t] = last ? acc : finish_hidden(l, t, acc, x_dst);
  }
  return out;
}

at::Tensor HeteroModel::forward(const std::vector<HeteroBlock>& blocks,
                                const std::vector<at::Tensor>& x) {
  return forward_outputs(blocks, x)[static_cast<size_t>(config_.target_type)];
}

std::vector<at::Tensor> HeteroModel::forward_outputs(const std::vector<HeteroBlock>& blocks,
                                                     const std::vector<at::Tensor>& x) {
  DGNN_CHECK(static_cast<int64_t>(blocks.size()) == config_.layers, "the model has ",
             config_.layers, " layers but the batch has ", blocks.size(), " blocks");
  DGNN_CHECK(x.size() == config_.in_dims.size(), "the model has ", config_.in_dims.size(),
             " node types but the inputs have ", x.size());
  std::vector<at::Tensor> h(x.size());
  for (size_t t = 0; t < x.size(); ++t) h[t] = as_input(x[t], blocks[0].num_src[t]);
  for (size_t l = 0; l < blocks.size(); ++l) {
    std::vector<at::Tensor> x_dst(h.size());
    for (size_t t = 0; t < h.size(); ++t) {
      if (h[t].defined()) x_dst[t] = h[t].narrow(0, 0, blocks[l].num_dst[t]);
    }
    h = layer(l, blocks[l].relations, blocks[l].num_dst, h, x_dst, -1);
  }
  return h;
}

at::Tensor HeteroModel::infer(const HeteroDataset& ds, const std::vector<at::Tensor>& features,
                              int64_t chunk) {
  return infer_outputs(ds, features, chunk)[static_cast<size_t>(config_.target_type)];
}

std::vector<at::Tensor> HeteroModel::infer_outputs(const HeteroDataset& ds,
                                                   const std::vector<at::Tensor>& features,
                                                   int64_t chunk) {
  at::NoGradGuard no_grad;
  const bool was_training = is_training();
  eval();
  const size_t types = ds.node_types.size();
  std::vector<at::Tensor> h(types);
  for (size_t t = 0; t < types; ++t) h[t] = as_input(features[t], ds.node_types[t].count);
  // gcn normalises by the whole graph's degrees, counted once.
  const std::vector<RelationDegrees> degrees =
      config_.kind == HeteroModelKind::kGcn ? relation_degrees(ds) : std::vector<RelationDegrees>();
  for (size_t l = 0; l < static_cast<size_t>(config_.layers); ++l) {
    std::vector<at::Tensor> next(types);
    for (size_t t = 0; t < types; ++t) {
      if (!needed(l, static_cast<int>(t))) continue;
      const int64_t count = ds.node_types[t].count;
      next[t] = at::empty({count, out_width(l)});
      for (int64_t begin = 0; begin < count; begin += chunk) {
        const int64_t end = std::min(count, begin + chunk);
        std::vector<Block> blocks(ds.relations.size());
        std::vector<int64_t> num_dst(types, 0);
        num_dst[t] = end - begin;
        // Sources are whole tables (the blocks hold global ids); the root reads the chunk.
        std::vector<at::Tensor> x_dst(types);
        x_dst[t] = h[t].narrow(0, begin, end - begin);
        for (size_t r = 0; r < ds.relations.size(); ++r) {
          const Relation& rel = ds.relations[r];
          if (rel.dst_type != static_cast<int>(t)) continue;
          blocks[r] = full_relation_block(rel, ds.node_types[rel.src_type].count, begin, end,
                                          degrees.empty() ? nullptr : &degrees[r]);
        }
        std::vector<at::Tensor> out = layer(l, blocks, num_dst, h, x_dst, static_cast<int>(t));
        next[t].narrow(0, begin, end - begin).copy_(out[t]);
      }
    }
    h = std::move(next);
  }
  if (was_training) train();
  return h;
}

}  // namespace directgnn
