#include "nn/model.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "directgnn/error.h"
#include "nn/dropout.h"
#include "nn/gat_conv.h"
#include "nn/gcn_conv.h"
#include "nn/linear.h"
#include "nn/sage_conv.h"

namespace directgnn {

ModelKind parse_model_kind(const std::string& name) {
  if (name == "sage") return ModelKind::kSage;
  if (name == "gcn") return ModelKind::kGcn;
  if (name == "gat") return ModelKind::kGat;
  fail_argument("model", "'", name, "' is unknown; use sage, gcn or gat");
}

const char* model_kind_name(ModelKind kind) {
  switch (kind) {
    case ModelKind::kSage:
      return "sage";
    case ModelKind::kGcn:
      return "gcn";
    case ModelKind::kGat:
      return "gat";
  }
  return "unknown";
}

nlohmann::json ModelConfig::to_json() const {
  return {{"arch", model_kind_name(kind)}, {"in_dim", in_dim},     {"hidden", hidden},
          {"num_classes", num_classes},    {"layers", layers},     {"dropout", dropout},
          {"norm", norm_name(norm)},       {"residual", residual}, {"heads", heads},
          {"attn_dropout", attn_dropout}};
}

ModelConfig ModelConfig::from_json(const nlohmann::json& json, const std::string& where) {
  ModelConfig c;
  try {
    c.kind = parse_model_kind(json.at("arch").get<std::string>());
    c.in_dim = json.at("in_dim").get<int64_t>();
    c.hidden = json.at("hidden").get<int64_t>();
    c.num_classes = json.at("num_classes").get<int64_t>();
    c.layers = json.at("layers").get<int64_t>();
    c.dropout = json.at("dropout").get<double>();
    c.norm = parse_norm(json.value("norm", std::string("none")));
    c.residual = json.value("residual", false);
    c.heads = json.value("heads", c.heads);
    c.attn_dropout = json.value("attn_dropout", c.attn_dropout);
  } catch (const nlohmann::json::exception& e) {
    fail(where, ": model configuration is incomplete or mistyped: ", e.what());
  } catch (const Error& e) {
    fail(where, ": model configuration holds a bad value: ", e.what());
  }
  c.validate();
  return c;
}

void ModelConfig::validate() const {
  DGNN_CHECK_ARG(layers >= 1, "layers", "must be at least 1, got ", layers);
  DGNN_CHECK_ARG(hidden >= 1, "hidden", "must be positive, got ", hidden);
  DGNN_CHECK_ARG(dropout >= 0.0 && dropout < 1.0, "dropout", "must be in [0, 1), got ", dropout);
  DGNN_CHECK_ARG(heads >= 1, "heads", "must be at least 1, got ", heads);
  DGNN_CHECK_ARG(attn_dropout >= 0.0 && attn_dropout < 1.0, "attn_dropout",
                 "must be in [0, 1), got ", attn_dropout, "; use 0 for no attention dropout");
  DGNN_CHECK(in_dim >= 1 && num_classes >= 2, "model needs an input dimension and >= 2 classes");
}

GnnModel::GnnModel(const ModelConfig& config) : config_(config) {
  config_.validate();
  for (int64_t l = 0; l < config_.layers; ++l) {
    const bool last = l + 1 == config_.layers;
    const int64_t in = l == 0 ? config_.in_dim : config_.hidden_width();
    const int64_t out = last ? config_.num_classes : config_.hidden_width();
    std::shared_ptr<torch::nn::Module> conv;
    if (config_.kind == ModelKind::kSage) {
      conv = std::make_shared<SAGEConv>(in, out);
    } else if (config_.kind == ModelKind::kGcn) {
      conv = std::make_shared<GCNConv>(in, out);
    } else if (last) {
      conv = std::make_shared<GATConv>(in, out, 1, false, config_.attn_dropout);
    } else {
      conv =
          std::make_shared<GATConv>(in, config_.hidden, config_.heads, true, config_.attn_dropout);
    }
    convs_.push_back(register_module("conv" + std::to_string(l), conv));
    if (l + 1 == config_.layers) break;
    // Registered only when asked for, so a default model has the parameters (and draws the
    // random numbers) it always had.
    norms_.push_back(config_.norm == Norm::kNone
                         ? nullptr
                         : register_module("norm" + std::to_string(l),
                                           std::make_shared<FeatureNorm>(config_.norm, out)));
    at::Tensor skip;
    if (config_.residual && in != out) {
      const double bound = 1.0 / std::sqrt(static_cast<double>(in));
      skip = register_parameter("skip" + std::to_string(l) + "_weight",
                                at::empty({out, in}).uniform_(-bound, bound));
    }
    skip_weights_.push_back(skip);
  }
}

at::Tensor GnnModel::layer(size_t l, const Block& block, const at::Tensor& x_src,
                           const at::Tensor& x_dst) {
  at::Tensor h;
  if (config_.kind == ModelKind::kSage) {
    h = static_cast<SAGEConv&>(*convs_[l]).forward(block, x_src, x_dst);
  } else if (config_.kind == ModelKind::kGcn) {
    h = static_cast<GCNConv&>(*convs_[l]).forward(block, x_src, x_dst);
  } else {
    h = static_cast<GATConv&>(*convs_[l]).forward(block, x_src, x_dst);
  }
  if (l + 1 < convs_.size()) {
    if (norms_[l]) h = norms_[l]->forward(h);
    h = config_.kind == ModelKind::kGat ? at::elu(h) : at::relu(h);
    h = directgnn::dropout(h, config_.dropout, is_training());
    if (config_.residual) {
      h = h + (skip_weights_[l].defined() ? parallel_linear(x_dst, skip_weights_[l], at::Tensor())
                                          : x_dst);
    }
  }
  return h;
}

at::Tensor GnnModel::forward(const std::vector<Block>& blocks, const at::Tensor& x_in,
                             const at::Tensor& source_table) {
  DGNN_CHECK(blocks.size() == convs_.size(), "model has ", convs_.size(),
             " layers but the batch has ", blocks.size(), " blocks");
  at::Tensor x = x_in.to(at::kFloat);
  size_t first = 0;
  if (source_table.defined()) {
    DGNN_CHECK(config_.aggregates_sources_first(),
               "forward: only SAGE and GCN read their sources from a table; pass them as x");
    DGNN_CHECK(x.size(0) == blocks[0].num_dst && source_table.scalar_type() == at::kFloat,
               "forward: with a source table, x must hold block 0's ", blocks[0].num_dst,
               " destination rows (got ", x.size(0), ") and the table must be float32");
    DGNN_CHECK(source_table.dim() == 2 && source_table.size(0) == blocks[0].num_src &&
                   source_table.size(1) == config_.in_dim && source_table.device() == x.device(),
               "forward: the source table must be [block 0's num_src = ", blocks[0].num_src, ", ",
               config_.in_dim, "] on x's device (block 0's ids global), got ",
               source_table.sizes());
    x = layer(0, blocks[0], source_table, x);
    first = 1;
  }
  for (size_t l = first; l < blocks.size(); ++l) {
    x = layer(l, blocks[l], x, x.narrow(0, 0, blocks[l].num_dst));
  }
  return x;
}

namespace {

// A set of nodes given by sorted global ids, or every node of the graph.
struct NodeSet {
  at::Tensor ids;  // int64, sorted; undefined when `all`
  bool all = false;

