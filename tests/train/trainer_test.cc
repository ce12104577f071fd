#include "train/trainer.h"

#include <ATen/ATen.h>

#include <sstream>

#include "graph/rmat.h"
#include "io/dataset.h"
#include "nn/model.h"
#include "test_util.h"

namespace directgnn {
namespace {

Dataset small_rmat() {
  RmatDatasetOptions o;
  o.graph.num_nodes = 1 << 11;
  o.graph.edge_factor = 8;
  o.feat_dim = 24;
  o.num_classes = 4;
  o.signal = 0.3;
  o.train_fraction = 0.3;
  o.val_fraction = 0.1;
  o.test_fraction = 0.2;
  return make_rmat_dataset(o);
}

TrainOptions quick() {
  TrainOptions t;
  t.epochs = 3;
  t.batch_size = 128;
  t.quiet = true;
  return t;
}

TEST(Trainer, MemoryMappedFeaturesTrainLikeFeaturesInMemory) {
  const Dataset in_memory = small_rmat();
  testing::TempDirectory dir;
  save_dataset_dir(in_memory, dir.file("ds"));
  const Dataset mapped = load_dataset_dir(dir.file("ds"));
  ASSERT_TRUE(mapped.features.equal(in_memory.features));
  std::ostringstream a, b;
  const TrainReport ra = train(in_memory, quick(), a);
  const TrainReport rb = train(mapped, quick(), b);
  EXPECT_EQ(ra.best_epoch, rb.best_epoch);
  EXPECT_EQ(ra.best_val_acc, rb.best_val_acc);
  EXPECT_EQ(ra.test_acc, rb.test_acc);
  EXPECT_GT(ra.test_acc, 0.4) << "4 balanced classes: chance is 0.25";
}

TEST(Trainer, Float16FeaturesAreStoredHalvedAndTrain) {
  const Dataset ds = small_rmat();
  testing::TempDirectory dir;
  const FeatureStream stream = feature_stream_of(ds.features, at::kHalf);
  save_dataset_dir(ds, dir.file("half"), stream);
  const Dataset half = load_dataset_dir(dir.file("half"));
  ASSERT_EQ(half.features.scalar_type(), at::kHalf);
  EXPECT_TRUE(half.features.equal(ds.features.to(at::kHalf)));
  std::ostringstream out;
  const TrainReport r = train(half, quick(), out);
  EXPECT_GT(r.test_acc, 0.4);
}

TEST(Trainer, Float16InferenceReadsOnlyTheRowsEachChunkNeeds) {
  const Dataset ds = small_rmat();
  const at::Tensor half = ds.features.to(at::kHalf);
  for (const char* arch : {"sage", "gcn"}) {
    ModelConfig c;
    c.arch = arch;
    c.in_dim = ds.feat_dim();
    c.hidden = 16;
    c.num_classes = ds.num_classes;
    GnnModel model(c);
    // Small chunks: many partial gathers, including chunks of isolated nodes.
    const at::Tensor from_half = model.infer(ds.graph, half, 100);
    const at::Tensor widened = model.infer(ds.graph, half.to(at::kFloat), 100);
    EXPECT_TRUE(from_half.equal(widened)) << arch;
  }
}

TEST(Trainer, InferenceOfSomeNodesMatchesInferenceOfAll) {
  const Dataset ds = small_rmat();
  const at::Tensor half = ds.features.to(at::kHalf);
  const at::Tensor targets = at::tensor({1999, 5, 0, 700, 5, 1234}, at::kLong);
  const at::Tensor order = std::get<0>(at::_unique(targets));
  for (const int layers : {1, 2, 3}) {
    for (const char* arch : {"sage", "gcn"}) {
      ModelConfig c;
      c.arch = arch;
      c.in_dim = ds.feat_dim();
      c.hidden = 16;
      c.layers = layers;
      c.num_classes = ds.num_classes;
      GnnModel model(c);
      for (const at::Tensor& x : {ds.features, half}) {
        const at::Tensor all = model.infer(ds.graph, x, 300).index_select(0, order);
        const at::Tensor some = model.infer_nodes(ds.graph, x, targets, 300);
        EXPECT_TRUE(at::allclose(some, all, 1e-5, 1e-6)) << arch << " " << layers << " layers";
      }
    }
  }
}

}  // namespace
}  // namespace directgnn
