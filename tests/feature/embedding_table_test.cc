// Learnable embeddings (feature/embedding_table.h): sparse updates against the dense formulas
// (and torch's dense Adam where every row is touched), untouched rows left alone, the same
// table whatever the thread count, and save/load.
#include "feature/embedding_table.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/optim/adam.h>

#include "io/npy.h"
#include "test_util.h"

namespace directgnn {
namespace {

EmbeddingOptions options(SparseOptimizer optimizer, int64_t dim = 6) {
  EmbeddingOptions o;
  o.dim = dim;
  o.optimizer = optimizer;
  o.lr = 0.05;
  return o;
}

TEST(EmbeddingTable, RowWiseAdagradMatchesTheDenseFormulaOnTouchedRowsOnly) {
  EmbeddingTable table(10, options(SparseOptimizer::kRowAdagrad), 3);
  at::Tensor w = table.weight().clone();
  at::Tensor state = at::zeros({10});
  for (int step = 0; step < 3; ++step) {
    const at::Tensor ids = at::tensor(std::vector<int64_t>{1, 4, 7 + step % 2});
    const at::Tensor grad = at::randn({3, 6});
    table.update(ids, grad);
    for (int64_t k = 0; k < 3; ++k) {
      const int64_t i = ids[k].item<int64_t>();
      state[i] += grad[k].pow(2).mean();
      w[i] -= 0.05 * grad[k] / (state[i].sqrt() + 1e-10);
    }
  }
  EXPECT_TRUE(at::allclose(table.weight(), w, 1e-5, 1e-5));
  const at::Tensor untouched = at::tensor(std::vector<int64_t>{0, 2, 3, 5, 6, 9});
  EmbeddingTable fresh(10, options(SparseOptimizer::kRowAdagrad), 3);
  EXPECT_TRUE(at::equal(table.weight().index_select(0, untouched),
                        fresh.weight().index_select(0, untouched)));
}

TEST(EmbeddingTable, WeightDecayAddsTheRowsL2GradientBeforeTheStep) {
  EmbeddingOptions o = options(SparseOptimizer::kRowAdagrad);
  o.weight_decay = 0.1;
  EmbeddingTable table(4, o, 5);
  at::Tensor w = table.weight().clone();
  const at::Tensor ids = at::tensor(std::vector<int64_t>{2, 0});
  const at::Tensor grad = at::randn({2, 6});
  table.update(ids, grad);
  for (int64_t k = 0; k < 2; ++k) {
    const int64_t i = ids[k].item<int64_t>();
    const at::Tensor g = grad[k] + 0.1 * w[i];
    w[i] -= 0.05 * g / (g.pow(2).mean().sqrt() + 1e-10);
  }
  EXPECT_TRUE(at::allclose(table.weight(), w, 1e-5, 1e-5));
  // Adam: torch's dense Adam with weight_decay (L2 added to the gradient) when all rows step.
  o = options(SparseOptimizer::kAdam);
  o.weight_decay = 0.1;
  EmbeddingTable adam_table(3, o, 6);
  at::Tensor dense = adam_table.weight().clone().requires_grad_(true);
  torch::optim::Adam adam({dense}, torch::optim::AdamOptions(0.05).eps(1e-8).weight_decay(0.1));
  for (int step = 0; step < 3; ++step) {
    const at::Tensor g = at::randn({3, 6});
    adam_table.update(at::arange(3, at::kLong), g);
    dense.mutable_grad() = g.clone();
    adam.step();
  }
  EXPECT_TRUE(at::allclose(adam_table.weight(), dense.detach(), 1e-5, 1e-5));
}

TEST(EmbeddingTable, SparseAdamEqualsTorchsAdamWhenEveryRowIsTouched) {
  EmbeddingTable table(5, options(SparseOptimizer::kAdam), 8);
  at::Tensor dense = table.weight().clone().requires_grad_(true);
  torch::optim::Adam adam({dense}, torch::optim::AdamOptions(0.05).eps(1e-8));
  const at::Tensor all = at::arange(5, at::kLong);
  for (int step = 0; step < 4; ++step) {
    const at::Tensor grad = at::randn({5, 6});
    table.update(all, grad);
    dense.mutable_grad() = grad.clone();
    adam.step();
  }
  // The two round the same formula in different orders: a few ulps of a step of 0.05 apart.
  EXPECT_TRUE(at::allclose(table.weight(), dense.detach(), 1e-5, 1e-5))
      << (table.weight() - dense.detach()).abs().max();
}

TEST(EmbeddingTable, SparseAdamLeavesUntouchedRowsAndTheirMomentsAlone) {
  EmbeddingTable table(6, options(SparseOptimizer::kAdam), 1);
  const at::Tensor before = table.weight().clone();
  table.update(at::tensor(std::vector<int64_t>{2}), at::ones({1, 6}));
  table.update(at::tensor(std::vector<int64_t>{3}), at::ones({1, 6}));
  // Row 2's first step moves it by lr (m / c1 = v / c2 = 1 for a constant gradient).
  EXPECT_TRUE(at::allclose(table.weight()[2], before[2] - 0.05, 1e-5, 1e-6));
  EXPECT_TRUE(at::equal(table.weight()[0], before[0]));
  EXPECT_EQ(table.steps(), 2);
}

TEST(EmbeddingTable, SameTableWhateverTheThreadCountAndSavedExactly) {
  const int before = at::get_num_threads();
  at::set_num_threads(1);
  EmbeddingTable one(3000, options(SparseOptimizer::kAdam, 7), 5);
  at::set_num_threads(2);
  EmbeddingTable two(3000, options(SparseOptimizer::kAdam, 7), 5);
  at::set_num_threads(before);
  EXPECT_TRUE(at::equal(one.weight(), two.weight()));
  EXPECT_NEAR(one.weight().std().item<double>(), 1.0 / std::sqrt(7.0), 0.01);
  one.update(at::arange(0, 3000, 7, at::kLong), at::randn({429, 7}));
  testing::TempDirectory dir;
  one.save(dir.path(), "author");
  two.load(dir.path(), "author");
  EXPECT_TRUE(at::equal(one.weight(), two.weight()));
  EXPECT_EQ(two.steps(), 1);
  EmbeddingTable narrow(3000, options(SparseOptimizer::kAdam, 4), 5);
  EXPECT_ERROR_CONTAINS(narrow.load(dir.path(), "author"), "author.npy: has shape");
  EXPECT_ERROR_CONTAINS(one.gather(at::tensor(std::vector<int64_t>{3000})), "3000");
  EXPECT_ERROR_CONTAINS(parse_sparse_optimizer("sgd"), "use adagrad");
}

TEST(EmbeddingTable, ALoadWritesTheTablesOwnMemoryAndABadFileChangesNothing) {
  EmbeddingTable saved(50, options(SparseOptimizer::kAdam, 4), 2);
  saved.update(at::arange(0, 50, 3, at::kLong), at::randn({17, 4}));
  testing::TempDirectory dir;
  saved.save(dir.path(), "item");
  EmbeddingTable table(50, options(SparseOptimizer::kAdam, 4), 9);
  // A pinned table's registration covers this memory: a load must not move it.
  const void* where = table.weight().data_ptr();
  table.load(dir.path(), "item");
  EXPECT_EQ(table.weight().data_ptr(), where);
  EXPECT_TRUE(at::equal(table.weight(), saved.weight()));
  // A state file of the wrong shape is found before anything is copied.
  save_npy(dir.path() + "/item.state_v.npy", at::zeros({50, 3}));
  EmbeddingTable untouched(50, options(SparseOptimizer::kAdam, 4), 9);
  const at::Tensor before = untouched.weight().clone();
  EXPECT_ERROR_CONTAINS(untouched.load(dir.path(), "item"), "item.state_v.npy: has shape");
  EXPECT_TRUE(at::equal(untouched.weight(), before));
  EXPECT_EQ(untouched.steps(), 0);
}

TEST(EmbeddingTable, PlacementsAreParsedAndAPinnedTableReadsOnTheCpuAsAHostOne) {
  EXPECT_EQ(parse_table_placement("pinned"), TablePlacement::kPinned);
  EXPECT_EQ(parse_table_placement("host"), TablePlacement::kHost);
  EXPECT_STREQ(table_placement_name(parse_table_placement("auto")), "auto");
  EXPECT_ERROR_CONTAINS(parse_table_placement("device"), "use auto");
  EmbeddingTable table(20, options(SparseOptimizer::kRowAdagrad), 4);
  EXPECT_FALSE(table.pinned());
  const at::Tensor ids = at::tensor(std::vector<int64_t>{4, 19, 0});
  EXPECT_TRUE(at::equal(table.gather(ids, at::kCPU), table.weight().index_select(0, ids)));
}

}  // namespace
}  // namespace directgnn
