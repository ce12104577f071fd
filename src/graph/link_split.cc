#include "graph/link_split.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/parallel.h"
#include "core/random.h"
#include "directgnn/error.h"
#include "graph/coo_builder.h"
#include "graph/edge_lookup.h"

namespace directgnn {

std::string link_negatives_name(LinkNegatives layout) {
  switch (layout) {
    case LinkNegatives::kShared:
      return "shared";
    case LinkNegatives::kPerSource:
      return "per_source";
    case LinkNegatives::kNone:
      break;
  }
  return "none";
}

LinkNegatives parse_link_negatives(const std::string& name, const std::string& where) {
  if (name == "none") return LinkNegatives::kNone;
  if (name == "shared") return LinkNegatives::kShared;
  if (name == "per_source") return LinkNegatives::kPerSource;
  fail(where, ": link negatives '", name,
       "' is not 'none', 'shared' ([M, 2] pairs for every positive, as ogbl-collab) or "
       "'per_source' ([E, K] destinations per positive, as ogbl-citation2)");
}

LinkSplitOptions parse_link_fractions(const std::string& text) {
  std::vector<double> parts;
  std::string rest = text;
  for (size_t at = 0; at <= rest.size();) {
    const size_t comma = std::min(rest.find(',', at), rest.size());
    const std::string part = rest.substr(at, comma - at);
    char* end = nullptr;
    const double value = std::strtod(part.c_str(), &end);
    DGNN_CHECK_ARG(!part.empty() && end == part.c_str() + part.size() && std::isfinite(value),
                   "link_split", "'", text,
                   "' is not three fractions TRAIN,VAL,TEST such as 0.85,0.05,0.1");
    parts.push_back(value);
    at = comma + 1;
  }
  DGNN_CHECK_ARG(
      parts.size() == 3 && std::abs(parts[0] + parts[1] + parts[2] - 1.0) < 1e-6 && parts[0] > 0,
      "link_split", "'", text,
      "' must be three fractions TRAIN,VAL,TEST that sum to 1, with TRAIN > 0 (such as "
      "0.85,0.05,0.1)");
  LinkSplitOptions o;
  o.val = parts[1];
  o.test = parts[2];
  check_link_split_options(o);
  return o;
}

void check_link_split_options(const LinkSplitOptions& o) {
  DGNN_CHECK_ARG(o.val >= 0 && o.test >= 0 && o.val < 1 && o.test < 1 && o.val + o.test < 1,
                 "link_split",
                 "validation and test fractions must be in [0, 1) and leave edges for training "
                 "(got ",
                 o.val, " and ", o.test, ")");
  DGNN_CHECK_ARG(o.neg_per_source >= 0, "eval_negatives",
                 "must be 0 (one shared negative pair per positive) or a count K > 0, got ",
                 o.neg_per_source);
}

namespace {

// Row v's kept sources (sorted, unique): those below v for an undirected graph, every one
// but v for a directed one.
template <typename T>
void kept_sources(const int64_t* ptr, const T* ids, int64_t v, bool directed,
                  std::vector<int64_t>& out) {
  out.clear();
  for (int64_t e = ptr[v]; e < ptr[v + 1]; ++e) {
    const auto u = static_cast<int64_t>(ids[e]);
    if (u != v && (directed || u < v)) out.push_back(u);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

template <typename T>
at::Tensor unique_edges_of(const CsrGraph& graph, const T* ids, bool directed) {
  const int64_t n = graph.num_nodes();
  const int64_t* ptr = graph.indptr.data_ptr<int64_t>();
  std::vector<int64_t> offsets(n + 1, 0);
  at::parallel_for(0, n, 1 << 12, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> row;
    for (int64_t v = begin; v < end; ++v) {
      kept_sources(ptr, ids, v, directed, row);
      offsets[v + 1] = static_cast<int64_t>(row.size());
    }
  });
  for (int64_t v = 0; v < n; ++v) offsets[v + 1] += offsets[v];
  at::Tensor pairs = at::empty({offsets[n], 2}, at::kLong);
  int64_t* out = pairs.data_ptr<int64_t>();
  at::parallel_for(0, n, 1 << 12, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> row;
    for (int64_t v = begin; v < end; ++v) {
      kept_sources(ptr, ids, v, directed, row);
      for (size_t j = 0; j < row.size(); ++j) {
        out[2 * (offsets[v] + static_cast<int64_t>(j))] = row[j];
        out[2 * (offsets[v] + static_cast<int64_t>(j)) + 1] = v;
      }
    }
  });
  return pairs;
}

// A seeded permutation of [0, n).
std::vector<int64_t> shuffled(int64_t n, uint64_t seed) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  seeded_shuffle(order.data(), n, mix64(seed, 0x6c696e6b));  // "link"
  return order;
}

at::Tensor take_rows(const at::Tensor& pairs, const std::vector<int64_t>& order, int64_t begin,
                     int64_t end) {
  const at::Tensor index =
      at::tensor(std::vector<int64_t>(order.begin() + begin, order.begin() + end), at::kLong);
  return pairs.index_select(0, index).contiguous();
}

// Draws stop after this many tries for one negative: a graph where a random pair is an edge
// more often than not is too dense for exact negatives.
constexpr int kNegativeTries = 1000;

// Whether (u, v) may be a negative: no self-pair, and no edge of the whole graph.
bool is_negative(const EdgeLookup& edges, bool directed, int64_t u, int64_t v) {
  return u != v && !(directed ? edges.contains(u, v) : edges.connects(u, v));
}

[[noreturn]] void too_dense(const char* what, int64_t count) {
  fail("random link split: found no ", what, " that is not an edge in ", kNegativeTries,
       " random tries (", count,
       " to draw); the graph is too dense for exact negatives. Ask for fewer (a smaller "
       "validation/test fraction or K), or store negatives of your own (docs/formats.md)");
}

// `count` shared negative pairs, pair i drawn from (seed, tag, i).
at::Tensor shared_negatives(const EdgeLookup& edges, bool directed, int64_t count, uint64_t seed,
                            uint64_t tag) {
  const int64_t n = edges.num_nodes();
  at::Tensor out = at::empty({count, 2}, at::kLong);
  int64_t* p = out.data_ptr<int64_t>();
  std::atomic<bool> failed{false};
  at::parallel_for(0, count, 1024, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      SplitRng rng(mix64(seed, tag, static_cast<uint64_t>(i)));
      int tries = 0;
      int64_t u = 0, v = 0;
      do {
        u = static_cast<int64_t>(rng.below(static_cast<uint64_t>(n)));
        v = static_cast<int64_t>(rng.below(static_cast<uint64_t>(n)));
      } while (!is_negative(edges, directed, u, v) && ++tries < kNegativeTries);
      if (tries == kNegativeTries) failed = true;
      p[2 * i] = u;
      p[2 * i + 1] = v;
    }
  });
  if (failed) too_dense("negative pair", count);
  return out;
}

