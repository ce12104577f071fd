#include "train/checkpoint.h"

#include <ATen/ATen.h>
#include <sys/resource.h>
#include <torch/optim/adam.h>

#include <csignal>
#include <fstream>
#include <iterator>

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

// The digest the bitwise tests compare (TrainReport::param_digest) tells models apart: it changes
// when one bit of one parameter does, and with the parameters' order, and not otherwise.
TEST(ParameterDigest, ChangesWithAnyBitOfAnyParameter) {
  at::manual_seed(4);
  GnnModel model(config());
  std::vector<at::Tensor> params = model.parameters();
  const std::string digest = parameter_digest(params);
  EXPECT_EQ(digest.size(), 8u);
  EXPECT_EQ(parameter_digest(model.parameters()), digest) << "the same parameters";
  for (size_t p = 0; p < params.size(); ++p) {
    at::Tensor copy = params[p].detach().clone();
    auto* bits = static_cast<uint32_t*>(copy.data_ptr());
    bits[copy.numel() - 1] ^= 1u;  // the last float's lowest mantissa bit
    std::vector<at::Tensor> changed = params;
    changed[p] = copy;
    EXPECT_NE(parameter_digest(changed), digest) << "parameter " << p;
  }
  std::vector<at::Tensor> swapped = params;
  std::swap(swapped.front(), swapped.back());
  EXPECT_NE(parameter_digest(swapped), digest);
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
  EXPECT_ERROR_CONTAINS(read_checkpoint_meta(dir.file("bad")), "not a directgnn checkpoint");
  // A valid container around bytes that are no torch archive.
  write_checksummed_file(dir.file("bad/checkpoint.pt"), "not a zip archive");
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

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_all(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

TEST(Checkpoint, DamagedOrTruncatedFilesFailTheirChecksumNamingTheFile) {
  TempDirectory dir;
  GnnModel a(config());
  torch::optim::Adam optimizer(a.parameters(), torch::optim::AdamOptions(0.1));
  save_checkpoint(dir.file("c"), a, optimizer, {{"model", config().to_json()}});
  const std::string path = dir.file("c/checkpoint.pt");
  const std::string good = read_all(path);
  ASSERT_GT(good.size(), kCheckpointHeaderBytes + 100);
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x10;  // one bit inside the payload
  write_all(path, flipped);
  EXPECT_ERROR_CONTAINS(read_checkpoint_meta(dir.file("c")), path + ": checksum mismatch");
  write_all(path, good.substr(0, good.size() - 1));
  EXPECT_ERROR_CONTAINS(read_checkpoint_meta(dir.file("c")), "(truncated or damaged)");
  write_all(path, good + "x");
  EXPECT_ERROR_CONTAINS(read_checkpoint_meta(dir.file("c")), "(truncated or damaged)");
  write_all(path, good);
  EXPECT_NO_THROW(read_checkpoint_meta(dir.file("c")));
}

TEST(Checkpoint, TrainingStateRestoresTheRandomGenerator) {
  TempDirectory dir;
  GnnModel a(config());
  torch::optim::Adam optimizer(a.parameters(), torch::optim::AdamOptions(0.1));
  save_training_state(dir.path(), a, optimizer, {{"epoch", 2}});
  const at::Tensor expected = at::rand({8});
  at::rand({100});  // move the generator on
  load_training_state(dir.path(), a, optimizer);
  EXPECT_TRUE(at::rand({8}).equal(expected));
  EXPECT_EQ(read_training_state(dir.path())["epoch"], 2);
}

// A full disk, simulated with a file-size limit (write fails with EFBIG, as with ENOSPC): the
// error names the file and the previous checkpoint stays complete and loadable.
TEST(Checkpoint, AFailedWriteKeepsThePreviousCheckpoint) {
  TempDirectory dir;
  ModelConfig big = config();
  big.hidden = 256;
  GnnModel a(big);
  torch::optim::Adam optimizer(a.parameters(), torch::optim::AdamOptions(0.1));
  save_checkpoint(dir.path(), a, optimizer, {{"model", big.to_json()}, {"epoch", 1}});
  const std::string before = read_all(dir.file("checkpoint.pt"));
  rlimit old{};
  getrlimit(RLIMIT_FSIZE, &old);
  struct sigaction ignore {
  }, previous{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGXFSZ, &ignore, &previous);
  rlimit small = old;
  small.rlim_cur = 4096;
  setrlimit(RLIMIT_FSIZE, &small);
  bool threw = false;
  try {
    save_checkpoint(dir.path(), a, optimizer, {{"model", big.to_json()}, {"epoch", 2}});
  } catch (const Error& e) {
    threw = true;
    EXPECT_NE(std::string(e.what()).find(dir.file("checkpoint.pt")), std::string::npos) << e.what();
  }
  setrlimit(RLIMIT_FSIZE, &old);
  sigaction(SIGXFSZ, &previous, nullptr);
  EXPECT_TRUE(threw);
  EXPECT_EQ(read_all(dir.file("checkpoint.pt")), before);
  EXPECT_EQ(read_checkpoint_meta(dir.path())["epoch"], 1);
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos)
        << "temporary left behind: " << entry.path();
  }
}

}  // namespace
}  // namespace directgnn
