#include "graph/hetero_link_split.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <atomic>
#include <cmath>
#include <tuple>
#include <utility>

#include "core/random.h"
#include "directgnn/error.h"
#include "graph/edge_lookup.h"

namespace directgnn {
namespace {

constexpr uint64_t kSplitTag = 0x686c73;  // "hls": the split's shuffle and negatives
constexpr int kTries = 1000;

// Pair (a, b) of the target's source and destination ids as one key; within one type the pair is
// unordered (min, max).
at::Tensor pair_keys(at::Tensor a, at::Tensor b, int64_t num_dst, bool unordered) {
  if (unordered) std::tie(a, b) = std::make_pair(at::minimum(a, b), at::maximum(a, b));
  return a * num_dst + b;
}

// Each stored edge of a CSR as (source, row) int64 tensors.
std::pair<at::Tensor, at::Tensor> edges_of(const CsrGraph& graph) {
  const at::Tensor degrees = graph.indptr.slice(0, 1) - graph.indptr.slice(0, 0, -1);
  return {graph.indices.to(at::kLong), at::repeat_interleave(degrees)};
}

// `graph` (the target relation, or with `flipped` its reverse, whose edge u -> v is the target's
// pair (v, u)) without the edges whose pair `held` (sorted keys) lists; rows keep their order.
CsrGraph without_pairs(const CsrGraph& graph, const at::Tensor& held, int64_t num_dst, bool flipped,
                       bool unordered) {
  auto [src, row] = edges_of(graph);
  const at::Tensor keys =
      flipped ? pair_keys(row, src, num_dst, unordered) : pair_keys(src, row, num_dst, unordered);
  const at::Tensor keep = at::isin(keys, held).logical_not();
  CsrGraph out;
  out.indices = graph.indices.index({keep}).contiguous();
  at::Tensor counts = at::zeros({graph.num_nodes()}, at::kLong);
  counts.index_add_(0, row.index({keep}), at::ones({out.indices.numel()}, at::kLong));
  out.indptr = at::cat({at::zeros({1}, at::kLong), counts.cumsum(0)}).contiguous();
  return out;
}

// Draws the fixed negatives of one split (`stream` apart from the other's): a shared pair per
// positive, or k destinations per positive's source.
class NegativeDraw {
 public:
  NegativeDraw(const HeteroDataset& ds, const HeteroLinkTarget& t, uint64_t seed)
      : lookup_(ds.relations[t.relation].graph),
        num_src_(ds.node_types[t.src_type].count),
        num_dst_(ds.node_types[t.dst_type].count),
        undirected_(t.undirected),
        seed_(seed),
        relation_(ds.relations[t.relation].key()) {}

  at::Tensor shared(int64_t count, uint64_t stream) const {
    at::Tensor out = at::empty({count, 2}, at::kLong);
    int64_t* p = out.data_ptr<int64_t>();
    at::parallel_for(0, count, 1024, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) draw(stream, i, -1, p + 2 * i, p + 2 * i + 1);
    });
    return out;
  }

  at::Tensor per_source(const at::Tensor& positives, int64_t k, uint64_t stream) const {
    const int64_t count = positives.size(0);
    at::Tensor out = at::empty({count, k}, at::kLong);
    int64_t* p = out.data_ptr<int64_t>();
    const int64_t* pos = positives.data_ptr<int64_t>();
    at::parallel_for(0, count * k, 1024, [&](int64_t begin, int64_t end) {
      int64_t src = 0;
      for (int64_t i = begin; i < end; ++i) draw(stream, i, pos[2 * (i / k)], &src, p + i);
    });
    return out;
  }

 private:
  bool is_edge(int64_t s, int64_t d) const {
    // Within one type (undirected) a self-pair or the reverse edge is no negative either.
    return lookup_.contains(s, d) || (undirected_ && (s == d || lookup_.contains(d, s)));
  }

  void draw(uint64_t stream, int64_t index, int64_t src, int64_t* out_src, int64_t* out_dst) const {
    SplitRng rng(mix64(seed_, kSplitTag + stream, static_cast<uint64_t>(index)));
    for (int tries = 0; tries < kTries; ++tries) {
      *out_src = src >= 0 ? src : static_cast<int64_t>(rng.below(static_cast<uint64_t>(num_src_)));
      *out_dst = static_cast<int64_t>(rng.below(static_cast<uint64_t>(num_dst_)));
      if (!is_edge(*out_src, *out_dst)) return;
    }
    fail("relation ", relation_, ": ", kTries, " random pairs were all edges; it is too dense to ",
         "draw the split's negatives from");
  }