  int64_t size(int64_t n) const { return all ? n : ids.numel(); }
  at::Tensor range(int64_t lo, int64_t hi) const {
    return all ? at::arange(lo, hi, at::kLong) : ids.narrow(0, lo, hi - lo);
  }
  // Rows of a table over this set holding the global nodes `global` (which it contains).
  at::Tensor rows_of(const at::Tensor& global) const {
    return all ? global.to(at::kLong) : at::searchsorted(ids, global.to(at::kLong));
  }
};

// The CSR rows of `nodes`: local offsets from 0 and the neighbours' global ids.
std::pair<at::Tensor, at::Tensor> gather_rows(const CsrGraph& graph, const at::Tensor& nodes) {
  const at::Tensor start = graph.indptr.index_select(0, nodes);
  const at::Tensor length = graph.indptr.index_select(0, nodes + 1) - start;
  const at::Tensor ptr = at::cat({at::zeros({1}, at::kLong), length.cumsum(0)});
  at::Tensor out = at::empty({ptr[-1].item<int64_t>()}, graph.indices.options());
  const int64_t* s = start.data_ptr<int64_t>();
  const int64_t* p = ptr.data_ptr<int64_t>();
  const auto width = static_cast<int64_t>(graph.indices.element_size());
  const auto* src = static_cast<const uint8_t*>(graph.indices.data_ptr());
  auto* dst = static_cast<uint8_t*>(out.data_ptr());
  at::parallel_for(0, nodes.numel(), 1024, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      std::memcpy(dst + p[i] * width, src + s[i] * width,
                  static_cast<size_t>((p[i + 1] - p[i]) * width));
    }
  });
  return {ptr, out};
}

// The nodes `layer_inputs` must be known at to compute `outputs` with full neighbourhoods.
NodeSet with_neighbours(const CsrGraph& graph, const NodeSet& outputs) {
  if (outputs.all) return outputs;
  const at::Tensor neighbours = gather_rows(graph, outputs.ids).second.to(at::kLong);
  NodeSet in{std::get<0>(at::_unique(at::cat({outputs.ids, neighbours}), /*sorted=*/true))};
  in.all = in.ids.numel() == graph.num_nodes();
  return in;
}

}  // namespace

