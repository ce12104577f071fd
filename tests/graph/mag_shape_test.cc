// The generator's MAG240M shape and its paper features written as they are made.
#include <ATen/ATen.h>

#include <map>
#include <string>
#include <vector>

#include "graph/mag_generator.h"
#include "io/hetero_dir.h"
#include "test_util.h"

namespace directgnn {
namespace {

using testing::TempDirectory;

MagOptions small240m(double scale = 0.01) {
  MagOptions o = mag_shape_defaults(MagShape::kMag240m);
  o.scale = scale;
  o.num_classes = 16;
  o.feat_dim = 24;
  o.seed = 3;
  return o;
}

TEST(MagShape, Mag240mHasItsTypesRelationsAndCounts) {
  const MagOptions o = small240m();
  EXPECT_EQ(mag_node_counts(o.scale, o.shape), (std::vector<int64_t>{1217517, 1223831, 257}));
  EXPECT_EQ(mag_edge_targets(o.scale, o.shape), (std::vector<int64_t>{12977489, 3860227, 445926}));
  const MagOptions d = mag_shape_defaults(MagShape::kMag240m);
  EXPECT_EQ(d.feat_dim, 768);
  EXPECT_EQ(d.feat_dtype, at::kHalf);
  EXPECT_EQ(d.num_classes, 153);

  const HeteroDataset ds = generate_mag_graph(small240m(0.002));
  ASSERT_EQ(ds.node_types.size(), 3u);
  const char* names[] = {"paper", "author", "institution"};
  for (size_t t = 0; t < 3; ++t) EXPECT_EQ(ds.node_types[t].name, names[t]);
  EXPECT_FALSE(ds.node_types[0].has_features()) << "the graph comes without its features";
  std::vector<std::string> keys;
  for (const Relation& r : ds.relations) keys.push_back(r.key());
  EXPECT_EQ(keys,
            (std::vector<std::string>{"author,affiliated_with,institution", "author,writes,paper",
                                      "paper,cites,paper", "institution,rev_affiliated_with,author",
                                      "paper,rev_writes,author"}));
  // Per-node means near MAG240M's: 21.3 citations (both directions), 3.17 authors per paper,
  // 0.36 affiliations per author.
  const auto mean_in = [&](const char* key) {
    const Relation& r = ds.relations[static_cast<size_t>(ds.relation_index(key, "test"))];
    return static_cast<double>(r.num_edges()) / static_cast<double>(r.graph.num_nodes());
  };
  EXPECT_NEAR(mean_in("paper,cites,paper"), 21.3, 2.0);
  EXPECT_NEAR(mean_in("author,writes,paper"), 3.17, 0.2);
  EXPECT_NEAR(static_cast<double>(ds.relations[0].num_edges()) /
                  static_cast<double>(ds.node_types[1].count),
              0.364, 0.03);
}

TEST(MagShape, Mag240mLabelsOnlyItsSplitPapers) {
  const MagOptions o = small240m();
  const HeteroDataset ds = generate_mag_graph(o);
  const int64_t n = ds.target().count;
  const Split& s = ds.splits[0];
  const int64_t labelled = s.train.numel() + s.val.numel() + s.test.numel();
  EXPECT_NEAR(static_cast<double>(labelled), 0.011484 * static_cast<double>(n), 1);
  EXPECT_NEAR(static_cast<double>(s.train.numel()), 0.7956 * static_cast<double>(labelled), 1);
  EXPECT_NEAR(static_cast<double>(s.val.numel()), 0.0994 * static_cast<double>(labelled), 1);
  at::Tensor in_split = at::zeros({n}, at::kBool);
  for (const at::Tensor& part : {s.train, s.val, s.test}) in_split.index_put_({part}, true);
  EXPECT_EQ(in_split.sum().item<int64_t>(), labelled) << "the splits do not overlap";
  EXPECT_TRUE((ds.labels.index({in_split}) >= 0).all().item<bool>());
  EXPECT_TRUE((ds.labels.index({in_split}) < 16).all().item<bool>());
  EXPECT_TRUE((ds.labels.index({~in_split}) == -1).all().item<bool>())
      << "papers outside the splits carry no label";
}

TEST(MagShape, StreamedFeaturesEqualTheTableInMemory) {
  MagOptions o = small240m(0.002);
  const HeteroDataset whole = generate_mag(o);
  const at::Tensor x = whole.node_types[0].features;
  ASSERT_EQ(x.scalar_type(), at::kHalf);
  ASSERT_EQ(x.sizes(), (at::IntArrayRef{whole.node_types[0].count, 24}));
  TempDirectory dir;
  save_hetero_dir(generate_mag_graph(o), dir.file("m"), {{"paper", mag_paper_features(o)}});
  const HeteroDataset loaded = load_hetero_dir(dir.file("m"));
  EXPECT_TRUE(loaded.node_types[0].features.equal(x));
  EXPECT_TRUE(loaded.labels.equal(whole.labels));
  EXPECT_FALSE(loaded.node_types[1].has_features());
  // Unlabelled papers still carry their community's signal: features are not all alike.
  EXPECT_GT(x.to(at::kFloat).std().item<double>(), 0.5);
}

TEST(MagShape, OgbnMagKeepsItsFourTypesAndLabelsEveryPaper) {
  MagOptions o;
  o.scale = 0.002;
  o.num_classes = 4;
  o.feat_dim = 8;
  const HeteroDataset ds = generate_mag(o);
  EXPECT_EQ(ds.node_types.size(), 4u);
  EXPECT_EQ(ds.relations.size(), 7u);
  EXPECT_GE(ds.labels.min().item<int64_t>(), 0) << "every ogbn-mag paper is labelled";
  const HeteroDataset graph = generate_mag_graph(o);
  ASSERT_EQ(graph.relations.size(), ds.relations.size());
  for (size_t r = 0; r < ds.relations.size(); ++r) {
    EXPECT_TRUE(graph.relations[r].graph.indices.equal(ds.relations[r].graph.indices));
  }
}

TEST(MagShape, SaveRefusesAStreamForAMissingOrFeaturedType) {
  MagOptions o = small240m(0.002);
  TempDirectory dir;
  const HeteroDataset graph = generate_mag_graph(o);
  EXPECT_ERROR_CONTAINS(save_hetero_dir(graph, dir.file("a"), {{"venue", mag_paper_features(o)}}),
                        "names node type 'venue', which the dataset lacks");
  EXPECT_ERROR_CONTAINS(
      save_hetero_dir(generate_mag(o), dir.file("b"), {{"paper", mag_paper_features(o)}}),
      "has features and a feature stream");
  o.labelled_fraction = 0;
  EXPECT_ERROR_CONTAINS(check_mag_options(o), "labelled_fraction");
}

}  // namespace
}  // namespace directgnn
