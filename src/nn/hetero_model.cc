#include "nn/hetero_model.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "directgnn/error.h"
#include "nn/aggregate.h"
#include "nn/dropout.h"
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
  fail("model '", name, "' does not train heterogeneous graphs; use rgcn, hsage or mlp");
}

const char* hetero_model_kind_name(HeteroModelKind kind) {
  switch (kind) {
    case HeteroModelKind::kRgcn:
      return "rgcn";
    case HeteroModelKind::kHsage:
      return "hsage";
    case HeteroModelKind::kMlp:
      return "mlp";
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
          {"num_bases", num_bases}};
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
  return l == 0 ? config_.in_dims[static_cast<size_t>(type)] : config_.hidden;
}

int64_t HeteroModel::out_width(size_t l) const {
  return l + 1 == static_cast<size_t>(config_.layers) ? config_.num_classes : config_.hidden;
}

bool HeteroModel::emits(int t) const {
  if (config_.output_types.empty()) return t == config_.target_type;
  return std::find(config_.output_types.begin(), config_.output_types.end(), t) !=
         config_.output_types.end();
}

HeteroModel::HeteroModel(const HeteroModelConfig& config) : config_(config) {
  config_.validate();
  const size_t L = static_cast<size_t>(config_.layers);
  const size_t types = config_.in_dims.size(), rels = config_.relations.size();
  for (auto* v :
       {&rel_weight_, &rel_bias_, &root_weight_, &self_weight_, &type_bias_, &bases_, &coeffs_}) {
    v->resize(L);
  }
  // An MLP keeps RGCN's per-type weights and reads no relation.
  const bool rgcn = config_.kind != HeteroModelKind::kHsage;
  const bool reads_relations = config_.kind != HeteroModelKind::kMlp;
  for (size_t l = 0; l < L; ++l) {
    const std::string p = "layer" + std::to_string(l) + "_";
    const int64_t out = out_width(l);
    bool same_width = true;
    for (const auto& rel : config_.relations) {
      same_width = same_width && in_width(l, rel.first) == in_width(l, config_.relations[0].first);
    }
    const bool use_bases = rgcn && config_.num_bases > 0 && same_width;
    if (use_bases) {
      const int64_t in = in_width(l, config_.relations[0].first);
      bases_[l].push_back(
          register_parameter(p + "bases", uniform_init({config_.num_bases, out, in}, in)));
      coeffs_[l].push_back(register_parameter(
          p + "coeffs",
          uniform_init({static_cast<int64_t>(rels), config_.num_bases}, config_.num_bases)));
    }
    // The last layer computes the output types only: no parameters for the others.
    const bool last = l + 1 == L;
    auto needed = [&](int t) { return (!last && reads_relations) || emits(t); };
    for (size_t r = 0; r < rels; ++r) {
      const auto [s, d] = config_.relations[r];
      const int64_t in_s = in_width(l, s), in_d = in_width(l, d);
      const std::string q = p + "rel" + std::to_string(r) + "_";
      auto make = [&](const std::string& name, at::IntArrayRef shape, int64_t fan_in, bool want) {
        return want && needed(d) ? register_parameter(q + name, uniform_init(shape, fan_in))
                                 : at::Tensor();
      };
      rel_weight_[l].push_back(
          make("weight", {out, in_s}, in_s, reads_relations && in_s > 0 && !use_bases));
      if (rgcn) continue;
      rel_bias_[l].push_back(make("bias", {out}, in_s, true));
      root_weight_[l].push_back(make("root", {out, in_d}, in_d, in_d > 0));
    }
    if (!rgcn) continue;
    for (size_t t = 0; t < types; ++t) {
      const int64_t in = in_width(l, static_cast<int>(t));
      const std::string q = p + "type" + std::to_string(t) + "_";
      const bool want = needed(static_cast<int>(t));
      self_weight_[l].push_back(want && in > 0
                                    ? register_parameter(q + "self", uniform_init({out, in}, in))
                                    : at::Tensor());
      type_bias_[l].push_back(want ? register_parameter(q + "bias", at::zeros({out}))
                                   : at::Tensor());
    }
  }
}

at::Tensor HeteroModel::relation_weight(size_t l, size_t r) const {
  if (!bases_[l].empty()) {
    // W_r = sum_b a[r][b] V_b
    return at::tensordot(coeffs_[l][0][static_cast<int64_t>(r)], bases_[l][0], {0}, {0});
  }
  return rel_weight_[l][r];
}

std::vector<at::Tensor> HeteroModel::layer(size_t l, const std::vector<Block>& blocks,
                                           const std::vector<int64_t>& num_dst,
                                           const std::vector<at::Tensor>& x_src,
                                           const std::vector<at::Tensor>& x_dst_of, int only) {
  const bool last = l + 1 == static_cast<size_t>(config_.layers);
  const bool rgcn = config_.kind != HeteroModelKind::kHsage;
  const bool reads_relations = config_.kind != HeteroModelKind::kMlp;
  const size_t types = config_.in_dims.size();
  std::vector<at::Tensor> out(types);
  for (size_t t = 0; t < types; ++t) {
    if ((last || !reads_relations) && !emits(static_cast<int>(t))) continue;
    if (only >= 0 && static_cast<int>(t) != only) continue;
    const int64_t rows = num_dst[t];
    const at::Tensor& x_dst = x_dst_of[t];
    const bool has_root = in_width(l, static_cast<int>(t)) > 0;
    at::Tensor acc;
    if (rgcn) {
      acc = has_root ? parallel_linear(x_dst, self_weight_[l][t], type_bias_[l][t])
                     : type_bias_[l][t].expand({rows, out_width(l)});
    }
    for (size_t r = 0; r < config_.relations.size(); ++r) {
      const auto [s, d] = config_.relations[r];
      if (d != static_cast<int>(t) || !reads_relations) continue;
      const Block& b = blocks[r];
      const bool reads = in_width(l, s) > 0;
      if (rgcn) {
        if (!reads) continue;
        const at::Tensor mean = csr_aggregate(b.indptr, b.indices, at::Tensor(), x_src[s]);
        acc = accumulate(acc, parallel_linear(mean, relation_weight(l, r), at::Tensor()));
        continue;
      }
      at::Tensor term =
          reads ? parallel_linear(csr_aggregate(b.indptr, b.indices, at::Tensor(), x_src[s]),
                                  rel_weight_[l][r], rel_bias_[l][r])
                : rel_bias_[l][r].expand({rows, out_width(l)});
      if (has_root) term = term + parallel_linear(x_dst, root_weight_[l][r], at::Tensor());
      acc = accumulate(acc, term);
    }
    if (!acc.defined()) acc = at::zeros({rows, out_width(l)});
    if (!last) acc = directgnn::dropout(at::relu(acc), config_.dropout, is_training());
    out[t] = acc;
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
  for (size_t l = 0; l < static_cast<size_t>(config_.layers); ++l) {
    const bool last = l + 1 == static_cast<size_t>(config_.layers);
    std::vector<at::Tensor> next(types);
    for (size_t t = 0; t < types; ++t) {
      const bool other = !emits(static_cast<int>(t));
      if ((last || config_.kind == HeteroModelKind::kMlp) && other) continue;
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
          blocks[r] = full_relation_block(rel, ds.node_types[rel.src_type].count, begin, end);
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