// K negative destinations for each positive's source, entry (i, k) drawn from (seed, tag, i, k).
at::Tensor per_source_negatives(const EdgeLookup& edges, bool directed, const at::Tensor& pos,
                                int64_t k, uint64_t seed, uint64_t tag) {
  const int64_t n = edges.num_nodes(), count = pos.size(0);
  at::Tensor out = at::empty({count, k}, at::kLong);
  int64_t* p = out.data_ptr<int64_t>();
  const int64_t* src = pos.data_ptr<int64_t>();
  std::atomic<bool> failed{false};
  at::parallel_for(0, count, 64, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t u = src[2 * i];
      for (int64_t j = 0; j < k; ++j) {
        SplitRng rng(mix64(seed, tag, static_cast<uint64_t>(i * k + j)));
        int tries = 0;
        int64_t v = 0;
        do {
          v = static_cast<int64_t>(rng.below(static_cast<uint64_t>(n)));
        } while (!is_negative(edges, directed, u, v) && ++tries < kNegativeTries);
        if (tries == kNegativeTries) failed = true;
        p[i * k + j] = v;
      }
    }
  });
  if (failed) too_dense("negative destination", count * k);
  return out;
}

}  // namespace

at::Tensor unique_edges(const CsrGraph& graph, bool directed) {
  return graph.indices.scalar_type() == at::kInt
             ? unique_edges_of(graph, graph.indices.data_ptr<int32_t>(), directed)
             : unique_edges_of(graph, graph.indices.data_ptr<int64_t>(), directed);
}

