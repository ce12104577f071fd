#include "graph/mag_generator.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <utility>

#include "core/clock.h"
#include "core/progress.h"
#include "core/random.h"
#include "directgnn/error.h"
#include "graph/class_features.h"

namespace directgnn {
namespace {

// A shape's sizes: nodes by type (paper, author, institution, field_of_study), then edges by
// relation before reverses (cites, writes, affiliated_with, has_topic); 0 where it has none.
struct ShapeSizes {
  int64_t nodes[4];
  int64_t edges[4];
  int types;
  // Affiliations per author: 0 below the first bound of a uniform draw, 1 below the second,
  // 2 below the third, else 3.
  double affiliation_bounds[3];
};
// ogbn-mag: mean 0.92 affiliations per author (1,043,998 for 1,134,649 authors).
constexpr ShapeSizes kOgbnMagSizes = {
    {736389, 1134649, 8740, 59965}, {5416271, 7145660, 1043998, 7505078}, 4, {0.14, 0.95, 0.99}};
// OGB-LSC MAG240M: mean 0.364 (44,592,586 for 122,383,112 authors).
constexpr ShapeSizes kMag240mSizes = {
    {121751666, 122383112, 25721, 0}, {1297748926, 386022720, 44592586, 0}, 3, {0.695, 0.95, 0.99}};
// MAG240M's labelled papers (its arXiv ones) and their split: 1,112,392 / 138,949 / 146,818.
constexpr double kMag240mLabelled = 1398159.0 / 121751666.0;
constexpr double kMag240mTrain = 1112392.0 / 1398159.0, kMag240mVal = 138949.0 / 1398159.0;

const ShapeSizes& sizes_of(MagShape shape) {
  return shape == MagShape::kMag240m ? kMag240mSizes : kOgbnMagSizes;
}

// Purposes of the random streams, so no two draws share one: mix64(seed, purpose, id).
enum Purpose : uint64_t {
  kRanks = 201,
  kCitesDraws,
  kWritesDraws,
  kAffiliationDraws,
  kTopicDraws,
  kFeatureSeed,
  kSplitSeed
};

// Popularity skew within a community: a node's weight is (rank + 1)^-skew. Fields and
// institutions concentrate more than authors, as in ogbn-mag.
constexpr double kAuthorSkew = 0.6, kPaperSkew = 0.7, kFieldSkew = 0.9, kInstitutionSkew = 0.9;
// Each slot of a node's neighbour list redraws this often when it hits a duplicate or itself.
constexpr int kRedraws = 8;

int64_t scaled(int64_t count, double scale) {
  return std::max<int64_t>(1, std::llround(static_cast<double>(count) * scale));
}

// One node type's communities: a seeded permutation ranks the ids, community c holds the
// ranks [c * n / k, (c + 1) * n / k), and popularity falls with the rank inside a community.
class Communities {
 public:
  Communities(int64_t count, int64_t k, double skew, uint64_t seed)
      : count_(count),
        k_(k),
        skew_(skew),
        by_rank_(static_cast<size_t>(count)),
        community_(static_cast<size_t>(count)),
        top_(static_cast<size_t>(k)) {
    for (int64_t r = 0; r < count; ++r) by_rank_[r] = r;
    seeded_shuffle(by_rank_.data(), count, seed);
    for (int64_t c = 0; c < k; ++c) {
      for (int64_t r = start(c); r < start(c + 1); ++r) {
        community_[by_rank_[r]] = static_cast<int32_t>(c);
      }
      top_[c] = std::pow(static_cast<double>(start(c + 1) - start(c) + 1), 1.0 - skew);
    }
  }

  int64_t count() const { return count_; }
  int64_t of(int64_t id) const { return community_[id]; }
  // Every node's community, int64 [count].
  at::Tensor all() const {
    return at::from_blob(const_cast<int32_t*>(community_.data()), {count_}, at::kInt).to(at::kLong);
  }

  // A member of community c by popularity: the power law's continuous CDF on [1, size + 1)
  // inverted, so a draw costs two pow calls and needs no table.
  int64_t draw(int64_t c, SplitRng& r) const {
    const int64_t first = start(c), size = start(c + 1) - first;
    const double x = std::pow(1.0 + r.uniform() * (top_[c] - 1.0), 1.0 / (1.0 - skew_));
    const int64_t j = std::min(size - 1, std::max<int64_t>(0, static_cast<int64_t>(x) - 1));
    return by_rank_[first + j];
  }

