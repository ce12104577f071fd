// Neighbour sampling on a heterogeneous graph (graph/hetero_graph.h): typed blocks, per-relation
// fan-outs, on the CPU.
//
// Hop h (seed hop first) takes every node reached so far as a destination: for each relation
// (S, rel, D) and each destination node of type D, it draws up to fanouts[relation][h] of the
// node's neighbours in that relation (uniformly without replacement, the pick of
// sampling/uniform_pick.h keyed by (seed, relation, hop, node); -1 takes all), and the picks join
// the sources of type S. As in DGL's heterogeneous blocks, each layer draws anew, and a type's
// destination nodes are the first of its source nodes, so a layer reads its own inputs as
// x_src[type][:num_dst[type]]. Local ids are given in order of first appearance, relations in
// dataset order, rows in order, seeds first; the result depends only on (graph, seeds,
// fan-outs, seed), not on the number of threads.
//
// sample_hops draws PyG's hops instead (pyg-lib's heterogeneous neighbour sampling): each node's
// neighbours are drawn once, at the hop after the one that first reached it (seeds at hop 0),
// so hop h reads only the nodes new at hop h - 1, and one node list per type serves every hop.
// It uses the same pick, keys, relation order and local-id order as `sample`.
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "graph/hetero_graph.h"
#include "sampling/block.h"
#include "sampling/excluded_pairs.h"

namespace directgnn {

// One layer of a heterogeneous minibatch.
struct HeteroBlock {
  std::vector<int64_t> num_src, num_dst;  // per node type
  // Per relation r (dataset order): a Block whose rows are the first num_dst[D] nodes of r's
  // destination type D and whose indices are local ids of r's source type, in [0, num_src[S]).
  // Degrees are left undefined (the heterogeneous layers average per relation).
  std::vector<Block> relations;
};

struct HeteroMiniBatch {
  // Seeds of one type (node classification): its index and ids; seeds of several types (link
  // prediction's endpoints): seed_type -1 and `seeds` undefined.
  int seed_type = -1;
  at::Tensor seeds;                // int64 [B]: ids of seed_type whose outputs are trained
  std::vector<int64_t> num_seeds;  // per node type: its seeds, blocks.back().num_dst[t]
  // Per node type: int64 global ids of that type, blocks.front().num_src[t] of them; the seeds
  // of each type are its first num_seeds[t].
  std::vector<at::Tensor> input_nodes;
  std::vector<HeteroBlock> blocks;  // blocks.front() reads the inputs, blocks.back() emits seeds
};

struct HeteroSamplerOptions {
  // fanouts[r][h]: relation r's fan-out at hop h, seed hop first; every relation has one per
  // hop, each positive, -1 (all) or 0 (none: that relation draws nothing at that hop, an empty
  // block, as PyG's num_neighbors allows).
  std::vector<std::vector<int64_t>> fanouts;
  // Fill each block's src_degree and dst_degree with the relation's degrees in the whole graph
  // (RelationDegrees; the gcn model's normalisation). Off: they stay undefined.
  bool degrees = false;
};

// A relation's degrees in the whole graph, float32: `in` per node of its destination type (its
// in-edges there), `out` per node of its source type (its out-edges).
struct RelationDegrees {
  at::Tensor in, out;
};
std::vector<RelationDegrees> relation_degrees(const HeteroDataset& dataset);

// PyG's sample (sample_hops) of one seed batch.
struct HeteroHops {
  // Per node type: int64 global ids, in order of first appearance (the seeds first).
  std::vector<at::Tensor> nodes;
  // Per relation (S, rel, D), int64 [E] each, hop after hop: each edge's source as a local id
  // into nodes[S], its destination as a local id into nodes[D], and its position in the
  // relation's CSR (the edge's id there).
  std::vector<at::Tensor> src, dst, edge;
  // hop_nodes[t][h]: type t's nodes first reached at hop h (h = 0: seeds), hops + 1 entries;
  // hop_edges[r][h]: relation r's edges drawn at hop h, hops entries.
  std::vector<std::vector<int64_t>> hop_nodes, hop_edges;
};

// Fan-outs of one relation, the relation named as the user names it ("src,rel,dst", or "rel"
// when unambiguous).
struct RelationFanouts {
  std::string relation;
  std::vector<int64_t> fanouts;  // per hop, seed hop first; -1 = every neighbour
};
// "paper,cites,paper=15,10;author,writes,paper=5,5" and back (each value checked; relations are
// found, and the lists' lengths checked, by hetero_sampler_options).
std::vector<RelationFanouts> parse_relation_fanouts(const std::string& text);
std::string relation_fanouts_text(const std::vector<RelationFanouts>& fanouts);

// The sampler's fan-outs for `dataset`: each relation `per_relation` names takes its list, the
// others `all` (empty: every relation must be named), every list `layers` long. Throws naming
// the relation and the fix.
HeteroSamplerOptions hetero_sampler_options(const HeteroDataset& dataset,
                                            const std::vector<int64_t>& all,
                                            const std::vector<RelationFanouts>& per_relation,
                                            int64_t layers);
// The same from text: `all` ("15,10": the same for every relation; empty with `per_relation`
// covering every relation) and `per_relation` ("paper,cites,paper=15,10;author,writes,paper=5,5",
// relations named as HeteroDataset::relation_index accepts), checking each list's length
// against `layers`. Relations `per_relation` does not name take `all`; without `all`, every
// relation must be named. Throws naming the relation and the fix.
HeteroSamplerOptions parse_hetero_fanouts(const HeteroDataset& dataset, const std::string& all,
                                          const std::string& per_relation, int64_t layers);
// "paper,cites,paper=15,10; ..." for a run's header.
std::string hetero_fanout_text(const HeteroDataset& dataset, const HeteroSamplerOptions& options);

class HeteroSampler {
 public:
  // The dataset (its relations' CSRs) must outlive the sampler.
  HeteroSampler(const HeteroDataset& dataset, HeteroSamplerOptions options);
  ~HeteroSampler();
  HeteroSampler(const HeteroSampler&) = delete;
  HeteroSampler& operator=(const HeteroSampler&) = delete;

