// The learnable tables of heterogeneous runs: the ranks' update path (the batch rows exchanged,
// coalesced and averaged) gives a group of one exactly the plain update, and a training state's
// tables come back as saved, with the older copies removed only once state.pt names the new.
#include "train/hetero_tables.h"

#include <ATen/ATen.h>

#include <filesystem>

#include "graph/mag_generator.h"
#include "test_util.h"

namespace directgnn {
namespace {

HeteroDataset tiny_mag() {
  MagOptions o;
  o.scale = 0.005;
  o.num_classes = 4;
  o.feat_dim = 8;
  o.seed = 3;
  return generate_mag(o);
}

EmbeddingOptions adam_rows(int64_t dim) {
  EmbeddingOptions e;
  e.dim = dim;
  e.optimizer = SparseOptimizer::kAdam;
  e.lr = 0.05;
  return e;
}

// A batch's distinct input rows of every type (shuffled), and gradients for the tables' rows.
struct FakeBatch {
  std::vector<at::Tensor> input_nodes, x;
};
FakeBatch fake_batch(const HeteroDataset& ds, const HeteroTables& tables, int64_t step) {
  FakeBatch b;
  at::manual_seed(step);
  for (const NodeType& t : ds.node_types)
    b.input_nodes.push_back(
        at::randperm(t.count, at::kLong).narrow(0, 0, std::min<int64_t>(t.count, 7)));
  b.x.resize(ds.node_types.size());
  tables.read_rows(b.input_nodes, at::kCPU, b.x);
  for (at::Tensor& rows : b.x) {
    if (rows.defined()) rows.sum().mul(1.5).add(rows.pow(2).sum()).backward();
  }
  return b;
}

TEST(HeteroTables, TheRanksPathGivesAGroupOfOneThePlainUpdate) {
  const HeteroDataset ds = tiny_mag();
  std::vector<int64_t> dims_a(ds.node_types.size()), dims_b(ds.node_types.size());
  HeteroTables plain(ds, adam_rows(8), 11, dims_a), ranked(ds, adam_rows(8), 11, dims_b);
  ASSERT_EQ(dims_a, dims_b);
  ASSERT_FALSE(plain.weights().empty());
  DistEnv env;
  env.master_port = 0;
  DistOptions options;
  options.backend = DistBackend::kGloo;
  options.timeout = std::chrono::seconds(30);
  const auto group = ProcessGroup::create(env, options);
  for (int64_t step = 0; step < 3; ++step) {
    const FakeBatch a = fake_batch(ds, plain, step), b = fake_batch(ds, ranked, step);
    plain.update(a.input_nodes, a.x, nullptr);
    ranked.update(b.input_nodes, b.x, group.get());
  }
  const std::vector<at::Tensor> wa = plain.weights(), wb = ranked.weights();
  ASSERT_EQ(wa.size(), wb.size());
  for (size_t i = 0; i < wa.size(); ++i) EXPECT_TRUE(wa[i].equal(wb[i])) << i;
}

TEST(HeteroTables, AStateComesBackAndOnlyItsTablesAreKept) {
  const HeteroDataset ds = tiny_mag();
  std::vector<int64_t> dims(ds.node_types.size());
  HeteroTables tables(ds, adam_rows(4), 5, dims), other(ds, adam_rows(4), 6, dims);
  testing::TempDirectory dir;
  const std::string state_dir = dir.file("ck");
  TrainingState first, second;
  tables.save_state(state_dir, first);
  tables.saved(state_dir, first);
  const FakeBatch b = fake_batch(ds, tables, 1);
  tables.update(b.input_nodes, b.x, nullptr);
  tables.save_state(state_dir, second);
  EXPECT_NE(first.extras["embeddings_dir"], second.extras["embeddings_dir"]);
  // Until state.pt names the second copy, the first stays.
  EXPECT_TRUE(
      std::filesystem::exists(state_dir + "/" + first.extras["embeddings_dir"].get<std::string>()));
  tables.saved(state_dir, second);
  EXPECT_FALSE(
      std::filesystem::exists(state_dir + "/" + first.extras["embeddings_dir"].get<std::string>()));
  other.load_state(state_dir, second);
  const std::vector<at::Tensor> wa = tables.weights(), wb = other.weights();
  for (size_t i = 0; i < wa.size(); ++i) EXPECT_TRUE(wa[i].equal(wb[i])) << i;
  TrainingState none;
  EXPECT_ERROR_CONTAINS(other.load_state(state_dir, none), "names no embedding tables");
}

TEST(HeteroTables, ACpuRunKeepsTablesInHostMemoryAndRefusesPinnedOnesWithTheReason) {
  const HeteroDataset ds = tiny_mag();
  std::vector<int64_t> dims(ds.node_types.size());
  HeteroTables tables(ds, adam_rows(4), 5, dims);
  tables.place(at::kCPU);
  EXPECT_EQ(tables.placement(), "host memory");
  EmbeddingOptions pinned = adam_rows(4);
  pinned.placement = TablePlacement::kPinned;
  HeteroTables refused(ds, pinned, 5, dims);
  EXPECT_ERROR_CONTAINS(refused.place(at::kCPU), "embedding_placement");
  EXPECT_ERROR_CONTAINS(refused.place(at::kCPU), "use host or auto");
}

}  // namespace
}  // namespace directgnn
