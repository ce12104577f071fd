#include "graph/rmat.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "core/threads.h"
#include "graph/class_features.h"
#include "io/dataset.h"
#include "test_util.h"

namespace directgnn {
namespace {

RmatOptions rmat_options(int64_t nodes, uint64_t seed = 3) {
  RmatOptions o;
  o.num_nodes = nodes;
  o.edge_factor = 8;
  o.seed = seed;
  return o;
}

TEST(Rmat, SymmetricWithoutSelfLoopsOrDuplicates) {
  const RmatGraph g = generate_rmat(rmat_options(1 << 12));
  const int64_t n = g.graph.num_nodes();
  ASSERT_EQ(n, 1 << 12);
  const at::Tensor ptr_t = g.graph.indptr;
  const at::Tensor idx_t = g.graph.indices.to(at::kLong);
  const int64_t* ptr = ptr_t.data_ptr<int64_t>();
  const int64_t* idx = idx_t.data_ptr<int64_t>();
  auto has_edge = [&](int64_t u, int64_t v) {
    return std::binary_search(idx + ptr[u], idx + ptr[u + 1], v);
  };
  for (int64_t u = 0; u < n; ++u) {
    for (int64_t e = ptr[u]; e < ptr[u + 1]; ++e) {
      ASSERT_NE(idx[e], u) << "self-loop at " << u;
      if (e > ptr[u]) {
        ASSERT_LT(idx[e - 1], idx[e]) << "row " << u << " unsorted or duplicated";
      }
      ASSERT_TRUE(has_edge(idx[e], u)) << "edge " << u << "->" << idx[e] << " has no reverse";
    }
  }
}

TEST(Rmat, DegreesAreHeavyTailedAndHubsAreNotTheLowIds) {
  const RmatGraph g = generate_rmat(rmat_options(1 << 14));
  const at::Tensor deg = g.graph.degrees().to(at::kDouble);
  const double mean = deg.mean().item<double>();
  const double max = deg.max().item<double>();
  EXPECT_GT(max, 30 * mean) << "max degree " << max << ", mean " << mean;
  // Without relabelling node 0 would be the largest hub and the low ids the densest.
  const int64_t hub = deg.argmax().item<int64_t>();
  EXPECT_NE(hub, 0);
  EXPECT_EQ(g.rmat_id[hub].item<int64_t>(), 0) << "the largest hub is R-MAT's node 0";
  const double low_mean = deg.narrow(0, 0, 164).mean().item<double>();
  EXPECT_LT(low_mean, 3 * mean) << "the lowest 1% of ids are still the hubs";
  // rmat_id is a permutation, and not the identity.
  const at::Tensor sorted = std::get<0>(g.rmat_id.sort());
  EXPECT_TRUE(sorted.equal(at::arange(1 << 14, at::kLong)));
  EXPECT_FALSE(g.rmat_id.equal(at::arange(1 << 14, at::kLong)));
}

TEST(Rmat, SameGraphForTheSeedWhateverTheThreadCount) {
  const int before = at::get_num_threads();
  at::set_num_threads(1);
  const RmatGraph one = generate_rmat(rmat_options(3000, 11));
  at::set_num_threads(2);
  const RmatGraph two = generate_rmat(rmat_options(3000, 11));
  at::set_num_threads(before);
  EXPECT_TRUE(one.graph.indptr.equal(two.graph.indptr));
  EXPECT_TRUE(one.graph.indices.equal(two.graph.indices));
  EXPECT_TRUE(one.rmat_id.equal(two.rmat_id));
  const RmatGraph other = generate_rmat(rmat_options(3000, 12));
  EXPECT_FALSE(other.graph.indices.sizes() == one.graph.indices.sizes() &&
               other.graph.indices.equal(one.graph.indices));
}

TEST(Rmat, AnyNodeCountAndSmallIndices) {
  const RmatGraph g = generate_rmat(rmat_options(1000));
  EXPECT_EQ(g.graph.num_nodes(), 1000);
  EXPECT_EQ(g.graph.indices.scalar_type(), at::kInt);  // int32 below 2^31 nodes
  EXPECT_LT(g.graph.indices.max().item<int64_t>(), 1000);
}

TEST(Rmat, DatasetHasBalancedClassesDisjointSplitsAndClassFeatures) {
  RmatDatasetOptions o;
  o.graph = rmat_options(1 << 12);
  o.feat_dim = 16;
  o.num_classes = 8;
  o.train_fraction = 0.1;
  o.val_fraction = 0.05;
  o.test_fraction = 0.1;
  const Dataset ds = make_rmat_dataset(o);
  EXPECT_TRUE(at::bincount(ds.labels).equal(at::full({8}, 512, at::kLong)));
  const Split& s = ds.splits.at(0);
  EXPECT_NEAR(static_cast<double>(s.train.numel()) / 4096, 0.1, 0.02);
  EXPECT_NEAR(static_cast<double>(s.val.numel()) / 4096, 0.05, 0.015);
  EXPECT_NEAR(static_cast<double>(s.test.numel()) / 4096, 0.1, 0.02);
  const at::Tensor all = at::cat({s.train, s.val, s.test});
  EXPECT_EQ(std::get<0>(at::_unique(all)).numel(), all.numel()) << "splits overlap";
  // Features: rows of one class share a mean; any chunking gives the same rows.
  const ClassFeatures gen(8, 16, o.signal, o.graph.seed);
  at::Tensor part = at::empty({100, 16});
  gen.fill(ds.labels.data_ptr<int64_t>(), 1000, 1100, part.data_ptr<float>());
  EXPECT_TRUE(part.equal(ds.features.narrow(0, 1000, 100)));
}

// Tables made in memory start on a 128-byte boundary (core/aligned_tensor.h), in both dtypes.
TEST(Rmat, FeatureTablesAre128ByteAligned) {
  for (const at::ScalarType dtype : {at::kFloat, at::kHalf}) {
    RmatDatasetOptions o;
    o.graph = rmat_options(1 << 10);
    o.feat_dim = 3;
    o.feat_dtype = dtype;
    const Dataset ds = make_rmat_dataset(o);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(ds.features.data_ptr()) % 128, 0u) << dtype;
    EXPECT_TRUE(ds.features.is_contiguous());
    EXPECT_EQ(ds.features.sizes(), (std::vector<int64_t>{1 << 10, 3}));
  }
}

TEST(Rmat, RefusesBadOptions) {
  RmatOptions o = rmat_options(1);
  EXPECT_ERROR_CONTAINS(generate_rmat(o), "between 2 and 2^40 nodes");
  o = rmat_options(100);
  o.a = 0.9;
  o.b = 0.1;
  EXPECT_ERROR_CONTAINS(generate_rmat(o), "a + b + c < 1");
  o = rmat_options(100);
  o.edge_factor = 0;
  EXPECT_ERROR_CONTAINS(generate_rmat(o), "edge_factor: must be positive");
}

}  // namespace
}  // namespace directgnn