RandomLinkSplit random_link_split(const CsrGraph& graph, bool directed, const LinkSplitOptions& o) {
  check_link_split_options(o);
  const at::Tensor pairs = unique_edges(graph, directed);
  const int64_t m = pairs.size(0);
  const auto n_val = static_cast<int64_t>(std::floor(o.val * static_cast<double>(m)));
  const auto n_test = static_cast<int64_t>(std::floor(o.test * static_cast<double>(m)));
  DGNN_CHECK(n_val + n_test < m && (o.val == 0 || n_val > 0) && (o.test == 0 || n_test > 0),
             "random link split: ", m, " unique edges are too few for fractions ", o.val, " and ",
             o.test, " (each split needs at least one edge, and training too)");
  const std::vector<int64_t> order = shuffled(m, o.seed);
  RandomLinkSplit out;
  LinkSplit& s = out.split;
  s.val = take_rows(pairs, order, 0, n_val);
  s.test = take_rows(pairs, order, n_val, n_val + n_test);
  s.train = take_rows(pairs, order, n_val + n_test, m);
  CooBuildOptions build;
  build.symmetrize = !directed;
  out.graph = build_csr_from_coo(s.train.select(1, 0).clone(), s.train.select(1, 1).clone(),
                                 graph.num_nodes(), build, "random link split");
  const EdgeLookup whole(graph);
  if (o.neg_per_source > 0) {
    s.negatives = LinkNegatives::kPerSource;
    s.val_neg = per_source_negatives(whole, directed, s.val, o.neg_per_source, o.seed, 1);
    s.test_neg = per_source_negatives(whole, directed, s.test, o.neg_per_source, o.seed, 2);
  } else {
    s.negatives = LinkNegatives::kShared;
    s.val_neg = shared_negatives(whole, directed, n_val, o.seed, 1);
    s.test_neg = shared_negatives(whole, directed, n_test, o.seed, 2);
  }
  return out;
}