at::Tensor GnnModel::infer(const CsrGraph& graph, const at::Tensor& features, int64_t chunk) {
  return infer_nodes(graph, features, at::Tensor(), chunk);
}

at::Tensor GnnModel::infer_nodes(const CsrGraph& graph, const at::Tensor& features,
                                 const at::Tensor& targets, int64_t chunk,
                                 const InferHooks& hooks) {
  torch::NoGradGuard no_grad;
  const bool was_training = is_training();
  eval();
  const int64_t n = graph.num_nodes();
  const at::Tensor degree = graph.degrees().to(at::kFloat);
  const int64_t* indptr = graph.indptr.data_ptr<int64_t>();
  // sets[l]: the nodes layer l computes outputs for; sets[L] = targets.
  const size_t num_layers = convs_.size();
  std::vector<NodeSet> sets(num_layers + 1);
  sets[num_layers] = targets.defined() ? NodeSet{std::get<0>(at::_unique(targets.to(at::kLong)))}
                                       : NodeSet{at::Tensor(), true};
  for (size_t l = num_layers; l > 1; --l) sets[l - 1] = with_neighbours(graph, sets[l]);
  at::Tensor x = features;
  if (hooks.input_rows) {
    // Layer 0 reads just the rows it needs, fetched in sorted id order.
    sets[0] = num_layers > 0 ? with_neighbours(graph, sets[1]) : sets[1];
    if (!sets[0].ids.defined()) sets[0].ids = at::arange(n, at::kLong);
    sets[0].all = false;
    x = hooks.input_rows(sets[0].ids);
  } else {
    sets[0] = NodeSet{at::Tensor(), true};  // layer 0 reads the feature table by global id
  }
  for (size_t l = 0; l < num_layers; ++l) {
    const NodeSet& in = sets[l];
    const NodeSet& out = sets[l + 1];
    const int64_t count = out.size(n);
    const int64_t out_dim = l + 1 == num_layers ? config_.num_classes : config_.hidden_width();
    at::Tensor next =
        hooks.output ? hooks.output(l, count, out_dim) : at::empty({count, out_dim}, at::kFloat);
    // A float16 table (possibly larger than memory) is never widened as a whole: each chunk
    // reads and widens just the rows its edges touch. GAT projects its sources before
    // aggregating, so it too takes just those rows, not the whole table once per chunk.
    const bool narrow_table = x.scalar_type() != at::kFloat || !config_.aggregates_sources_first();
    const at::Tensor src_degree = in.all ? degree : degree.index_select(0, in.ids);
    for (int64_t lo = 0; lo < count; lo += chunk) {
      const int64_t hi = std::min(count, lo + chunk);
      Block block;
      block.num_dst = hi - lo;
      block.num_src = in.size(n);
      at::Tensor dst_rows;  // rows of x holding the chunk's own nodes
      if (out.all) {
        block.indptr = graph.indptr.narrow(0, lo, hi - lo + 1) - indptr[lo];
        block.indices = graph.indices.narrow(0, indptr[lo], indptr[hi] - indptr[lo]);
        block.dst_degree = degree.narrow(0, lo, hi - lo);
      } else {
        const at::Tensor nodes = out.range(lo, hi);
        std::tie(block.indptr, block.indices) = gather_rows(graph, nodes);
        block.indices = in.rows_of(block.indices);
        block.dst_degree = degree.index_select(0, nodes);
        dst_rows = in.rows_of(nodes);
      }
      // Sources are rows of x, not a prefix of the chunk: inputs and degrees go separately.
      block.src_degree = src_degree;
      const at::Tensor x_dst =
          dst_rows.defined() ? x.index_select(0, dst_rows) : x.narrow(0, lo, hi - lo);
      if (narrow_table) {
        const auto [rows, local] =
            at::_unique(block.indices.to(at::kLong), /*sorted=*/true, /*return_inverse=*/true);
        block.indices = local;
        block.num_src = rows.numel();
        block.src_degree = block.src_degree.index_select(0, rows);
        next.narrow(0, lo, hi - lo)
            .copy_(layer(l, block, x.index_select(0, rows).to(at::kFloat), x_dst.to(at::kFloat)));
      } else {
        next.narrow(0, lo, hi - lo).copy_(layer(l, block, x, x_dst));
      }
      if (hooks.progress) hooks.progress(l, hi, count);
    }
    x = next;
  }
  if (was_training) train();
  return x;
}

}  // namespace directgnn
