#include "train/checkpoint.h"

#include <ATen/ATen.h>
#include <torch/optim/adam.h>

#include <fstream>

#include "nn/model.h"
#include "test_util.h"

namespace directgnn {
namespace {

using testing::TempDirectory;

ModelConfig config() {
  ModelConfig c;
  c.in_dim = 4;
  c.hidden = 8;
  c.num_classes = 3;
  return c;
}

TEST(Checkpoint, RoundTripsParametersOptimiserAndDescription) {
  TempDirectory dir;
  GnnModel a(config());
  torch::optim::Adam optimizer(a.parameters(), torch::optim::AdamOptions(0.1));
  save_checkpoint(dir.file("ckpt"), a, optimizer, {{"model", config().to_json()}, {"epoch", 7}});
  const nlohmann::json meta = read_checkpoint_meta(dir.file("ckpt"));
  EXPECT_EQ(meta["epoch"], 7);
  GnnModel b(ModelConfig::from_json(meta["model"], "x"));
  torch::optim::Adam optimizer_b(b.parameters(), torch::optim::AdamOptions(0.1));
  load_checkpoint(dir.file("ckpt"), b, &optimizer_b);
  const auto pa = a.parameters(), pb = b.parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i) EXPECT_TRUE(pa[i].equal(pb[i]));
  EXPECT_TRUE(std::filesystem::exists(dir.file("ckpt/meta.json")));
}

TEST(Checkpoint, MissingCorruptAndMismatchedCheckpointsAreNamed) {
  TempDirectory dir;
  EXPECT_ERROR_CONTAINS(read_checkpoint_meta(dir.file("none")), "no checkpoint here");
  std::filesystem::create_directories(dir.file("bad"));
  std::ofstream(dir.file("bad/checkpoint.pt")) << "garbage";
  EXPECT_ERROR_CONTAINS(read_checkpoint_meta(dir.file("bad")), "cannot read the checkpoint");
  GnnModel a(config());
  torch::optim::Adam optimizer(a.parameters(), torch::optim::AdamOptions(0.1));
  save_checkpoint(dir.file("ok"), a, optimizer, {{"model", config().to_json()}});
  ModelConfig other = config();
  other.hidden = 16;
  GnnModel b(other);
  EXPECT_ERROR_CONTAINS(load_checkpoint(dir.file("ok"), b, nullptr), "does not match");
}

TEST(Checkpoint, UnwritableDirectoryIsAClearError) {
  TempDirectory dir;
  std::ofstream(dir.file("a-file")) << "x";  // even root cannot create a directory under a file
  GnnModel a(config());
  torch::optim::Adam optimizer(a.parameters(), torch::optim::AdamOptions(0.1));
  EXPECT_ERROR_CONTAINS(save_checkpoint(dir.file("a-file/ckpt"), a, optimizer, {}),
                        "cannot create checkpoint directory");
}

}  // namespace
}  // namespace directgnn
