#include "sampling/link_sampler.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <unordered_map>
#include <utility>

#include "core/random.h"
#include "directgnn/error.h"
#include "graph/coo_builder.h"
#include "sampling/excluded_pairs.h"
#include "sampling/gpu_negatives.h"
#include "sampling/negative_draw.h"

namespace directgnn {

NegativeMode parse_negative_mode(const std::string& name) {
  if (name == "binary") return NegativeMode::kBinary;
  if (name == "triplet") return NegativeMode::kTriplet;
  fail_argument("neg_sampling", "'", name,
                "' is not binary (K random pairs per positive, labelled 0) or triplet (K random "
                "destinations per positive's source)");
}

NegativeDist parse_negative_dist(const std::string& name) {
  if (name == "uniform") return NegativeDist::kUniform;
  if (name == "degree") return NegativeDist::kDegree;
  fail_argument("neg_dist", "'", name,
                "' is not uniform (every node alike) or degree (degree^0.75, as word2vec)");
}

std::string negative_mode_name(NegativeMode mode) {
  return mode == NegativeMode::kBinary ? "binary" : "triplet";
}

std::string negative_dist_name(NegativeDist dist) {
  return dist == NegativeDist::kUniform ? "uniform" : "degree";
}

namespace {

// `graph`'s edges and src[i] -> dst[i], each in both directions, duplicates collapsed.
CsrGraph symmetric_with(const CsrGraph& graph, const at::Tensor& src, const at::Tensor& dst,
                        const std::string& where) {
  CooBuildOptions o;
  o.symmetrize = true;
  o.remove_self_loops = false;
  return build_csr_from_coo(at::cat({graph.indices.to(at::kLong), src}),
                            at::cat({at::repeat_interleave(graph.degrees()), dst}),
                            graph.num_nodes(), o, where);
}

}  // namespace

CsrGraph message_passing_graph(const CsrGraph& graph, bool directed) {
  if (!directed) return graph;
  const at::Tensor none = at::empty({0}, at::kLong);
  return symmetric_with(graph, none, none, "message-passing graph");
}

CsrGraph with_pairs(const CsrGraph& graph, const at::Tensor& pairs) {
  return symmetric_with(graph, pairs.select(1, 0), pairs.select(1, 1),
                        "message passing with validation edges");
}

LinkSampler::LinkSampler(const CsrGraph& graph, SamplerOptions sampling, LinkSamplerOptions link)
    : graph_(graph), sampler_(graph, std::move(sampling)), link_(link) {
  DGNN_CHECK_ARG(link_.neg_ratio >= 1, "neg_ratio",
                 "must be at least 1 (negatives per positive), got ", link_.neg_ratio);
  DGNN_CHECK_ARG(graph.num_nodes() >= 2, "graph", "link prediction needs at least 2 nodes");
  source_.num_nodes = graph.num_nodes();
  if (link_.dist == NegativeDist::kDegree) {
    cumulative_ = graph.degrees().to(at::kDouble).pow(0.75).cumsum(0);
    DGNN_CHECK_ARG(cumulative_[-1].item<double>() > 0, "neg_dist",
                   "degree: the graph has no edges, so no node can be drawn by degree");
    source_.cumulative = cumulative_.data_ptr<double>();
  }
  if (link_.exact_negatives) {
    edges_ = std::make_unique<EdgeLookup>(graph);
    source_.indptr = edges_->indptr().data_ptr<int64_t>();
    const at::Tensor& ids = edges_->sorted_indices();
    if (ids.scalar_type() == at::kInt) {
      source_.ids32 = ids.data_ptr<int32_t>();
    } else {
      source_.ids64 = ids.data_ptr<int64_t>();
    }
  }
  if (sampler_.on_gpu()) {
    gpu_ =
        std::make_unique<gpu::NegativeSampler>(graph.num_nodes(), cumulative_, edges_.get(),
                                               sampler_.options().device, sampler_.options().graph);
  }
}

LinkSampler::~LinkSampler() = default;

// binary: int64 [K·B, 2] pairs; triplet: int64 [B, K] destinations.
at::Tensor LinkSampler::negatives(const at::Tensor& positives, uint64_t seed) const {
  const int64_t b = positives.size(0), k = link_.neg_ratio;
  const bool triplet = link_.mode == NegativeMode::kTriplet;
  if (gpu_ != nullptr) return gpu_->draw(positives, k, triplet, seed);
  at::Tensor out = triplet ? at::empty({b, k}, at::kLong) : at::empty({k * b, 2}, at::kLong);
  int64_t* p = out.data_ptr<int64_t>();
  const int64_t* pos = positives.data_ptr<int64_t>();
  std::atomic<bool> failed{false};
  at::parallel_for(0, k * b, 2048, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      int64_t src = 0, dst = 0;
      const int64_t given = triplet ? pos[2 * (i / k)] : -1;
      if (!negative_draw::draw(source_, seed, static_cast<uint64_t>(i), given, &src, &dst)) {
        failed = true;
      }
      if (triplet) {
        p[i] = dst;
      } else {
        p[2 * i] = src;
        p[2 * i + 1] = dst;
      }
    }
  });
  DGNN_CHECK_ARG(!failed, "exact_negatives", "found no pair that is not an edge in ",
                 negative_draw::kExactTries,
                 " random tries: the graph is too dense for exact negatives; drop exact "
                 "negatives (PyG does not make them exact either)");
  return out;
}

