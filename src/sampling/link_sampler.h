// Link prediction's minibatches: a batch of positive seed edges plus negatives, whose distinct
// endpoints seed the k-hop sampler (sampling/sampler.h); the result carries the blocks, the
// input nodes and the local indices of each scored pair, in PyG's two negative-sampling modes:
//
// - binary: K·B random pairs besides the B positives; `edge_label_index` [2, B + K·B] holds
//   every scored pair's (src, dst) local ids, positives first, `edge_label` 1 for those, 0 else
//   (PyG's LinkNeighborLoader with neg_sampling="binary").
// - triplet: K random destinations for each positive's source; `src_index` [B],
//   `dst_pos_index` [B] and `dst_neg_index` [B, K] (PyG's neg_sampling="triplet").
//
// Negatives are drawn uniformly or by degree^0.75 (word2vec's and PinSage's smoothing), from
// (seed, position) alone; exact negatives redraw a pair that is an edge of the
// message-passing graph (either direction) or a self-pair, and a graph where 1000 tries find
// none is refused. The batch's seed edges and their reverses are left out of its sampled
// neighbourhoods unless kept (GraphBolt's exclude_seed_edges). The result depends only on
// (graph, positives, options, seed), not on the number of threads.
//
// With the sampler on a GPU (SamplerOptions::device), the GPU twins run: negatives by
// gpu::NegativeSampler (the same draws, sampling/negative_draw.h), endpoints relabelled and the
// k-hop sample taken with its exclusion on the GPU; the result is the CPU's, on the device.
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graph/csr_graph.h"
#include "graph/edge_lookup.h"
#include "sampling/block.h"
#include "sampling/negative_draw.h"
#include "sampling/sampler.h"

namespace directgnn {

namespace gpu {
class NegativeSampler;
}

enum class NegativeMode { kBinary, kTriplet };
enum class NegativeDist { kUniform, kDegree };
NegativeMode parse_negative_mode(const std::string& name);  // "binary" | "triplet"
NegativeDist parse_negative_dist(const std::string& name);  // "uniform" | "degree"
std::string negative_mode_name(NegativeMode mode);
std::string negative_dist_name(NegativeDist dist);

struct LinkSamplerOptions {
  NegativeMode mode = NegativeMode::kBinary;
  int64_t neg_ratio = 1;  // binary: K·B pairs; triplet: K per positive (K >= 1)
  NegativeDist dist = NegativeDist::kUniform;
  bool exact_negatives = false;
  bool exclude_seed_edges = true;
};

// On a GPU sampler every tensor but `positives` is on the device.
struct LinkBatch {
  MiniBatch sample;      // seeds: the distinct endpoints, positives' first, then negatives'
  at::Tensor positives;  // int64 [B, 2] global (src, dst): the batch's seed edges (CPU)
  // binary: int64 [2, B + K·B] local (src; dst) and float32 [B + K·B] labels.
  at::Tensor edge_label_index, edge_label;
  // triplet: int64 [B], [B] and [B, K] local ids.
  at::Tensor src_index, dst_pos_index, dst_neg_index;
};

// The graph a link task passes messages on: an undirected graph as it is, a directed one with
// every edge's reverse added (duplicates collapse), as OGB's ogbl-citation2 recipes
// symmetrise the citation graph.
CsrGraph message_passing_graph(const CsrGraph& graph, bool directed);
// A symmetric `graph` with `pairs` ([E, 2]) added in both directions (duplicates collapse):
// the message passing of test scores that may read the validation edges.
CsrGraph with_pairs(const CsrGraph& graph, const at::Tensor& pairs);

class LinkSampler {
 public:
  // `graph` (the message-passing graph, contiguous CPU tensors) must outlive the sampler.
  LinkSampler(const CsrGraph& graph, SamplerOptions sampling, LinkSamplerOptions link);
  ~LinkSampler();

  // `positives`: int64 or int32 [B, 2] (src, dst) node ids on the CPU (checked).
  LinkBatch sample(const at::Tensor& positives, uint64_t seed) const;

  const LinkSamplerOptions& options() const { return link_; }
  const Sampler& sampler() const { return sampler_; }

 private:
  at::Tensor negatives(const at::Tensor& positives, uint64_t seed) const;

  const CsrGraph& graph_;
  Sampler sampler_;
  LinkSamplerOptions link_;
  at::Tensor cumulative_;                      // float64 [N]: degree^0.75, summed (kDegree)
  std::unique_ptr<EdgeLookup> edges_;          // for exact negatives
  negative_draw::Source source_;               // what the CPU's draws read
  std::unique_ptr<gpu::NegativeSampler> gpu_;  // with the sampler on a GPU
};

}  // namespace directgnn
