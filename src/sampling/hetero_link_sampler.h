// Link prediction's minibatches on one relation of a heterogeneous graph: a batch of positive
// (source, destination) edges of the target relation plus negatives, whose distinct endpoints
// seed the heterogeneous sampler (sampling/hetero_sampler.h) on their two types; the result
// carries the typed blocks, the input nodes per type and each scored pair's local ids, in the
// two negative-sampling modes of sampling/link_sampler.h:
//
// - binary: K·B random (source, destination) pairs of the relation's two types besides the B
//   positives; `edge_label_index` [2, B + K·B] holds local ids (row 0 among the source type's
//   input nodes, row 1 among the destination type's), positives first, `edge_label` 1 for those.
// - triplet: K random destinations for each positive's source; `src_index` [B],
//   `dst_pos_index` [B] and `dst_neg_index` [B, K].
//
// Negatives are drawn uniformly or by degree^0.75 in the relation (out-degree for sources,
// in-degree for destinations), each from (seed, position) alone; exact negatives redraw a pair
// that is an edge of the message-passing relation (either direction within one type) or a
// self-pair. Unless kept, the batch's seed edges are left out of its sampled neighbourhoods in
// the target relation and, reversed, in its reverse relation (both directions within one type).
// Each type's seeds are its distinct endpoints in ascending order (one list when both ends are of
// one type). The result depends only on (graph, positives, options, seed), not on the number of
// threads.
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "graph/edge_lookup.h"
#include "graph/hetero_graph.h"
#include "graph/hetero_link_split.h"
#include "sampling/hetero_sampler.h"
#include "sampling/link_sampler.h"
#include "sampling/negative_draw.h"

namespace directgnn {

struct HeteroLinkBatch {
  HeteroMiniBatch sample;  // seeds of both endpoint types, their blocks and input nodes
  at::Tensor positives;    // int64 [B, 2] global (source, destination): the batch's seed edges
  // binary: int64 [2, B + K·B] local ids and float32 [B + K·B] labels.
  at::Tensor edge_label_index, edge_label;
  // triplet: int64 [B], [B] and [B, K] local ids.
  at::Tensor src_index, dst_pos_index, dst_neg_index;
};

class HeteroLinkSampler {
 public:
  // `graph` (the message-passing graph) must outlive the sampler.
  HeteroLinkSampler(const HeteroDataset& graph, HeteroLinkTarget target,
                    HeteroSamplerOptions sampling, LinkSamplerOptions link);
  ~HeteroLinkSampler();

  // `positives`: int64 or int32 [B, 2] (source, destination) ids on the CPU (checked).
  HeteroLinkBatch sample(const at::Tensor& positives, uint64_t seed) const;

  const HeteroSampler& sampler() const { return sampler_; }
  const HeteroLinkTarget& target() const { return target_; }
  const LinkSamplerOptions& options() const { return link_; }

 private:
  at::Tensor checked(const at::Tensor& positives) const;
  // Binary: [K·B, 2] pairs; triplet: [B, K] destinations.
  at::Tensor negatives(const at::Tensor& positives, uint64_t seed) const;
  void draw(uint64_t seed, int64_t index, int64_t src, int64_t* out_src, int64_t* out_dst) const;

  const HeteroDataset& graph_;
  HeteroLinkTarget target_;
  HeteroSampler sampler_;
  LinkSamplerOptions link_;
  at::Tensor src_weights_, dst_weights_;  // float64 cumulative degree^0.75 (kDegree)
  std::unique_ptr<EdgeLookup> edges_;     // exact negatives
  negative_draw::Source from_, to_;       // what the draws of sources and destinations read
};

}  // namespace directgnn
