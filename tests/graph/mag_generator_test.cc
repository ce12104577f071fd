#include "graph/mag_generator.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "test_util.h"

namespace directgnn {
namespace {

MagOptions small(double scale = 0.005, uint64_t seed = 5) {
  MagOptions o;
  o.scale = scale;
  o.num_classes = 8;
  o.feat_dim = 16;
  o.seed = seed;
  return o;
}

const Relation& relation(const HeteroDataset& ds, const std::string& key) {
  return ds.relations[static_cast<size_t>(ds.relation_index(key, "test"))];
}

// Each relation's destination ids, one per edge, and its source ids, as int64.
std::pair<at::Tensor, at::Tensor> edges(const Relation& r) {
  return {at::repeat_interleave(r.graph.degrees()), r.graph.indices.to(at::kLong)};
}

void expect_same_dataset(const HeteroDataset& a, const HeteroDataset& b) {
  ASSERT_EQ(a.relations.size(), b.relations.size());
  for (size_t r = 0; r < a.relations.size(); ++r) {
    EXPECT_TRUE(a.relations[r].graph.indptr.equal(b.relations[r].graph.indptr)) << r;
    EXPECT_TRUE(a.relations[r].graph.indices.equal(b.relations[r].graph.indices)) << r;
  }
  EXPECT_TRUE(a.labels.equal(b.labels));
  EXPECT_TRUE(a.node_types[0].features.equal(b.node_types[0].features));
  EXPECT_TRUE(a.splits[0].train.equal(b.splits[0].train));
  EXPECT_TRUE(a.splits[0].test.equal(b.splits[0].test));
}

TEST(MagGenerator, ValidatesWithOgbnMagsShapeAtTheScale) {
  const MagOptions o = small();
  HeteroDataset ds = generate_mag(o);
  validate_hetero(ds, "test");
  const std::vector<int64_t> counts = mag_node_counts(o.scale);
  EXPECT_EQ(counts, (std::vector<int64_t>{3682, 5673, 44, 300}));
  const char* names[] = {"paper", "author", "institution", "field_of_study"};
  for (size_t t = 0; t < 4; ++t) {
    EXPECT_EQ(ds.node_types[t].name, names[t]);
    EXPECT_EQ(ds.node_types[t].count, counts[t]);
    EXPECT_EQ(ds.node_types[t].has_features(), t == 0) << "features on papers only";
  }
  EXPECT_EQ(ds.node_types[0].features.sizes(), (at::IntArrayRef{counts[0], 16}));
  EXPECT_EQ(ds.target().name, "paper");
  EXPECT_EQ(ds.relations.size(), 7u);
  // Edges within a few percent of ogbn-mag's per-node means; cites counts both directions.
  const std::vector<int64_t> target = mag_edge_targets(o.scale);
  const std::pair<const char*, int64_t> forward[] = {
      {"author,writes,paper", target[1]},
      {"author,affiliated_with,institution", target[2]},
      {"paper,has_topic,field_of_study", target[3]}};
  for (const auto& [key, want] : forward) {
    const double got = static_cast<double>(relation(ds, key).num_edges());
    EXPECT_GT(got, 0.9 * static_cast<double>(want)) << key;
    EXPECT_LT(got, 1.1 * static_cast<double>(want)) << key;
  }
  const double cites = static_cast<double>(relation(ds, "cites").num_edges());
  EXPECT_GT(cites, 1.5 * static_cast<double>(target[0]));
  EXPECT_LE(cites, 2.0 * static_cast<double>(target[0]) * 1.1);
}

TEST(MagGenerator, LabelsAndSplitsCoverThePapers) {
  const MagOptions o = small();
  const HeteroDataset ds = generate_mag(o);
  const int64_t n = ds.target().count;
  EXPECT_EQ(ds.num_classes, 8);
  EXPECT_GE(ds.labels.min().item<int64_t>(), 0);
  EXPECT_LT(ds.labels.max().item<int64_t>(), 8);
  // Communities are equal blocks: every class holds n / 8 papers, give or take one.
  const at::Tensor per_class = at::bincount(ds.labels);
  EXPECT_LE((per_class.max() - per_class.min()).item<int64_t>(), 1);
  const Split& s = ds.splits[0];
  EXPECT_NEAR(static_cast<double>(s.train.numel()), 0.6 * n, 1);
  EXPECT_NEAR(static_cast<double>(s.val.numel()), 0.2 * n, 1);
  const at::Tensor all = std::get<0>(at::cat({s.train, s.val, s.test}).sort());
  EXPECT_TRUE(all.equal(at::arange(n, at::kLong))) << "the splits partition the papers";
}

TEST(MagGenerator, SameGraphForTheSeedWhateverTheThreadCount) {
  const int before = at::get_num_threads();
  at::set_num_threads(1);
  const HeteroDataset one = generate_mag(small());
  at::set_num_threads(2);
  const HeteroDataset two = generate_mag(small());
  at::set_num_threads(before);
  expect_same_dataset(one, two);
  expect_same_dataset(one, generate_mag(small()));
  const HeteroDataset other = generate_mag(small(0.005, 6));
  const Relation &a = relation(one, "writes"), &b = relation(other, "writes");
  EXPECT_FALSE(a.graph.indices.sizes() == b.graph.indices.sizes() &&
               a.graph.indices.equal(b.graph.indices));
  EXPECT_FALSE(one.labels.equal(other.labels));
}

TEST(MagGenerator, ReversesAreTransposesAndCitesIsSymmetric) {
  const HeteroDataset ds = generate_mag(small());
  for (const char* rel : {"writes", "affiliated_with", "has_topic"}) {
    const Relation& forward = relation(ds, rel);
    const Relation& reverse = relation(ds, std::string("rev_") + rel);
    EXPECT_EQ(reverse.src, forward.dst);
    EXPECT_EQ(reverse.dst, forward.src);
    const CsrGraph t = transpose_relation(forward.graph, ds.node_types[forward.src_type].count);
    EXPECT_TRUE(t.indptr.equal(reverse.graph.indptr)) << rel;
    EXPECT_TRUE(t.indices.to(at::kLong).equal(reverse.graph.indices.to(at::kLong))) << rel;
  }
  const Relation& cites = relation(ds, "cites");
  const CsrGraph t = transpose_relation(cites.graph, cites.graph.num_nodes());
  EXPECT_TRUE(t.indptr.equal(cites.graph.indptr));
  EXPECT_TRUE(t.indices.to(at::kLong).equal(cites.graph.indices.to(at::kLong)));
  const auto [dst, src] = edges(cites);
  EXPECT_EQ((dst == src).sum().item<int64_t>(), 0) << "no paper cites itself";
}

TEST(MagGenerator, DegreesAreHeavyTailed) {
  const HeteroDataset ds = generate_mag(small(0.02));
  // Papers per author, authors per paper, citations received, papers per field.
  for (const char* rel : {"rev_writes", "writes", "cites", "has_topic"}) {
    const at::Tensor deg = relation(ds, rel).graph.degrees().to(at::kDouble);
    const double mean = deg.mean().item<double>(), max = deg.max().item<double>();
    EXPECT_GT(max, 10 * mean) << rel << ": max " << max << ", mean " << mean;
  }
}

// Papers' labels against what their authors reveal: an author's other papers' labels, and the
// features of the papers two hops away, as a relational model reads them.
TEST(MagGenerator, RelationsRevealTheLabelWhileFeaturesAreWeak) {
  MagOptions o = small(0.01);
  o.num_classes = 16;
  o.feat_dim = 128;
  const HeteroDataset ds = generate_mag(o);
  const auto [paper, author] = edges(relation(ds, "writes"));
  const int64_t n = ds.target().count, num_authors = ds.node_types[1].count, k = 16;
  // Label counts per author; excluding the paper's own label from its authors' counts.
  const at::Tensor labels = ds.labels;
  at::Tensor per_author = at::zeros({num_authors * k}, at::kLong);
  per_author.index_add_(0, author * k + labels.index({paper}),
                        at::ones({paper.numel()}, at::kLong));
  const at::Tensor own = per_author.index({author * k + labels.index({paper})}) - 1;
  const at::Tensor papers_of = at::bincount(author, {}, num_authors).index({author}) - 1;
  const at::Tensor has_other = papers_of > 0;
  const double agree =
      (own.index({has_other}).to(at::kDouble) / papers_of.index({has_other}).to(at::kDouble))
          .mean()
          .item<double>();
  EXPECT_GT(agree, 0.5) << "an author's other papers share the paper's label (chance: 1/16)";

  // Nearest class mean (means from the train split) on a paper's own features, and on the
  // mean of its authors' mean paper features.
  const at::Tensor x = ds.node_types[0].features.to(at::kFloat);
  const at::Tensor train = ds.splits[0].train, test = ds.splits[0].test;
  const at::Tensor means =
      at::zeros({k, x.size(1)}).index_add_(0, labels.index({train}), x.index({train})) /
      at::bincount(labels.index({train}), {}, k).unsqueeze(1);
  const auto accuracy = [&](const at::Tensor& rows) {
    const at::Tensor guess = at::cdist(rows.index({test}), means).argmin(1);
    return (guess == labels.index({test})).to(at::kDouble).mean().item<double>();
  };
  const at::Tensor author_deg = at::bincount(author, {}, num_authors).clamp_min(1);
  const at::Tensor author_mean =
      at::zeros({num_authors, x.size(1)}).index_add_(0, author, x.index({paper})) /
      author_deg.unsqueeze(1);
  const at::Tensor paper_deg = at::bincount(paper, {}, n).clamp_min(1);
  const at::Tensor two_hop =
      at::zeros({n, x.size(1)}).index_add_(0, paper, author_mean.index({author})) /
      paper_deg.unsqueeze(1);
  const double from_features = accuracy(x), from_relations = accuracy(two_hop);
  EXPECT_LT(from_features, 0.5) << "paper features alone must be a weak signal";
  EXPECT_GT(from_relations, from_features + 0.2)
      << "own features " << from_features << ", two hops over writes " << from_relations;
  std::printf("nearest class mean: own features %.3f, two hops over writes %.3f\n", from_features,
              from_relations);
}

TEST(MagGenerator, RejectsOptionsOutOfRange) {
  MagOptions o = small();
  o.scale = 0.0005;  // 4 institutions for 8 communities
  EXPECT_ERROR_CONTAINS(check_mag_options(o), "institutions");
  o = small();
  o.mixing = 1.5;
  EXPECT_ERROR_CONTAINS(check_mag_options(o), "mixing");
  o = small();
  o.train_fraction = 0.9;
  EXPECT_ERROR_CONTAINS(check_mag_options(o), "test split");
  o = small();
  o.feat_dtype = at::kDouble;
  EXPECT_ERROR_CONTAINS(check_mag_options(o), "float16");
}

TEST(MagGenerator, Float16Features) {
  MagOptions o = small();
  o.feat_dtype = at::kHalf;
  const HeteroDataset half = generate_mag(o);
  const HeteroDataset single = generate_mag(small());
  ASSERT_EQ(half.node_types[0].features.scalar_type(), at::kHalf);
  EXPECT_TRUE(half.node_types[0]
                  .features.to(at::kFloat)
                  .allclose(single.node_types[0].features.to(at::kHalf).to(at::kFloat)));
}

}  // namespace
}  // namespace directgnn
