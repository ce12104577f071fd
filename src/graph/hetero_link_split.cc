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

// Whether every edge u -> v of a relation within one type is stored as v -> u too.
bool symmetric(const CsrGraph& graph) {
  const EdgeLookup lookup(graph);
  const at::Tensor indices = graph.indices.to(at::kLong).contiguous();
  const int64_t* ptr = graph.indptr.data_ptr<int64_t>();
  const int64_t* ids = indices.data_ptr<int64_t>();
  std::atomic<bool> all{true};
  at::parallel_for(0, graph.num_nodes(), 1 << 12, [&](int64_t begin, int64_t end) {
    for (int64_t v = begin; v < end && all.load(std::memory_order_relaxed); ++v) {
      for (int64_t e = ptr[v]; e < ptr[v + 1]; ++e) {
        if (!lookup.contains(v, ids[e])) {
          all = false;
          break;
        }
      }
    }
  });
  return all;
}

// Draws the fixed negatives of one split (`stream` apart from the other's): a shared pair per
// positive, or k destinations per positive's source.
class NegativeDraw {
 public:
  NegativeDraw(const HeteroDataset& ds, const HeteroLinkTarget& t, uint64_t seed)
      : lookup_(ds.relations[t.relation].graph),
        num_src_(ds.node_types[t.src_type].count),
        num_dst_(ds.node_types[t.dst_type].count),
        same_type_(t.src_type == t.dst_type),
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
    if (same_type_ && s == d) return true;
    return lookup_.contains(s, d) || (undirected_ && lookup_.contains(d, s));
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
  bool same_type_, undirected_;
  uint64_t seed_;
  std::string relation_;
};

// The relation rebuilt from `pairs` ([E, 2] source, destination), both ways when undirected.
CsrGraph relation_from(const at::Tensor& pairs, int64_t num_src, int64_t num_dst, bool undirected,
                       const std::string& where) {
  at::Tensor src = pairs.select(1, 0), dst = pairs.select(1, 1);
  if (undirected) {
    std::tie(src, dst) = std::make_pair(at::cat({src, dst}), at::cat({dst, src}));
  }
  return build_relation_csr(src.contiguous(), dst.contiguous(), num_src, num_dst, where);
}

}  // namespace

HeteroLinkTarget find_link_target(const HeteroDataset& ds, const std::string& name,
                                  const std::string& where) {
  HeteroLinkTarget t;
  t.relation = ds.relation_index(name, where);
  const Relation& rel = ds.relations[static_cast<size_t>(t.relation)];
  t.src_type = rel.src_type;
  t.dst_type = rel.dst_type;
  for (size_t r = 0; r < ds.relations.size(); ++r) {
    const Relation& o = ds.relations[r];
    if (o.rel == "rev_" + rel.rel && o.src_type == rel.dst_type && o.dst_type == rel.src_type) {
      t.reverse = static_cast<int>(r);
    }
  }
  t.undirected = t.src_type == t.dst_type && t.reverse < 0 && symmetric(rel.graph);
  return t;
}

at::Tensor target_edges(const HeteroDataset& ds, const HeteroLinkTarget& t) {
  return unique_edges(ds.relations[static_cast<size_t>(t.relation)].graph, !t.undirected);
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
  out.graph = ds;
  const int64_t num_src = ds.node_types[t.src_type].count,
                num_dst = ds.node_types[t.dst_type].count;
  out.graph.relations[t.relation].graph =
      relation_from(s.train, num_src, num_dst, t.undirected, rel.key());
  if (t.reverse >= 0) {
    out.graph.relations[t.reverse].graph =
        relation_from(s.train.flip(1), num_dst, num_src, false, ds.relations[t.reverse].key());
  }
  return out;
}

}  // namespace directgnn
