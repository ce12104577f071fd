#include "graph/csr_graph.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "graph/coo_builder.h"
#include "graph/planted_partition.h"
#include "test_util.h"

namespace directgnn {
namespace {

std::vector<int64_t> row(const CsrGraph& g, int64_t v) {
  const at::Tensor r =
      g.indices.narrow(0, g.indptr[v].item<int64_t>(), g.degrees()[v].item<int64_t>());
  std::vector<int64_t> out;
  for (int64_t i = 0; i < r.numel(); ++i) out.push_back(r[i].item<int64_t>());
  return out;
}

TEST(CooBuilder, SymmetrisesDeduplicatesAndDropsSelfLoops) {
  const at::Tensor src = at::tensor({0, 1, 1, 2, 3, 0}, at::kLong);
  const at::Tensor dst = at::tensor({1, 0, 2, 2, 0, 1}, at::kLong);
  const CsrGraph g = build_csr_from_coo(src, dst, 4, {true, true}, "t");
  EXPECT_EQ(row(g, 0), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(row(g, 1), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(row(g, 2), (std::vector<int64_t>{1}));
  EXPECT_EQ(row(g, 3), (std::vector<int64_t>{0}));
  EXPECT_EQ(g.indices.scalar_type(), at::kInt);
}

TEST(CooBuilder, KeepsSelfLoopsOnRequestAndCanStayDirected) {
  const at::Tensor src = at::tensor({0, 2, 2}, at::kLong);
  const at::Tensor dst = at::tensor({1, 2, 2}, at::kLong);
  const CsrGraph loops = build_csr_from_coo(src, dst, 3, {true, false}, "t");
  EXPECT_EQ(row(loops, 2), (std::vector<int64_t>{2}));
  const CsrGraph directed = build_csr_from_coo(src, dst, 3, {false, true}, "t");
  // Edge 0 -> 1: node 1's list holds its source 0; node 0 has no in-edges.
  EXPECT_EQ(row(directed, 1), (std::vector<int64_t>{0}));
  EXPECT_TRUE(row(directed, 0).empty());
}

TEST(CooBuilder, SameResultWithOneAndTwoThreads) {
  PlantedPartitionOptions o;
  o.num_nodes = 3000;
  at::set_num_threads(1);
  const Dataset a = make_planted_partition(o);
  at::set_num_threads(2);
  const Dataset b = make_planted_partition(o);
  EXPECT_TRUE(a.graph.indptr.equal(b.graph.indptr));
  EXPECT_TRUE(a.graph.indices.equal(b.graph.indices));
  EXPECT_TRUE(a.features.equal(b.features));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.features.data_ptr()) % 128, 0u)
      << "feature tables made in memory start on a 128-byte boundary";
}

TEST(CooBuilder, OutOfRangeEdgeNamesTheEdge) {
  const at::Tensor src = at::tensor({0, 1, 7}, at::kLong);
  const at::Tensor dst = at::tensor({1, 2, 0}, at::kLong);
  EXPECT_ERROR_CONTAINS(build_csr_from_coo(src, dst, 3, {}, "edges.csv"),
                        "edges.csv: edge 2 has source node id 7, out of range for 3 nodes");
  EXPECT_ERROR_CONTAINS(build_csr_from_coo(src, dst.narrow(0, 0, 2), 3, {}, "e"), "equal length");
}

TEST(ValidateCsr, NamesTheFirstBadEntry) {
  CsrGraph g;
  g.indptr = at::tensor({0, 2, 1, 3}, at::kLong);
  g.indices = at::tensor({1, 2, 0}, at::kInt);
  EXPECT_ERROR_CONTAINS(validate_csr(g, "g"), "indptr[2] = 1 < indptr[1] = 2");
  g.indptr = at::tensor({1, 2, 3, 3}, at::kLong);
  EXPECT_ERROR_CONTAINS(validate_csr(g, "g"), "indptr[0] is 1");
  g.indptr = at::tensor({0, 1, 2, 4}, at::kLong);
  EXPECT_ERROR_CONTAINS(validate_csr(g, "g"), "indptr[-1] = 4 but indices holds 3");
  g.indptr = at::tensor({0, 1, 2, 3}, at::kLong);
  g.indices = at::tensor({1, -1, 0}, at::kLong);
  EXPECT_ERROR_CONTAINS(validate_csr(g, "g"), "indices[1] = -1 is out of range");
  g.indices = at::tensor({1, 2, 0}, at::kLong);
  validate_csr(g, "g");
  EXPECT_EQ(g.indices.scalar_type(), at::kInt);  // small graphs get int32 ids
}

}  // namespace
}  // namespace directgnn
