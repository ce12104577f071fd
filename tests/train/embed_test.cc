#include "train/embed.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <csignal>
#include <filesystem>

#include "core/signals.h"
#include "graph/planted_partition.h"
#include "io/npy.h"
#include "test_util.h"

namespace directgnn {
namespace {

struct Fixture {
  Dataset ds;
  std::unique_ptr<GnnModel> model;
  Fixture() {
    PlantedPartitionOptions o;
    o.num_nodes = 500;
    o.feat_dim = 6;
    ds = make_planted_partition(o);
    ModelConfig c;
    c.in_dim = 6;
    c.hidden = 16;
    c.num_classes = 12;
    c.layers = 3;
    torch::manual_seed(0);
    model = std::make_unique<GnnModel>(c);
  }
};

TEST(Embed, WritesEveryNodesFinalLayerAndRemovesItsScratchFiles) {
  Fixture f;
  testing::TempDirectory dir;
  EmbedOptions o;
  o.chunk = 37;  // chunks that do not divide the nodes
  o.progress = false;
  write_embeddings(*f.model, f.ds.graph, f.ds.features, dir.file("e.npy"), o);
  const at::Tensor want = f.model->infer(f.ds.graph, f.ds.features);
  const at::Tensor got = load_npy(dir.file("e.npy"));
  EXPECT_EQ(got.sizes(), (at::IntArrayRef{500, 12}));
  EXPECT_TRUE(got.equal(want));
  o.dtype = at::kHalf;
  write_embeddings(*f.model, f.ds.graph, f.ds.features, dir.file("h.npy"), o);
  EXPECT_TRUE(load_npy(dir.file("h.npy")).equal(want.to(at::kHalf)));
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 2);  // e.npy and h.npy, no scratch or temporary files
}

// A stop asked for by a signal ends the embedding at the next chunk with Interrupted, and
// unwinding leaves neither scratch files nor a partial output behind.
TEST(Embed, ASignalStopsItAndLeavesNoFiles) {
  Fixture f;
  testing::TempDirectory dir;
  EmbedOptions o;
  o.chunk = 50;
  o.progress = false;
  request_stop(SIGTERM);
  try {
    write_embeddings(*f.model, f.ds.graph, f.ds.features, dir.file("e.npy"), o);
    ADD_FAILURE() << "expected Interrupted";
  } catch (const Interrupted& e) {
    EXPECT_EQ(e.exit_code(), 143);
    EXPECT_NE(std::string(e.what()).find("SIGTERM while embedding layer 1"), std::string::npos)
        << e.what();
  }
  clear_stop();
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(Embed, RefusesWhatFloat16CannotHoldAndKeepsNoPartialFile) {
  Fixture f;
  {
    torch::NoGradGuard no_grad;
    for (at::Tensor p : f.model->parameters()) p.mul_(1e4);
  }
  testing::TempDirectory dir;
  EmbedOptions o;
  o.dtype = at::kHalf;
  o.progress = false;
  EXPECT_ERROR_CONTAINS(write_embeddings(*f.model, f.ds.graph, f.ds.features, dir.file("h.npy"), o),
                        "float16");
  EXPECT_FALSE(std::filesystem::exists(dir.file("h.npy")));
  EXPECT_ERROR_CONTAINS(write_embeddings(*f.model, f.ds.graph, f.ds.features, dir.path(), o),
                        "is a directory");
}

}  // namespace
}  // namespace directgnn
