#include "graph/rmat.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <cmath>

#include "core/progress.h"
#include "core/random.h"
#include "directgnn/error.h"
#include "graph/class_features.h"
#include "graph/coo_builder.h"

namespace directgnn {
namespace {

int ceil_log2(int64_t n) {
  int bits = 0;
  while ((int64_t{1} << bits) < n) ++bits;
  return bits;
}

// A seeded bijection of [0, n): a 4-round Feistel network on the smallest even-width power of
// two >= n, cycle-walked back into range. Computed per id, so relabelling needs neither a
// permutation array nor a sort, and runs on any number of threads.
class Relabel {
 public:
  Relabel(int64_t n, uint64_t seed) : n_(n) {
    half_ = (std::max(ceil_log2(n), 2) + 1) / 2;
    mask_ = (uint64_t{1} << half_) - 1;
    for (int i = 0; i < kRounds; ++i) keys_[i] = mix64(seed, 8, static_cast<uint64_t>(i));
  }
  int64_t forward(int64_t x) const {
    do {
      x = static_cast<int64_t>(encrypt(static_cast<uint64_t>(x)));
    } while (x >= n_);
    return x;
  }
  int64_t inverse(int64_t y) const {
    do {
      y = static_cast<int64_t>(decrypt(static_cast<uint64_t>(y)));
    } while (y >= n_);
    return y;
  }

 private:
  static constexpr int kRounds = 4;
  uint64_t round_fn(uint64_t half, int i) const { return mix64(keys_[i], half) & mask_; }
  uint64_t encrypt(uint64_t x) const {
    uint64_t l = x >> half_, r = x & mask_;
    for (int i = 0; i < kRounds; ++i) {
      const uint64_t next = l ^ round_fn(r, i);
      l = r;
      r = next;
    }
    return (l << half_) | r;
  }
  uint64_t decrypt(uint64_t y) const {
    uint64_t l = y >> half_, r = y & mask_;
    for (int i = kRounds - 1; i >= 0; --i) {
      const uint64_t prev = r ^ round_fn(l, i);
      r = l;
      l = prev;
    }
    return (l << half_) | r;
  }