namespace {

void check_positives(const at::Tensor& positives, int64_t n) {
  DGNN_CHECK_TYPE(positives.scalar_type() == at::kLong || positives.scalar_type() == at::kInt,
                  "positive edges must be int64 or int32 node ids, got ", positives.scalar_type());
  DGNN_CHECK_ARG(positives.dim() == 2 && positives.size(1) == 2 && positives.size(0) > 0,
                 "positives", "must be a non-empty [B, 2] array of (src, dst) pairs, got shape ",
                 positives.sizes());
  const auto [lo, hi] = at::aminmax(positives);
  const int64_t low = lo.item<int64_t>(), high = hi.item<int64_t>();
  DGNN_CHECK_INDEX(low >= 0 && high < n, "positive edge endpoint ", low < 0 ? low : high,
                   " is out of range for ", n, " nodes");
}

// The batch's distinct endpoints in order of first appearance, and each id's local index.
struct Endpoints {
  std::vector<int64_t> nodes;
  std::unordered_map<int64_t, int64_t> local;

  int64_t add(int64_t v) {
    const auto [it, fresh] = local.emplace(v, static_cast<int64_t>(nodes.size()));
    if (fresh) nodes.push_back(v);
    return it->second;
  }
  // Local ids of `ids` (any shape, int64), added as they come.
  at::Tensor map(const at::Tensor& ids) {
    at::Tensor out = at::empty_like(ids);
    const int64_t* in = ids.data_ptr<int64_t>();
    int64_t* o = out.data_ptr<int64_t>();
    for (int64_t i = 0; i < ids.numel(); ++i) o[i] = add(in[i]);
    return out;
  }
};

// Local ids of the batch's pairs: each endpoint's place among the distinct endpoints in order
// of first appearance (positives', then negatives'), which seed the k-hop sample.
struct LocalPairs {
  at::Tensor seeds, pos, neg;
};

LocalPairs local_pairs(const at::Tensor& pos, const at::Tensor& neg) {
  LocalPairs out;
  if (neg.is_cuda()) {  // the same order, as tensor operations on the GPU
    auto [nodes, local] =
        relabel_first_seen(at::cat({pos.to(neg.device()).view(-1), neg.view(-1)}));
    out.seeds = nodes;
    out.pos = local.narrow(0, 0, pos.numel()).view(pos.sizes());
    out.neg = local.narrow(0, pos.numel(), neg.numel()).view(neg.sizes());
    return out;
  }
  Endpoints ends;
  out.pos = ends.map(pos);
  out.neg = ends.map(neg);
  out.seeds = at::tensor(ends.nodes, at::kLong);
  return out;
}

}  // namespace

LinkBatch LinkSampler::sample(const at::Tensor& positives_in, uint64_t seed) const {
  check_positives(positives_in, graph_.num_nodes());
  LinkBatch batch;
  batch.positives = positives_in.cpu().to(at::kLong).contiguous();
  const LocalPairs local = local_pairs(batch.positives, negatives(batch.positives, seed));
  if (link_.mode == NegativeMode::kTriplet) {
    batch.src_index = local.pos.select(1, 0).contiguous();
    batch.dst_pos_index = local.pos.select(1, 1).contiguous();
    batch.dst_neg_index = local.neg;
  } else {
    const auto options = local.pos.options().dtype(at::kFloat);
    batch.edge_label_index = at::cat({local.pos, local.neg}).t().contiguous();
    batch.edge_label =
        at::cat({at::ones({local.pos.size(0)}, options), at::zeros({local.neg.size(0)}, options)});
  }
  if (!link_.exclude_seed_edges) {
    batch.sample = sampler_.sample(local.seeds, seed);
  } else {
    const ExcludedPairs exclude(batch.positives);
    batch.sample = sampler_.sample(local.seeds, seed, &exclude);
  }
  return batch;
}

}  // namespace directgnn
