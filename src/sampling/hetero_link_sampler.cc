#include "sampling/hetero_link_sampler.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <tuple>
#include <utility>

#include "core/random.h"
#include "directgnn/error.h"
#include "sampling/negative_draw.h"

namespace directgnn {
namespace {

// Cumulative degree^0.75 (float64), for draws by degree.
at::Tensor cumulative_weights(const at::Tensor& degrees) {
  return degrees.to(at::kDouble).pow(0.75).cumsum(0).contiguous();
}

negative_draw::Source source_of(int64_t count, const at::Tensor& cumulative) {
  negative_draw::Source s;
  s.num_nodes = count;
  s.cumulative = cumulative.defined() ? cumulative.data_ptr<double>() : nullptr;
  return s;
}

// Distinct ids in ascending order and each value's position among them.
std::pair<at::Tensor, at::Tensor> distinct(const at::Tensor& ids) {
  auto [values, inverse, counts] = at::_unique2(ids, true, true, false);
  return {values, inverse};
}

}  // namespace

HeteroLinkSampler::HeteroLinkSampler(const HeteroDataset& graph, HeteroLinkTarget target,
                                     HeteroSamplerOptions sampling, LinkSamplerOptions link)
    : graph_(graph), target_(target), sampler_(graph, std::move(sampling)), link_(link) {
  DGNN_CHECK_ARG(link_.neg_ratio >= 1, "neg_ratio",
                 "must be at least 1 (negatives per positive), got ", link_.neg_ratio);
  const CsrGraph& rel = graph_.relations[static_cast<size_t>(target_.relation)].graph;
  if (link_.dist == NegativeDist::kDegree) {
    const at::Tensor in = rel.indptr.slice(0, 1) - rel.indptr.slice(0, 0, -1);
    const at::Tensor out =
        at::bincount(rel.indices.to(at::kLong), {}, graph_.node_types[target_.src_type].count);
    DGNN_CHECK(rel.num_edges() > 0, "relation ",
               graph_.relations[static_cast<size_t>(target_.relation)].key(),
               " has no edges to weigh negatives by degree with");
    src_weights_ = cumulative_weights(out);
    dst_weights_ = cumulative_weights(in);
  }
  if (link_.exact_negatives) edges_ = std::make_unique<EdgeLookup>(rel);
  from_ = source_of(graph_.node_types[target_.src_type].count, src_weights_);
  to_ = source_of(graph_.node_types[target_.dst_type].count, dst_weights_);
}

HeteroLinkSampler::~HeteroLinkSampler() = default;

at::Tensor HeteroLinkSampler::checked(const at::Tensor& positives) const {
  DGNN_CHECK(positives.dim() == 2 && positives.size(1) == 2 && positives.device().is_cpu(),
             "link positives must be a CPU tensor of (source, destination) pairs [B, 2], got ",
             positives.sizes());
  const at::Tensor pos = positives.to(at::kLong).contiguous();
  const int64_t counts[2] = {graph_.node_types[target_.src_type].count,
                             graph_.node_types[target_.dst_type].count};
  for (int64_t side = 0; side < 2 && pos.size(0) > 0; ++side) {
    const auto [lo, hi] = at::aminmax(pos.select(1, side));
    DGNN_CHECK_INDEX(lo.item<int64_t>() >= 0 && hi.item<int64_t>() < counts[side], "link ",
                     side == 0 ? "source " : "destination ", "ids must be in [0, ", counts[side],
                     ") of node type '",
                     graph_.node_types[side == 0 ? target_.src_type : target_.dst_type].name,
                     "', got ", lo.item<int64_t>(), "..", hi.item<int64_t>());
  }
  return pos;
}

void HeteroLinkSampler::draw(uint64_t seed, int64_t index, int64_t src, int64_t* out_src,
                             int64_t* out_dst) const {
  SplitRng rng(mix64(seed, negative_draw::kTag, static_cast<uint64_t>(index)));
  for (int tries = 0; tries < negative_draw::kExactTries; ++tries) {
    *out_src = src >= 0 ? src : negative_draw::draw_node(from_, rng);
    *out_dst = negative_draw::draw_node(to_, rng);
    if (!edges_) return;
    // Within one type (undirected) a self-pair or the reverse edge is no negative either.
    const bool edge =
        edges_->contains(*out_src, *out_dst) ||
        (target_.undirected && (*out_src == *out_dst || edges_->contains(*out_dst, *out_src)));
    if (!edge) return;
  }
  fail("relation ", graph_.relations[static_cast<size_t>(target_.relation)].key(), ": ",
       negative_draw::kExactTries,
       " random pairs were all edges; it is too dense for exact negatives (draw them inexactly)");
}

at::Tensor HeteroLinkSampler::negatives(const at::Tensor& pos, uint64_t seed) const {
  const int64_t b = pos.size(0), k = link_.neg_ratio;
  const bool triplet = link_.mode == NegativeMode::kTriplet;
  at::Tensor out = triplet ? at::empty({b, k}, at::kLong) : at::empty({b * k, 2}, at::kLong);
  int64_t* o = out.data_ptr<int64_t>();
  const int64_t* p = pos.data_ptr<int64_t>();
  at::parallel_for(0, b * k, 1024, [&](int64_t begin, int64_t end) {
    int64_t src = 0;
    for (int64_t i = begin; i < end; ++i) {
      if (triplet) {
        draw(seed, i, p[2 * (i / k)], &src, o + i);
      } else {
        draw(seed, i, -1, o + 2 * i, o + 2 * i + 1);
      }
    }
  });
  return out;
}

HeteroLinkBatch HeteroLinkSampler::sample(const at::Tensor& positives, uint64_t seed) const {
  HeteroLinkBatch out;
  out.positives = checked(positives);
  const at::Tensor& pos = out.positives;
  const int64_t b = pos.size(0);
  const at::Tensor neg = negatives(pos, seed);
  const bool triplet = link_.mode == NegativeMode::kTriplet;
  const at::Tensor src = triplet ? pos.select(1, 0) : at::cat({pos.select(1, 0), neg.select(1, 0)});
  const at::Tensor dst = triplet ? at::cat({pos.select(1, 1), neg.flatten()})
                                 : at::cat({pos.select(1, 1), neg.select(1, 1)});
  std::vector<at::Tensor> seeds(graph_.node_types.size());
  at::Tensor src_local, dst_local;
  if (target_.src_type == target_.dst_type) {
    auto [ids, inverse] = distinct(at::cat({src, dst}));
    seeds[target_.src_type] = ids;
    src_local = inverse.narrow(0, 0, src.numel());
    dst_local = inverse.narrow(0, src.numel(), dst.numel());
  } else {
    std::tie(seeds[target_.src_type], src_local) = distinct(src);
    std::tie(seeds[target_.dst_type], dst_local) = distinct(dst);
  }
  std::vector<ExcludedPairs> exclude;
  if (link_.exclude_seed_edges) {
    exclude.resize(graph_.relations.size());
    exclude[target_.relation] = ExcludedPairs(pos, target_.undirected);
    if (target_.reverse >= 0) {
      exclude[target_.reverse] = ExcludedPairs(pos.flip(1), target_.undirected);
    }
  }
  out.sample = sampler_.sample(seeds, seed, exclude.empty() ? nullptr : &exclude);
  if (triplet) {
    out.src_index = src_local;
    out.dst_pos_index = dst_local.narrow(0, 0, b);
    out.dst_neg_index = dst_local.narrow(0, b, dst_local.numel() - b).view({b, link_.neg_ratio});
  } else {
    out.edge_label_index = at::stack({src_local, dst_local});
    out.edge_label = at::cat({at::ones({b}), at::zeros({src_local.numel() - b})});
  }
  return out;
}

}  // namespace directgnn