  // The blocks for `seeds` (distinct int64 ids of `seed_type`, checked). Thread-safe.
  HeteroMiniBatch sample(int seed_type, const at::Tensor& seeds, uint64_t seed) const;
  // The blocks for seeds of several types: seeds[t] distinct ids of type t (undefined or empty:
  // none), relabelled type by type. With `exclude` (one entry per relation, empty where none),
  // relation r's drawn edges u -> v that exclude[r] lists are dropped after the draw (link
  // prediction's seed edges, as sampling/sampler.h's exclusion), so a row may keep fewer than
  // its fan-out.
  HeteroMiniBatch sample(const std::vector<at::Tensor>& seeds, uint64_t seed,
                         const std::vector<ExcludedPairs>* exclude = nullptr) const;
  // PyG's hops for the same seeds (see the top of this file). Thread-safe.
  HeteroHops sample_hops(int seed_type, const at::Tensor& seeds, uint64_t seed) const;
  // PyG's hops from seeds of several types (its heterogeneous link sampling: both endpoints'
  // types), each type's seeds first in its list, at hop 0.
  HeteroHops sample_hops(const std::vector<at::Tensor>& seeds, uint64_t seed) const;

  int64_t hops() const;
  const HeteroSamplerOptions& options() const { return options_; }

 private:
  struct Workspace;
  std::unique_ptr<Workspace> acquire() const;
  void release(std::unique_ptr<Workspace> workspace) const;
  // The seeds, checked, as an int64 CPU tensor.
  at::Tensor checked_seeds(int seed_type, const at::Tensor& seeds) const;
  std::vector<at::Tensor> one_type(int seed_type, const at::Tensor& seeds) const;
  // Per type: the seeds checked (an empty tensor where none); one entry per node type.
  std::vector<at::Tensor> checked_typed_seeds(const std::vector<at::Tensor>& seeds) const;
  // Fills the blocks' degrees (options_.degrees).
  void add_degrees(HeteroMiniBatch& batch) const;

  const HeteroDataset& dataset_;
  HeteroSamplerOptions options_;
  std::vector<RelationDegrees> degrees_;  // with options_.degrees
  mutable std::mutex mutex_;
  mutable std::vector<std::unique_ptr<Workspace>> free_;
};

// The whole-neighbourhood block of relation `r` for destination nodes [begin, end) of its
// destination type, its indices global ids of the `num_src` source nodes (layer-wise evaluation);
// with `degrees` (the relation's), its src_degree and dst_degree.
Block full_relation_block(const Relation& relation, int64_t num_src, int64_t begin, int64_t end,
                          const RelationDegrees* degrees = nullptr);

}  // namespace directgnn