 private:
  int64_t start(int64_t c) const { return c * count_ / k_; }

  int64_t count_, k_;
  double skew_;
  std::vector<int64_t> by_rank_;
  std::vector<int32_t> community_;
  std::vector<double> top_;  // (size + 1)^(1 - skew) per community
};

// min(cap, 1 + floor(X)) with X Lomax (Pareto II) of shape alpha: a heavy tail whose scale is
// solved so that the mean is `mean`, cap included.
class DegreeLaw {
 public:
  DegreeLaw(double mean, double alpha, int64_t cap)
      : alpha_(alpha), cap_(std::max<int64_t>(1, cap)) {
    double lo = 1e-6, hi = 1e9;  // expected() grows with the scale; bisect on its logarithm
    for (int i = 0; i < 100; ++i) {
      const double mid = std::sqrt(lo * hi);
      (expected(mid) < mean ? lo : hi) = mid;
    }
    lambda_ = std::sqrt(lo * hi);
  }

  int64_t operator()(SplitRng& r) const {
    const double x = lambda_ * (std::pow(1.0 - r.uniform(), -1.0 / alpha_) - 1.0);
    return x >= static_cast<double>(cap_ - 1) ? cap_ : 1 + static_cast<int64_t>(x);
  }

 private:
  // E[min(cap, 1 + floor(X))] = 1 + sum over j in [1, cap) of P(X >= j).
  double expected(double lambda) const {
    double sum = 1;
    for (int64_t j = 1; j < cap_; ++j)
      sum += std::pow(1.0 + static_cast<double>(j) / lambda, -alpha_);
    return sum;
  }

