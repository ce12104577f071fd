// Smoothed starting rows of learnable tables (train/table_init.h): one hop is the normalised mean
// of the in-neighbours' rows, rows without in-neighbours keep theirs, a featured type takes part
// through a projection of its features, and the result is the same for any thread count.
#include "train/table_init.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <utility>
#include <vector>

#include "test_util.h"

namespace directgnn {
namespace {

Relation relation(const std::string& src, int src_type, const std::string& dst, int dst_type,
                  std::vector<int64_t> indptr, std::vector<int64_t> indices) {
  Relation r;
  r.src = src;
  r.rel = "to";
  r.dst = dst;
  r.src_type = src_type;
  r.dst_type = dst_type;
  r.graph.indptr = at::tensor(indptr);
  r.graph.indices = at::tensor(indices);
  return r;
}

at::Tensor unit(const at::Tensor& row) { return row / row.norm(); }

// node 0 - node 1 - node 2 (both directions), node 3 alone.
HeteroDataset path_graph() {
  HeteroDataset ds;
  ds.node_types.push_back({"node", 4, at::Tensor(), ""});
  ds.relations.push_back(relation("node", 0, "node", 0, {0, 1, 3, 4, 4}, {1, 0, 2, 1}));
  return ds;
}

TEST(TableInit, EachHopTakesTheNormalisedMeanOfTheInNeighboursRows) {
  const HeteroDataset ds = path_graph();
  at::manual_seed(1);
  const at::Tensor x0 = at::randn({4, 5});
  const at::Tensor one = smoothed_rows(ds, {x0}, 1, 7)[0];
  EXPECT_TRUE(at::allclose(one[0], unit(x0[1])));
  EXPECT_TRUE(at::allclose(one[1], unit(x0[0] + x0[2])));
  EXPECT_TRUE(at::allclose(one[2], unit(x0[1])));
  EXPECT_TRUE(at::equal(one[3], x0[3]));  // no in-neighbours: kept
  const at::Tensor two = smoothed_rows(ds, {x0}, 2, 7)[0];
  EXPECT_TRUE(at::allclose(two[1], unit(one[0] + one[2])));
  EXPECT_TRUE(at::allclose(two[0], unit(one[1])));
  EXPECT_TRUE(at::equal(smoothed_rows(ds, {x0}, 0, 7)[0], x0));
}

TEST(TableInit, InPlaceWritesTheTablesAndGivesTheSameRows) {
  const HeteroDataset ds = path_graph();
  at::manual_seed(2);
  const at::Tensor x0 = at::randn({4, 5});
  at::Tensor table = x0.clone();
  const void* where = table.data_ptr();
  smooth_rows_in_place(ds, {table}, 3, 7);
  EXPECT_EQ(table.data_ptr(), where);
  EXPECT_TRUE(at::equal(table, smoothed_rows(ds, {x0}, 3, 7)[0]));
  EXPECT_ERROR_CONTAINS(smooth_rows_in_place(ds, {at::zeros({3, 5})}, 1, 7), "has shape");
}

TEST(TableInit, AFeaturedTypeTakesPartThroughAProjectionOfItsFeatures) {
  // users 0 and 1 rated items {0, 1}, user 2 rated item 2; items carry features.
  HeteroDataset ds;
  ds.node_types.push_back({"user", 3, at::Tensor(), ""});
  ds.node_types.push_back(
      {"item", 3, at::tensor({1.0f, 0.0f, 0.0f, 1.0f, 5.0f, -2.0f}).view({3, 2}), ""});
  ds.relations.push_back(relation("item", 1, "user", 0, {0, 2, 4, 5}, {0, 1, 0, 1, 2}));
  at::manual_seed(2);
  const std::vector<at::Tensor> out = smoothed_rows(ds, {at::randn({3, 4}), at::Tensor()}, 1, 3);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_FALSE(out[1].defined());  // only the types given a start come back
  EXPECT_TRUE(at::allclose(out[0][0], out[0][1]));
  EXPECT_NEAR(out[0][2].norm().item<double>(), 1.0, 1e-5);
  EXPECT_FALSE(at::allclose(out[0][0], out[0][2]));
  // The items' projection is held fixed, so users, which hear only items, are done after one
  // hop; user 2 hears item 2 alone: its row is item 2's projection, itself of norm 1.
  const at::Tensor start = at::randn({3, 4});
  EXPECT_TRUE(at::equal(smoothed_rows(ds, {start, at::Tensor()}, 1, 3)[0],
                        smoothed_rows(ds, {start, at::Tensor()}, 3, 3)[0]));
}

TEST(TableInit, ARowHearsEveryRelationIntoItsType) {
  HeteroDataset ds = path_graph();
  // A second relation into the same type: node 3 -> node 0.
  ds.relations.push_back(relation("node", 0, "node", 0, {0, 1, 1, 1, 1}, {3}));
  ds.relations.back().rel = "again";
  at::manual_seed(5);
  const at::Tensor x0 = at::randn({4, 5});
  const at::Tensor one = smoothed_rows(ds, {x0}, 1, 7)[0];
  EXPECT_TRUE(at::allclose(one[0], unit(x0[1] + x0[3])));
  EXPECT_TRUE(at::allclose(one[1], unit(x0[0] + x0[2])));
  // A row whose neighbours' rows sum to zero keeps its own.
  at::Tensor opposite = x0.clone();
  opposite[2] = -opposite[0];
  EXPECT_TRUE(at::equal(smoothed_rows(ds, {opposite}, 1, 7)[0][1], opposite[1]));
}

// Enough rows for several blocks of every parallel loop: 20,000 users (a table) hear each other
// (int64 ids) and 9,000 featured items (int32 ids).
HeteroDataset random_graph() {
  HeteroDataset ds;
  ds.node_types.push_back({"user", 20000, at::Tensor(), ""});
  at::manual_seed(6);
  ds.node_types.push_back({"item", 9000, at::randn({9000, 24}).to(at::kHalf), ""});
  auto random_csr = [](int64_t dst, int64_t src, int64_t per_row, at::ScalarType ids) {
    std::vector<int64_t> indptr(dst + 1), indices;
    for (int64_t v = 0; v < dst; ++v) {
      const int64_t n = (v * 7) % per_row;  // some rows hear nobody
      for (int64_t k = 0; k < n; ++k) indices.push_back((v * 131 + k * 977) % src);
      indptr[v + 1] = static_cast<int64_t>(indices.size());
    }
    return std::make_pair(at::tensor(indptr), at::tensor(indices).to(ids));
  };
  auto [up, ui] = random_csr(20000, 20000, 9, at::kLong);
  ds.relations.push_back(relation("user", 0, "user", 0, {}, {}));
  ds.relations.back().graph.indptr = up;
  ds.relations.back().graph.indices = ui;
  auto [ip, ii] = random_csr(20000, 9000, 5, at::kInt);
  ds.relations.push_back(relation("item", 1, "user", 0, {}, {}));
  ds.relations.back().graph.indptr = ip;
  ds.relations.back().graph.indices = ii;
  return ds;
}

TEST(TableInit, SameRowsWhateverTheThreadCount) {
  const HeteroDataset ds = random_graph();
  const at::Tensor x0 = at::randn({20000, 16});
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  const at::Tensor serial = smoothed_rows(ds, {x0, at::Tensor()}, 3, 1)[0];
  at::set_num_threads(2);
  const at::Tensor parallel = smoothed_rows(ds, {x0, at::Tensor()}, 3, 1)[0];
  at::set_num_threads(threads);
  EXPECT_TRUE(at::equal(serial, parallel));
  EXPECT_FALSE(at::equal(serial, x0));
}

}  // namespace
}  // namespace directgnn