  int64_t n_;
  int half_;
  uint64_t mask_;
  uint64_t keys_[kRounds];
};

// Edges [begin, end): each descends the quadrants from its own random stream; endpoints past
// the node count are redrawn.
void draw_edges(const RmatOptions& o, int scale, const Relabel& relabel, int64_t begin, int64_t end,
                int64_t* s, int64_t* d) {
  const int64_t n = o.num_nodes;
  const double ab = o.a + o.b, abc = o.a + o.b + o.c;
  at::parallel_for(begin, end, 1 << 14, [&](int64_t lo, int64_t hi) {
    for (int64_t e = lo; e < hi; ++e) {
      SplitRng r(mix64(o.seed, 7, static_cast<uint64_t>(e)));
      int64_t u = 0, v = 0;
      do {
        u = 0;
        v = 0;
        for (int level = 0; level < scale; ++level) {
          const double x = r.uniform();
          const int64_t bu = x >= ab ? 1 : 0;
          const int64_t bv = (x >= o.a && x < ab) || x >= abc ? 1 : 0;
          u = (u << 1) | bu;
          v = (v << 1) | bv;
        }
      } while (u >= n || v >= n);
      s[e] = relabel.forward(u);
      d[e] = relabel.forward(v);
    }
  });
}

}  // namespace

void check_rmat_options(const RmatOptions& o) {
  DGNN_CHECK(o.num_nodes >= 2 && o.num_nodes <= (int64_t{1} << 40),
             "rmat: the graph needs between 2 and 2^40 nodes (got ", o.num_nodes, ")");
  DGNN_CHECK_ARG(o.edge_factor > 0 && std::isfinite(o.edge_factor), "edge_factor",
                 "must be positive (got ", o.edge_factor, ")");
  DGNN_CHECK(o.a > 0 && o.b >= 0 && o.c >= 0 && o.a + o.b + o.c < 1,
             "rmat: quadrant probabilities need a > 0, b, c >= 0 and a + b + c < 1 (got a=", o.a,
             ", b=", o.b, ", c=", o.c, ")");
}

int64_t rmat_edges_drawn(const RmatOptions& o) {
  return static_cast<int64_t>(std::llround(o.edge_factor * static_cast<double>(o.num_nodes)));
}

RmatGraph generate_rmat(const RmatOptions& o) {
  check_rmat_options(o);
  const int64_t n = o.num_nodes;
  const int scale = ceil_log2(n);
  const int64_t m = rmat_edges_drawn(o);
  const Relabel relabel(n, o.seed);
  at::Tensor src = at::empty({m}, at::kLong), dst = at::empty({m}, at::kLong);
  int64_t* s = src.data_ptr<int64_t>();
  int64_t* d = dst.data_ptr<int64_t>();
  // Drawn in rounds so a progress line can follow; each edge still has its own stream.
  Progress progress("drawing edges", m);
  const int64_t round = std::max<int64_t>(int64_t{1} << 22, m / 100);
  for (int64_t first = 0; first < m; first += round) {
    draw_edges(o, scale, relabel, first, std::min(m, first + round), s, d);
    progress.update(std::min(m, first + round));
  }
  progress.finish();
  RmatGraph out;
  out.graph = build_csr_from_coo(std::move(src), std::move(dst), n, {true, true}, "rmat graph");
  out.rmat_id = at::empty({n}, at::kLong);
  int64_t* id = out.rmat_id.data_ptr<int64_t>();
  at::parallel_for(0, n, 1 << 14, [&](int64_t begin, int64_t end) {
    for (int64_t v = begin; v < end; ++v) id[v] = relabel.inverse(v);
  });
  return out;
}

void add_rmat_labels_and_split(const RmatDatasetOptions& o, const at::Tensor& rmat_id,
                               Dataset& ds) {
  const int64_t n = rmat_id.numel(), classes = o.num_classes;
  DGNN_CHECK_ARG(classes >= 2 && classes <= n, "num_classes", "must be in [2, nodes] (got ",
                 classes, ")");
  const double f_train = o.train_fraction, f_val = o.val_fraction, f_test = o.test_fraction;
  DGNN_CHECK(f_train > 0 && f_val > 0 && f_test > 0 && f_train + f_val + f_test <= 1,
             "rmat: split fractions must be positive and sum to at most 1 (got ", f_train, ", ",
             f_val, ", ", f_test, ")");
  ds.num_classes = classes;
  ds.labels = at::empty({n}, at::kLong);
  int64_t* label = ds.labels.data_ptr<int64_t>();
  const int64_t* id = rmat_id.data_ptr<int64_t>();
  // Each node falls into train, val, test or none by a uniform draw of its own stream.
  at::Tensor which = at::empty({n}, at::kChar);
  int8_t* w = which.data_ptr<int8_t>();
  at::parallel_for(0, n, 1 << 14, [&](int64_t begin, int64_t end) {
    for (int64_t v = begin; v < end; ++v) {
      label[v] = static_cast<int64_t>(static_cast<__int128>(id[v]) * classes / n);
      const double x = SplitRng(mix64(o.graph.seed, 6, static_cast<uint64_t>(v))).uniform();
      w[v] = x < f_train ? 0 : x < f_train + f_val ? 1 : x < f_train + f_val + f_test ? 2 : 3;
    }
  });
  Split split;
  split.train = (which == 0).nonzero().view(-1);
  split.val = (which == 1).nonzero().view(-1);
  split.test = (which == 2).nonzero().view(-1);
  DGNN_CHECK(split.train.numel() > 0 && split.val.numel() > 0 && split.test.numel() > 0,
             "rmat: a split came out empty for ", n, " nodes; raise the split fractions");
  ds.splits = {split};
}

at::Tensor make_rmat_features(const RmatDatasetOptions& o, const at::Tensor& labels) {
  DGNN_CHECK_ARG(o.feat_dim > 0, "feat_dim", "must be positive");
  DGNN_CHECK(o.feat_dtype == at::kFloat || o.feat_dtype == at::kHalf,
             "rmat: features are float32 or float16, not ", o.feat_dtype);
  const ClassFeatures features(o.num_classes, o.feat_dim, o.signal, o.graph.seed);
  const int64_t* ids = labels.data_ptr<int64_t>();
  FeatureStream stream;
  stream.rows = labels.numel();
  stream.dim = o.feat_dim;
  stream.dtype = o.feat_dtype;
  stream.fill = [&](int64_t begin, int64_t end, float* rows) {
    features.fill(ids, begin, end, rows);
  };
  return feature_table_of(stream);
}

Dataset make_rmat_dataset(const RmatDatasetOptions& o) {
  DGNN_CHECK_ARG(o.feat_dim > 0, "feat_dim", "must be positive");
  RmatGraph g = generate_rmat(o.graph);
  Dataset ds;
  ds.name = "rmat";
  ds.source = "R-MAT graph made in memory";
  ds.graph = std::move(g.graph);
  add_rmat_labels_and_split(o, g.rmat_id, ds);
  g.rmat_id = at::Tensor();
  ds.features = make_rmat_features(o, ds.labels);
  return ds;
}

}  // namespace directgnn