  double alpha_, lambda_ = 1;
  int64_t cap_;
};

// Affiliations per author: 0 to 3, with the shape's mean.
int64_t affiliation_count(const ShapeSizes& sizes, SplitRng& r) {
  const double u = r.uniform();
  const double* b = sizes.affiliation_bounds;
  return u < b[0] ? 0 : u < b[1] ? 1 : u < b[2] ? 2 : 3;
}

// How one relation is drawn: every owner node takes degree(stream) distinct neighbours among
// `targets`, each from the owner's community with chance 1 - mixing (else from a uniformly
// random one) and within that community by popularity.
struct EdgeDraw {
  const Communities* owners;
  const Communities* targets;
  std::function<int64_t(SplitRng&)> degree;
  Purpose purpose;
  bool same_type;  // owners and targets are one type: a node never draws itself
};

// Neighbours of owners [begin, end) into their slots; each owner replays its own stream.
void fill_neighbours(const EdgeDraw& d, const MagOptions& o, const int64_t* offsets, int64_t begin,
                     int64_t end, int64_t* owner, int64_t* target) {
  at::parallel_for(begin, end, 1 << 10, [&](int64_t lo, int64_t hi) {
    for (int64_t e = lo; e < hi; ++e) {
      SplitRng r(mix64(o.seed, d.purpose, static_cast<uint64_t>(e)));
      const int64_t degree = d.degree(r), first = offsets[e];
      const int64_t own = d.owners->of(e);
      for (int64_t i = 0; i < degree; ++i) {
        int64_t t = -1;
        for (int attempt = 0; attempt < kRedraws; ++attempt) {
          const bool mixed = r.uniform() < o.mixing;
          const int64_t c = mixed ? static_cast<int64_t>(r.below(o.num_classes)) : own;
          t = d.targets->draw(c, r);
          const bool self = d.same_type && t == e;
          if (!self && std::find(target + first, target + first + i, t) == target + first + i) {
            break;
          }
        }
        // Out of tries: a duplicate is dropped when the CSR is built, a self-loop is not.
        if (d.same_type && t == e) t = (e + 1) % d.targets->count();
        owner[first + i] = e;
        target[first + i] = t;
      }
    }
  });
}

// The relation's edges as (owner, target) id arrays, int64 [edges drawn].
std::pair<at::Tensor, at::Tensor> draw_relation(const EdgeDraw& d, const MagOptions& o,
                                                Progress& progress, int64_t& done) {
  const int64_t n = d.owners->count();
  at::Tensor counts = at::zeros({n + 1}, at::kLong);
  int64_t* count = counts.data_ptr<int64_t>();
  at::parallel_for(0, n, 1 << 12, [&](int64_t lo, int64_t hi) {
    for (int64_t e = lo; e < hi; ++e) {
      SplitRng r(mix64(o.seed, d.purpose, static_cast<uint64_t>(e)));
      count[e + 1] = d.degree(r);
    }
  });
  const at::Tensor offsets = counts.cumsum(0);
  const int64_t* offset = offsets.data_ptr<int64_t>();
  const int64_t m = offset[n];
  at::Tensor owner = at::empty({m}, at::kLong), target = at::empty({m}, at::kLong);
  // In rounds so the progress line moves; the result does not depend on the rounds.
  const int64_t round = std::max<int64_t>(1 << 16, n / 20);
  for (int64_t first = 0; first < n; first += round) {
    const int64_t last = std::min(n, first + round);
    fill_neighbours(d, o, offset, first, last, owner.data_ptr<int64_t>(),
                    target.data_ptr<int64_t>());
    progress.update(done + last);
  }
  done += n;
  return {std::move(owner), std::move(target)};
}

Relation make_relation(const HeteroDataset& ds, int src_type, const char* rel, int dst_type,
                       at::Tensor src, at::Tensor dst) {
  Relation r;
  r.src = ds.node_types[src_type].name;
  r.rel = rel;
  r.dst = ds.node_types[dst_type].name;
  r.src_type = src_type;
  r.dst_type = dst_type;
  r.graph = build_relation_csr(std::move(src), std::move(dst), ds.node_types[src_type].count,
                               ds.node_types[dst_type].count, "generate mag (" + r.key() + ")");
  return r;
}

// Type indices in the dataset, in mag_node_counts' order.
enum Type { kPaper = 0, kAuthor = 1, kInstitution = 2, kField = 3 };

// Papers draw cites, writes (their authors) and has_topic; authors draw affiliations. Counts
// per owner follow ogbn-mag's means; caps keep a neighbour list within reach of the targets.
void draw_relations(const MagOptions& o, const std::vector<Communities>& types, HeteroDataset& ds,
                    MagTimings& timings) {
  const ShapeSizes& sizes = sizes_of(o.shape);
  const Communities &papers = types[kPaper], &authors = types[kAuthor];
  const Communities& institutions = types[kInstitution];
  const auto per = [&](int relation) {
    return static_cast<double>(sizes.edges[relation]) / static_cast<double>(sizes.nodes[kPaper]);
  };
  const auto cap = [&](double mean, double factor, const Communities& targets) {
    return std::min<int64_t>(std::llround(mean * factor),
                             std::max<int64_t>(1, targets.count() / 4));
  };
  const double cites = per(0), writes = per(1);
  const auto affiliations = [&sizes](SplitRng& r) { return affiliation_count(sizes, r); };
  std::vector<EdgeDraw> draws = {
      {&authors, &institutions, affiliations, kAffiliationDraws, false},
      {&papers, &authors, DegreeLaw(writes, 2.5, cap(writes, 40, authors)), kWritesDraws, false},
      {&papers, &papers, DegreeLaw(cites, 2.5, cap(cites, 40, papers)), kCitesDraws, true},
  };
  if (sizes.types == 4) {
    const double topics = per(3);
    draws.push_back({&papers, &types[kField],
                     DegreeLaw(topics, 4.0, cap(topics, 10, types[kField])), kTopicDraws, false});
  }
  Progress progress("drawing mag relations",
                    authors.count() + static_cast<int64_t>(draws.size() - 1) * papers.count());
  int64_t done = 0;
  for (const EdgeDraw& d : draws) {
    const auto t0 = Clock::now();
    auto [owner, target] = draw_relation(d, o, progress, done);
    if (d.purpose == kAffiliationDraws) {
      ds.relations.push_back(make_relation(ds, kAuthor, "affiliated_with", kInstitution,
                                           std::move(owner), std::move(target)));
    } else if (d.purpose == kWritesDraws) {
      ds.relations.push_back(
          make_relation(ds, kAuthor, "writes", kPaper, std::move(target), std::move(owner)));
    } else if (d.purpose == kCitesDraws) {
      ds.relations.push_back(
          make_relation(ds, kPaper, "cites", kPaper, std::move(owner), std::move(target)));
    } else {
      ds.relations.push_back(
          make_relation(ds, kPaper, "has_topic", kField, std::move(owner), std::move(target)));
    }
    timings.phases.emplace_back(ds.relations.back().rel, seconds_since(t0));
  }
  progress.finish();
}

// Papers labelled, and of them in the train and validation splits (the rest: test).
struct SplitSizes {
  int64_t labelled, train, val;
};
SplitSizes split_sizes(const MagOptions& o, int64_t papers) {
  const int64_t labelled = std::llround(o.labelled_fraction * static_cast<double>(papers));
  const auto of = [&](double fraction) {
    return std::llround(fraction * static_cast<double>(labelled));
  };
  return {labelled, of(o.train_fraction), of(o.val_fraction)};
}

// The first papers of a seeded permutation are labelled, with their communities, and cut into
// the splits by the fractions; the others' labels are -1.
void add_labels_and_split(const MagOptions& o, const Communities& papers, HeteroDataset& ds) {
  const int64_t n = papers.count();
  ds.target_type = kPaper;
  ds.num_classes = o.num_classes;
  at::Tensor order = at::arange(n, at::kLong);
  seeded_shuffle(order.data_ptr<int64_t>(), n, mix64(o.seed, kSplitSeed));
  const auto [labelled, train, val] = split_sizes(o, n);
  if (labelled == n) {
    ds.labels = papers.all();
  } else {
    ds.labels = at::full({n}, -1, at::kLong);
    int64_t* label = ds.labels.data_ptr<int64_t>();
    const int64_t* id = order.data_ptr<int64_t>();
    for (int64_t i = 0; i < labelled; ++i) label[id[i]] = papers.of(id[i]);
  }
  Split split;
  split.train = std::get<0>(order.narrow(0, 0, train).sort());
  split.val = std::get<0>(order.narrow(0, train, val).sort());
  split.test = std::get<0>(order.narrow(0, train + val, labelled - train - val).sort());
  ds.splits = {split};
}

constexpr const char* kTypeNames[] = {"paper", "author", "institution", "field_of_study"};
constexpr double kSkews[] = {kPaperSkew, kAuthorSkew, kInstitutionSkew, kFieldSkew};

}  // namespace

MagOptions mag_shape_defaults(MagShape shape) {
  MagOptions o;
  o.shape = shape;
  if (shape == MagShape::kMag240m) {
    o.feat_dim = 768;
    o.feat_dtype = at::kHalf;
    o.num_classes = 153;
    o.labelled_fraction = kMag240mLabelled;
    o.train_fraction = kMag240mTrain;
    o.val_fraction = kMag240mVal;
  }
  return o;
}

std::vector<int64_t> mag_node_counts(double scale, MagShape shape) {
  const ShapeSizes& sizes = sizes_of(shape);
  std::vector<int64_t> counts;
  for (int t = 0; t < sizes.types; ++t) counts.push_back(scaled(sizes.nodes[t], scale));
  return counts;
}

std::vector<int64_t> mag_edge_targets(double scale, MagShape shape) {
  const ShapeSizes& sizes = sizes_of(shape);
  std::vector<int64_t> edges;
  for (int r = 0; r < sizes.types; ++r) edges.push_back(scaled(sizes.edges[r], scale));
  return edges;
}

void check_mag_options(const MagOptions& o) {
  DGNN_CHECK_ARG(std::isfinite(o.scale) && o.scale > 0 && o.scale <= 1000, "scale",
                 "must be in (0, 1000]; 1 gives the shape's size (got ", o.scale, ")");
  DGNN_CHECK_ARG(o.feat_dim > 0, "feat_dim", "must be positive (got ", o.feat_dim, ")");
  DGNN_CHECK_ARG(o.feat_dtype == at::kFloat || o.feat_dtype == at::kHalf, "feat_dtype",
                 "must be float32 or float16 (got ", o.feat_dtype, ")");
  DGNN_CHECK_ARG(o.num_classes >= 2 && o.num_classes <= (int64_t{1} << 20), "num_classes",
                 "must be in [2, 2^20] (got ", o.num_classes, ")");
  DGNN_CHECK_ARG(std::isfinite(o.signal) && o.signal >= 0, "signal",
                 "must be finite and >= 0 (got ", o.signal, ")");
  DGNN_CHECK_ARG(o.mixing >= 0 && o.mixing <= 1, "mixing", "must be in [0, 1] (got ", o.mixing,
                 ")");
  DGNN_CHECK_ARG(o.labelled_fraction > 0 && o.labelled_fraction <= 1, "labelled_fraction",
                 "must be in (0, 1] (got ", o.labelled_fraction, ")");
  DGNN_CHECK_ARG(
      o.train_fraction > 0 && o.val_fraction > 0 && o.train_fraction + o.val_fraction < 1,
      "train_fraction, val_fraction",
      "must be positive with a sum below 1, leaving papers for the test split (got ",
      o.train_fraction, " and ", o.val_fraction, ")");
  const char* names[] = {"papers", "authors", "institutions", "fields of study"};
  const std::vector<int64_t> counts = mag_node_counts(o.scale, o.shape);
  for (size_t t = 0; t < counts.size(); ++t) {
    DGNN_CHECK_ARG(counts[t] >= o.num_classes, "scale", "gives ", counts[t], " ", names[t],
                   ", fewer than the ", o.num_classes,
                   " communities (one per class); raise the scale or lower num_classes");
  }
  const SplitSizes split = split_sizes(o, counts[kPaper]);
  DGNN_CHECK_ARG(split.train >= 1 && split.val >= 1 && split.train + split.val < split.labelled,
                 "scale", "gives ", split.labelled,
                 " labelled papers, too few for non-empty train, validation and test splits; "
                 "raise it (or labelled_fraction)");
}

HeteroDataset generate_mag_graph(const MagOptions& o, MagTimings* timings) {
  check_mag_options(o);
  MagTimings local;
  MagTimings& times = timings != nullptr ? *timings : local;
  auto t0 = Clock::now();
  const std::vector<int64_t> counts = mag_node_counts(o.scale, o.shape);
  std::vector<Communities> types;
  HeteroDataset ds;
  ds.name = o.shape == MagShape::kMag240m ? "mag240m-synthetic" : "mag-synthetic";
  ds.source = "generate mag";
  for (size_t t = 0; t < counts.size(); ++t) {
    types.emplace_back(counts[t], o.num_classes, kSkews[t], mix64(o.seed, kRanks, t));
    NodeType type;
    type.name = kTypeNames[t];
    type.count = counts[t];
    ds.node_types.push_back(std::move(type));
  }
  add_labels_and_split(o, types[kPaper], ds);
  times.phases.emplace_back("communities and split", seconds_since(t0));
  draw_relations(o, types, ds, times);
  types.clear();
  t0 = Clock::now();
  add_reverse_relations(ds);
  times.phases.emplace_back("reverses", seconds_since(t0));
  t0 = Clock::now();
  validate_hetero(ds, "generate mag", /*features_checked=*/true);
  times.phases.emplace_back("validate", seconds_since(t0));
  return ds;
}

FeatureStream mag_paper_features(const MagOptions& o) {
  check_mag_options(o);
  const int64_t papers = mag_node_counts(o.scale, o.shape)[kPaper];
  // The class-mean-plus-noise model of every paper's community, labelled or not.
  const auto communities = std::make_shared<const at::Tensor>(
      Communities(papers, o.num_classes, kPaperSkew, mix64(o.seed, kRanks, kPaper)).all());
  const auto model = std::make_shared<const ClassFeatures>(o.num_classes, o.feat_dim, o.signal,
                                                           mix64(o.seed, kFeatureSeed));
  FeatureStream stream;
  stream.rows = papers;
  stream.dim = o.feat_dim;
  stream.dtype = o.feat_dtype;
  stream.fill = [communities, model](int64_t begin, int64_t end, float* out) {
    model->fill(communities->data_ptr<int64_t>(), begin, end, out);
  };
  return stream;
}

HeteroDataset generate_mag(const MagOptions& o, MagTimings* timings) {
  MagTimings local;
  MagTimings& times = timings != nullptr ? *timings : local;
  HeteroDataset ds = generate_mag_graph(o, &times);
  const auto t0 = Clock::now();
  ds.node_types[kPaper].features = feature_table_of(mag_paper_features(o));
  times.phases.emplace_back("features", seconds_since(t0));
  return ds;
}

}  // namespace directgnn