  EdgeLookup lookup_;
  int64_t num_src_, num_dst_;
  bool undirected_;
  uint64_t seed_;
  std::string relation_;
};

}  // namespace

HeteroLinkTarget find_link_target(const HeteroDataset& ds, const std::string& name,
                                  const std::string& where) {
  HeteroLinkTarget t;
  t.relation = ds.relation_index(name, where);
  const Relation& rel = ds.relations[static_cast<size_t>(t.relation)];
  t.src_type = rel.src_type;
  t.dst_type = rel.dst_type;
  // The reverse: rev_REL for REL, or REL for rev_REL, with the types swapped.
  const bool is_reverse = rel.rel.rfind("rev_", 0) == 0;
  for (size_t r = 0; r < ds.relations.size(); ++r) {
    const Relation& o = ds.relations[r];
    const bool named = o.rel == "rev_" + rel.rel || (is_reverse && o.rel == rel.rel.substr(4));
    if (named && static_cast<int>(r) != t.relation && o.src_type == rel.dst_type &&
        o.dst_type == rel.src_type) {
      t.reverse = static_cast<int>(r);
    }
  }
  t.undirected = t.src_type == t.dst_type;
  return t;
}

at::Tensor target_edges(const HeteroDataset& ds, const HeteroLinkTarget& t) {
  const int64_t num_dst = ds.node_types[t.dst_type].count;
  auto [src, row] = edges_of(ds.relations[static_cast<size_t>(t.relation)].graph);
  const at::Tensor keys = std::get<0>(at::_unique2(pair_keys(src, row, num_dst, t.undirected)));
  return at::stack({keys.div(num_dst, "floor"), keys.remainder(num_dst)}, 1).contiguous();
}

HeteroLinkSplit random_hetero_link_split(const HeteroDataset& ds, const HeteroLinkTarget& t,
                                         const LinkSplitOptions& o) {
  check_link_split_options(o);
  const Relation& rel = ds.relations[static_cast<size_t>(t.relation)];
  at::Tensor pairs = target_edges(ds, t);
  const int64_t m = pairs.size(0);
  const auto n_val = static_cast<int64_t>(std::floor(o.val * static_cast<double>(m)));
  const auto n_test = static_cast<int64_t>(std::floor(o.test * static_cast<double>(m)));
  DGNN_CHECK(n_val + n_test < m && (o.val == 0 || n_val > 0) && (o.test == 0 || n_test > 0),
             "relation ", rel.key(), ": ", m, " edges are too few for split fractions ", o.val,
             " and ", o.test, " (each split needs at least one edge, and training too)");
  at::Tensor order = at::arange(m, at::kLong);
  seeded_shuffle(order.data_ptr<int64_t>(), m, mix64(o.seed, kSplitTag));
  pairs = pairs.index_select(0, order);
  HeteroLinkSplit out;
  LinkSplit& s = out.split;
  s.val = pairs.narrow(0, 0, n_val).contiguous();
  s.test = pairs.narrow(0, n_val, n_test).contiguous();
  s.train = pairs.narrow(0, n_val + n_test, m - n_val - n_test).contiguous();
  const NegativeDraw negatives(ds, t, o.seed);
  if (o.neg_per_source > 0) {
    s.negatives = LinkNegatives::kPerSource;
    s.val_neg = negatives.per_source(s.val, o.neg_per_source, 1);
    s.test_neg = negatives.per_source(s.test, o.neg_per_source, 2);
  } else {
    s.negatives = LinkNegatives::kShared;
    s.val_neg = negatives.shared(n_val, 1);
    s.test_neg = negatives.shared(n_test, 2);
  }
  // Held-out pairs leave the relation and its reverse (within one type, both directions).
  const int64_t num_dst = ds.node_types[t.dst_type].count;
  const at::Tensor held_pairs = at::cat({s.val, s.test});
  const at::Tensor held = std::get<0>(at::_unique2(
      pair_keys(held_pairs.select(1, 0), held_pairs.select(1, 1), num_dst, t.undirected)));
  out.graph = ds;
  out.graph.relations[t.relation].graph =
      without_pairs(rel.graph, held, num_dst, false, t.undirected);
  if (t.reverse >= 0) {
    out.graph.relations[t.reverse].graph =
        without_pairs(ds.relations[t.reverse].graph, held, num_dst, true, t.undirected);
  }
  return out;
}

}  // namespace directgnn
