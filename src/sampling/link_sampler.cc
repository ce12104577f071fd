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

namespace directgnn {
namespace {

constexpr int kExactTries = 1000;            // draws for one exact negative before giving up
constexpr uint64_t kNegativeTag = 0x6e6567;  // "neg": the negatives' stream, apart from picks

}  // namespace

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
  if (link_.dist == NegativeDist::kDegree) {
    const at::Tensor deg = graph.degrees().to(at::kDouble).pow(0.75).cumsum(0);
    cumulative_.assign(deg.data_ptr<double>(), deg.data_ptr<double>() + deg.numel());
    DGNN_CHECK_ARG(cumulative_.back() > 0, "neg_dist",
                   "degree: the graph has no edges, so no node can be drawn by degree");
  }
  if (link_.exact_negatives) edges_ = std::make_unique<EdgeLookup>(graph);
}

LinkSampler::~LinkSampler() = default;

int64_t LinkSampler::draw_node(SplitRng& rng) const {
  const auto n = static_cast<uint64_t>(graph_.num_nodes());
  if (cumulative_.empty()) return static_cast<int64_t>(rng.below(n));
  const double target = rng.uniform() * cumulative_.back();
  const auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), target);
  return std::min<int64_t>(it - cumulative_.begin(), graph_.num_nodes() - 1);
}

bool LinkSampler::draw_negative(uint64_t seed, uint64_t index, int64_t src, int64_t* out_src,
                                int64_t* out_dst) const {
  SplitRng rng(mix64(seed, kNegativeTag, index));
  for (int tries = 0; tries < kExactTries; ++tries) {
    *out_src = src >= 0 ? src : draw_node(rng);
    *out_dst = draw_node(rng);
    if (edges_ == nullptr) return true;
    if (*out_src != *out_dst && !edges_->connects(*out_src, *out_dst)) return true;
  }
  return false;
}

// binary: int64 [K·B, 2] pairs; triplet: int64 [B, K] destinations.
at::Tensor LinkSampler::negatives(const at::Tensor& positives, uint64_t seed) const {
  const int64_t b = positives.size(0), k = link_.neg_ratio;
  const bool triplet = link_.mode == NegativeMode::kTriplet;
  at::Tensor out = triplet ? at::empty({b, k}, at::kLong) : at::empty({k * b, 2}, at::kLong);
  int64_t* p = out.data_ptr<int64_t>();
  const int64_t* pos = positives.data_ptr<int64_t>();
  std::atomic<bool> failed{false};
  at::parallel_for(0, k * b, 2048, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      int64_t src = 0, dst = 0;
      const int64_t given = triplet ? pos[2 * (i / k)] : -1;
      if (!draw_negative(seed, static_cast<uint64_t>(i), given, &src, &dst)) failed = true;
      if (triplet) {
        p[i] = dst;
      } else {
        p[2 * i] = src;
        p[2 * i + 1] = dst;
      }
    }
  });
  DGNN_CHECK_ARG(!failed, "exact_negatives", "found no pair that is not an edge in ", kExactTries,
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

}  // namespace

LinkBatch LinkSampler::sample(const at::Tensor& positives_in, uint64_t seed) const {
  check_positives(positives_in, graph_.num_nodes());
  LinkBatch batch;
  batch.positives = positives_in.to(at::kLong).contiguous();
  const at::Tensor neg = negatives(batch.positives, seed);
  Endpoints ends;
  const at::Tensor pos_local = ends.map(batch.positives);  // [B, 2]
  const at::Tensor neg_local = ends.map(neg);
  if (link_.mode == NegativeMode::kTriplet) {
    batch.src_index = pos_local.select(1, 0).contiguous();
    batch.dst_pos_index = pos_local.select(1, 1).contiguous();
    batch.dst_neg_index = neg_local;
  } else {
    batch.edge_label_index = at::cat({pos_local, neg_local}).t().contiguous();
    batch.edge_label = at::cat(
        {at::ones({pos_local.size(0)}, at::kFloat), at::zeros({neg_local.size(0)}, at::kFloat)});
  }
  const at::Tensor seeds = at::tensor(ends.nodes, at::kLong);
  if (!link_.exclude_seed_edges) {
    batch.sample = sampler_.sample(seeds, seed);
  } else {
    const ExcludedPairs exclude(batch.positives);
    batch.sample = sampler_.sample(seeds, seed, &exclude);
  }
  return batch;
}

}  // namespace directgnn