namespace {

// A stored [E, 2] or [E, K] id array: integer, 2-D, non-empty, ids in range; as int64.
at::Tensor check_ids2d(const at::Tensor& a, int64_t cols, int64_t n, const std::string& field) {
  DGNN_CHECK(a.defined(), field, ": missing");
  DGNN_CHECK(a.scalar_type() == at::kInt || a.scalar_type() == at::kLong, field, ": has dtype ",
             a.scalar_type(), "; node ids must be int32 or int64");
  DGNN_CHECK(a.dim() == 2 && a.size(0) > 0 && (cols < 0 ? a.size(1) > 0 : a.size(1) == cols), field,
             ": has shape ", a.sizes(), "; it must be [E, ",
             cols < 0 ? std::string("K") : std::to_string(cols), "] with E", cols < 0 ? ", K" : "",
             " > 0");
  at::Tensor out = a.to(at::kLong).contiguous();
  const int64_t* p = out.data_ptr<int64_t>();
  const int64_t bad =
      first_index_where(out.numel(), 1 << 16, [&](int64_t i) { return p[i] < 0 || p[i] >= n; });
  DGNN_CHECK(bad < 0, field, ": entry [", bad / out.size(1), ", ", bad % out.size(1),
             "] = ", bad < 0 ? 0 : p[bad], " is out of range for ", n, " nodes");
  return out;
}

// Positive i of `pos` for which `bad(src, dst)` holds, or -1.
template <typename Pred>
int64_t first_pair_where(const at::Tensor& pos, Pred bad) {
  const int64_t* p = pos.data_ptr<int64_t>();
  return first_index_where(pos.size(0), 1 << 12,
                           [&](int64_t i) { return bad(p[2 * i], p[2 * i + 1]); });
}

void check_negatives(LinkSplit& s, int64_t n, const std::string& where) {
  if (s.negatives == LinkNegatives::kNone) {
    DGNN_CHECK(!s.val_neg.defined() && !s.test_neg.defined(), where,
               ": link negatives are stored but meta.json's link.negatives is 'none'");
    return;
  }
  const bool shared = s.negatives == LinkNegatives::kShared;
  s.val_neg = check_ids2d(s.val_neg, shared ? 2 : -1, n, where + "/link/val_neg.npy");
  s.test_neg = check_ids2d(s.test_neg, shared ? 2 : -1, n, where + "/link/test_neg.npy");
  if (shared) return;
  for (const auto& [neg, pos, name] :
       {std::tuple{&s.val_neg, &s.val, "val"}, std::tuple{&s.test_neg, &s.test, "test"}}) {
    DGNN_CHECK(neg->size(0) == pos->size(0), where, "/link/", name, "_neg.npy: has ", neg->size(0),
               " rows but link/", name, ".npy has ", pos->size(0),
               " positives; per_source negatives need one row of K destinations per positive");
  }
}

// A pair as one number: src * n + dst, the smaller id first when the graph is undirected.
int64_t pair_key(int64_t u, int64_t v, int64_t n, bool directed) {
  if (!directed && v < u) std::swap(u, v);
  return u * n + v;
}

// The keys of [E, 2] `pairs` with their rows, sorted by key, then row.
std::vector<std::pair<int64_t, int64_t>> keyed_rows(const at::Tensor& pairs, int64_t n,
                                                    bool directed) {
  const int64_t* p = pairs.data_ptr<int64_t>();
  std::vector<std::pair<int64_t, int64_t>> out(static_cast<size_t>(pairs.size(0)));
  for (int64_t i = 0; i < pairs.size(0); ++i)
    out[static_cast<size_t>(i)] = {pair_key(p[2 * i], p[2 * i + 1], n, directed), i};
  std::sort(out.begin(), out.end());
  return out;
}

// Repeats of an earlier positive of `pos`: how many rows, the first such row and the row it
// repeats. A hand-written split lists each validation (test) positive once: a repeat counts
// twice in every metric.
struct Repeats {
  int64_t count = 0, later = -1, first = -1;
};
Repeats repeated_positives(const at::Tensor& pos, int64_t n, bool directed) {
  const auto rows = keyed_rows(pos, n, directed);
  Repeats out;
  for (size_t i = 1; i < rows.size(); ++i) {
    if (rows[i].first != rows[i - 1].first) continue;
    ++out.count;
    if (out.later < 0 || rows[i].second < out.later) {
      out.first = rows[i - 1].second;
      out.later = rows[i].second;
    }
  }
  return out;
}

void refuse_repeated_positives(const at::Tensor& pos, int64_t n, bool directed,
                               const std::string& file) {
  const Repeats r = repeated_positives(pos, n, directed);
  if (r.count == 0) return;
  const int64_t* p = pos.data_ptr<int64_t>();
  fail(file, ": positive ", r.later, " (", p[2 * r.later], " -> ", p[2 * r.later + 1],
       ") repeats positive ", r.first, directed ? "" : " (either direction)",
       "; list each evaluation pair once: remove the repeated rows (a random link split, "
       "docs/formats.md, makes a consistent one)");
}

// Every positive of the split, as sorted keys: negatives must avoid them as well as the
// message-passing graph's edges (validation and test positives are not among those).
std::vector<int64_t> positive_keys(const LinkSplit& s, int64_t n, bool directed) {
  std::vector<int64_t> keys;
  for (const at::Tensor* pos : {&s.train, &s.val, &s.test}) {
    const int64_t* p = pos->data_ptr<int64_t>();
    for (int64_t i = 0; i < pos->size(0); ++i)
      keys.push_back(pair_key(p[2 * i], p[2 * i + 1], n, directed));
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

// The negatives of one evaluation split, `neg` for the positives `pos`, that are edges: of the
// graph or a positive of any split (either direction when undirected). Entry i is a shared
// pair's row, or destination i % K of row i / K.
class NegativeEdges {
 public:
  NegativeEdges(const LinkSplit& s, const EdgeLookup& edges, bool directed)
      : edges_(edges),
        directed_(directed),
        shared_(s.negatives == LinkNegatives::kShared),
        positives_(positive_keys(s, edges.num_nodes(), directed)) {}

  std::pair<int64_t, int64_t> pair_of(const at::Tensor& neg, const at::Tensor& pos,
                                      int64_t i) const {
    const int64_t* q = neg.data_ptr<int64_t>();
    if (shared_) return {q[2 * i], q[2 * i + 1]};
    return {pos.data_ptr<int64_t>()[2 * (i / neg.size(1))], q[i]};
  }

  Hits find(const at::Tensor& neg, const at::Tensor& pos) const {
    const int64_t count = shared_ ? neg.size(0) : neg.numel();
    return count_where(count, 1 << 12, [&](int64_t i) {
      const auto [u, v] = pair_of(neg, pos, i);
      return is_edge(u, v);
    });
  }

  bool shared() const { return shared_; }

 private:
  bool is_edge(int64_t u, int64_t v) const {
    return (directed_ ? edges_.contains(u, v) : edges_.connects(u, v)) ||
           std::binary_search(positives_.begin(), positives_.end(),
                              pair_key(u, v, edges_.num_nodes(), directed_));
  }

  const EdgeLookup& edges_;
  bool directed_, shared_;
  std::vector<int64_t> positives_;
};

// A hand-written split's negatives are pairs that are no edge.
void refuse_negative_edges(const LinkSplit& s, const EdgeLookup& edges, bool directed,
                           const std::string& where) {
  const NegativeEdges negatives(s, edges, directed);
  for (const auto& [neg, pos, name] :
       {std::tuple{&s.val_neg, &s.val, "val"}, std::tuple{&s.test_neg, &s.test, "test"}}) {
    const Hits hits = negatives.find(*neg, *pos);
    if (hits.count == 0) continue;
    const auto [u, v] = negatives.pair_of(*neg, *pos, hits.first);
    const int64_t k = neg->size(1);
    fail(where, "/link/", name, "_neg.npy: negative ",
         negatives.shared()
             ? std::to_string(hits.first)
             : "[" + std::to_string(hits.first / k) + ", " + std::to_string(hits.first % k) + "]",
         " (", u, " -> ", v, ") is an edge (of the graph or a positive of link/*.npy",
         directed ? "" : ", either direction",
         "); a negative must be a pair that is no edge: draw it again (a random link split, "
         "docs/formats.md, draws such negatives)");
  }
}

// Validation or test positives that are edges of the message-passing graph.
Hits leaked_positives(const at::Tensor& pos, const EdgeLookup& edges, bool directed) {
  const int64_t* p = pos.data_ptr<int64_t>();
  return count_where(pos.size(0), 1 << 12, [&](int64_t i) {
    const int64_t u = p[2 * i], v = p[2 * i + 1];
    return directed ? edges.contains(u, v) : edges.connects(u, v);
  });
}

// No validation or test positive is an edge of the message-passing graph.
void refuse_leaks(const LinkSplit& s, const EdgeLookup& edges, bool directed,
                  const std::string& where) {
  for (const auto& [pos, name] : {std::pair{&s.val, "val"}, std::pair{&s.test, "test"}}) {
    const int64_t leak = leaked_positives(*pos, edges, directed).first;
    if (leak < 0) continue;
    const int64_t* p = pos->data_ptr<int64_t>();
    fail(where, "/link/", name, ".npy: positive ", leak, " (", p[2 * leak], " -> ", p[2 * leak + 1],
         ") is an edge of the message-passing graph (indptr.npy, indices.npy",
         directed ? "" : ", either direction", "): it would leak into message passing; remove the ",
         name, " edges from the graph (a random link split does, docs/formats.md)");
  }
}

}  // namespace

void validate_link_split(LinkSplit& s, const CsrGraph& graph, bool directed,
                         const std::string& where) {
  const int64_t n = graph.num_nodes();
  s.train = check_ids2d(s.train, 2, n, where + "/link/train.npy");
  s.val = check_ids2d(s.val, 2, n, where + "/link/val.npy");
  s.test = check_ids2d(s.test, 2, n, where + "/link/test.npy");
  check_negatives(s, n, where);
  const EdgeLookup edges(graph);
  const int64_t missing =
      first_pair_where(s.train, [&](int64_t u, int64_t v) { return !edges.contains(u, v); });
  if (missing >= 0) {
    const int64_t* p = s.train.data_ptr<int64_t>();
    fail(where, "/link/train.npy: positive ", missing, " (", p[2 * missing], " -> ",
         p[2 * missing + 1],
         ") is no edge of the message-passing graph (indptr.npy, indices.npy); training edges "
         "must be in it (a random link split of the whole graph, docs/formats.md, makes a "
         "consistent one)");
  }
  if (!s.eval_edges_in_graph) refuse_leaks(s, edges, directed, where);
  if (s.published) return;
  refuse_repeated_positives(s.val, n, directed, where + "/link/val.npy");
  refuse_repeated_positives(s.test, n, directed, where + "/link/test.npy");
  if (s.negatives != LinkNegatives::kNone) refuse_negative_edges(s, edges, directed, where);
}

LinkSplitFaults count_link_split_faults(const LinkSplit& s, const CsrGraph& graph, bool directed) {
  const EdgeLookup edges(graph);
  const int64_t n = graph.num_nodes();
  LinkSplitFaults out;
  for (const at::Tensor* pos : {&s.val, &s.test}) {
    out.in_graph += leaked_positives(*pos, edges, directed).count;
    out.repeated += repeated_positives(*pos, n, directed).count;
  }
  if (s.negatives == LinkNegatives::kNone) return out;
  const NegativeEdges negatives(s, edges, directed);
  out.negative_edges =
      negatives.find(s.val_neg, s.val).count + negatives.find(s.test_neg, s.test).count;
  return out;
}

}  // namespace directgnn
