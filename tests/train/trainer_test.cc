#include "train/trainer.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/signals.h"
#include "core/threads.h"
#include "graph/rmat.h"
#include "io/dataset.h"
#include "nn/model.h"
#include "test_util.h"
#include "train/checkpoint.h"
#include "train/run_loop.h"
#include "train/run_options.h"
#include "train/training_run.h"

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

// The CPU trainer, also on a GPU machine: the bitwise comparisons below hold on the CPU, where
// every reduction runs in a fixed order (the GPU's index_add atomics do not). The GPU trains
// in tests/gpu/gpu_training_test.cc.
TrainOptions quick() {
  TrainOptions t;
  t.loader.device = DeviceChoice::cpu();
  t.epochs = 3;
  t.loader.batch_size = 128;
  t.quiet = true;
  return t;
}

// small_rmat() written to `dir` as a dataset directory and loaded back (features mapped from
// its features.npy, which --features disk reads).
Dataset small_rmat_dir(const testing::TempDirectory& dir) {
  save_dataset_dir(small_rmat(), dir.file("ds"));
  return load_dataset_dir(dir.file("ds"));
}

// quick() with the feature table at `placement`.
TrainOptions quick_with(Placement placement) {
  TrainOptions t = quick();
  t.loader.features = placement;
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

// The disk placement reads the same rows from features.npy that host placement reads from the
// mapping: the same arithmetic, so the same parameters to the bit, on every reader.
TEST(Trainer, DiskFeaturesTrainBitwiseLikeHostFeatures) {
  testing::TempDirectory dir;
  const Dataset ds = small_rmat_dir(dir);
  const TrainReport expected = train(ds, quick_with(Placement::kHost), std::cout);
  std::vector<disk::Backend> backends{disk::Backend::kAuto, disk::Backend::kPread};
  if (disk::io_uring_unavailable_reason().empty()) backends.push_back(disk::Backend::kIoUring);
  for (const disk::Backend backend : backends) {
    TrainOptions o = quick_with(Placement::kDisk);
    o.loader.disk.backend = backend;
    std::ostringstream out;
    o.quiet = false;
    const TrainReport r = train(ds, o, out);
    EXPECT_EQ(r.param_digest, expected.param_digest) << disk::backend_name(backend);
    EXPECT_EQ(r.test_acc, expected.test_acc);
    EXPECT_NE(out.str().find("features disk (" + dir.file("ds") + "/features.npy: "),
              std::string::npos)
        << out.str();
  }
  // A dataset that is no directory has no file to read from.
  EXPECT_ERROR_CONTAINS(train(small_rmat(), quick_with(Placement::kDisk), std::cout),
                        "features: disk reads feature rows from a dataset directory's");
}

// A hot-row cache changes where rows come from, not which rows: the same parameters to the bit.
// The run prints and records what the cache served.
TEST(Trainer, DiskFeaturesThroughACacheTrainBitwiseLikeHostAndReportHits) {
  testing::TempDirectory dir;
  const Dataset ds = small_rmat_dir(dir);
  const TrainReport expected = train(ds, quick_with(Placement::kHost), std::cout);
  for (const disk::CacheRanking ranking :
       {disk::CacheRanking::kPresample, disk::CacheRanking::kDegree}) {
    TrainOptions o = quick_with(Placement::kDisk);
    o.loader.cache.gib = 600.0 * 24 * 4 / (1 << 30);  // 600 of 2048 rows
    o.loader.cache.ranking = ranking;
    o.metrics_path = dir.file("metrics-" + disk::cache_ranking_name(ranking) + ".jsonl");
    o.quiet = false;
    std::ostringstream out;
    const TrainReport r = train(ds, o, out);
    EXPECT_EQ(r.param_digest, expected.param_digest) << disk::cache_ranking_name(ranking);
    EXPECT_GT(r.disk_cache_hit_rate, 0.3) << "600 hot rows of 2048 serve far more than 29%";
    EXPECT_LT(r.disk_cache_hit_rate, 1.0);
    EXPECT_NE(out.str().find("Feature cache: 0.05 MiB, 600 rows (29.3% of the table), ranked "),
              std::string::npos)
        << out.str();
    EXPECT_NE(out.str().find(" | Disk: rows "), std::string::npos) << out.str();
    std::ifstream metrics(o.metrics_path);
    std::string line;
    std::getline(metrics, line);
    const nlohmann::json first = nlohmann::json::parse(line);
    EXPECT_GT(first.at("disk_cache_hit_rate").get<double>(), 0.3) << line;
    EXPECT_GT(first.at("disk_bytes_gathered").get<int64_t>(), 0) << line;
  }
  // A budget beyond the table (even inf) caches every row: every gather hits.
  TrainOptions all = quick_with(Placement::kDisk);
  all.loader.cache.gib = std::numeric_limits<double>::infinity();
  const TrainReport every = train(ds, all, std::cout);
  EXPECT_EQ(every.param_digest, expected.param_digest);
  EXPECT_EQ(every.disk_cache_hit_rate, 1.0);
  EXPECT_EQ(every.to_json().at("disk_cache_hit_rate").get<double>(), 1.0);
  EXPECT_EQ(every.to_json().at("disk_bytes_asked").get<int64_t>(), 0);
  TrainOptions no_disk = quick();
  no_disk.loader.cache.gib = 1;
  EXPECT_ERROR_CONTAINS(train(ds, no_disk, std::cout),
                        "feature_cache_gib: the cache keeps hot rows of a table read from disk "
                        "in RAM; set features to disk");
}

// A features file that shrinks under a running job fails the step naming file and offset, and
// the steps done are saved: once the file is mended, the run resumes and finishes.
TEST(Trainer, AReadErrorMidRunSavesTheStateToResumeFrom) {
  testing::TempDirectory dir;
  const Dataset ds = small_rmat_dir(dir);
  TrainOptions o = quick_with(Placement::kDisk);
  o.checkpoint_dir = dir.file("state");
  const std::string features = dir.file("ds") + "/features.npy";
  const auto full = static_cast<off_t>(std::filesystem::file_size(features));
  {
    std::ostringstream out;
    const std::unique_ptr<RunTask> task = make_node_task(ds, o);
    RunLoop run(*task, o, out);
    run.train_epoch(1);
    ASSERT_EQ(truncate(features.c_str(), 4096 + 10 * 24 * 4), 0);  // 10 rows of 24 floats left
    try {
      run.train_epoch(2);
      ADD_FAILURE() << "expected a read error";
    } catch (const StoppedWithState& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(features + ": short read at offset "), std::string::npos) << what;
      EXPECT_NE(what.find("Training state saved in " + o.checkpoint_dir + " (epoch 2, step 0 of "),
                std::string::npos)
          << what;
      // Where to resume from, which the command line turns into its resume command.
      EXPECT_EQ(e.state_dir(), o.checkpoint_dir);
    }
  }
  const nlohmann::json state = read_training_state(o.checkpoint_dir);
  EXPECT_EQ(state.at("epoch").get<int64_t>(), 2);
  EXPECT_EQ(state.at("progress").at("next_step").get<int64_t>(), 0);
  ASSERT_EQ(truncate(features.c_str(), full), 0);  // mended (with zeros)
  o.resume_dir = o.checkpoint_dir;
  EXPECT_EQ(train(ds, o, std::cout).epochs, 3);
}

TEST(Trainer, GatTrainsAndItsOptionsAreRecorded) {
  const Dataset ds = small_rmat();
  TrainOptions t = quick();
  t.model.kind = ModelKind::kGat;
  t.model.hidden = 8;
  t.model.heads = 4;
  t.model.attn_dropout = 0.3;
  t.epochs = 8;
  std::ostringstream out;
  EXPECT_GT(train(ds, t, out).test_acc, 0.4) << "4 balanced classes: chance is 0.25";
  TrainOptions back = quick();
  apply_options_json(options_json(t, RunKind::kNode), back, RunKind::kNode, "state.json");
  EXPECT_EQ(back.model.kind, ModelKind::kGat);
  EXPECT_EQ(back.model.heads, 4);
  EXPECT_EQ(back.model.attn_dropout, 0.3);
  t.model.heads = 0;
  EXPECT_ERROR_CONTAINS(train(ds, t, out), "heads: must be at least 1");
  t.model.heads = 2;
  t.model.attn_dropout = 1.5;
  EXPECT_ERROR_CONTAINS(train(ds, t, out), "attn_dropout: must be in [0, 1)");
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

// `nodes` and every node in their neighbour lists, sorted and distinct.
at::Tensor with_neighbours(const CsrGraph& graph, const at::Tensor& nodes) {
  std::vector<at::Tensor> parts{nodes};
  const at::Tensor indices = graph.indices.to(at::kLong);
  for (int64_t i = 0; i < nodes.numel(); ++i) {
    const int64_t v = nodes[i].item<int64_t>();
    const int64_t lo = graph.indptr[v].item<int64_t>(), hi = graph.indptr[v + 1].item<int64_t>();
    parts.push_back(indices.narrow(0, lo, hi - lo));
  }
  return std::get<0>(at::_unique(at::cat(parts)));
}

TEST(Trainer, Float16InferenceReadsOnlyTheRowsEachChunkNeeds) {
  const Dataset ds = small_rmat();
  const at::Tensor half = ds.features.to(at::kHalf);
  const at::Tensor targets = at::tensor({5, 700, 1234}, at::kLong);
  for (const char* arch : {"sage", "gcn", "gat"}) {
    ModelConfig c;
    c.kind = parse_model_kind(arch);
    c.in_dim = ds.feat_dim();
    c.hidden = 16;
    c.num_classes = ds.num_classes;
    GnnModel model(c);
    // Small chunks: many partial gathers, including chunks of isolated nodes.
    const at::Tensor from_half = model.infer(ds.graph, half, 100);
    const at::Tensor widened = model.infer(ds.graph, half.to(at::kFloat), 100);
    EXPECT_TRUE(from_half.equal(widened)) << arch;
    // Rows outside the targets' two hops are never read: poisoned with NaN, they change
    // nothing (a layer that widened or projected the whole table would spread the NaNs).
    at::Tensor poisoned = half.clone();
    const at::Tensor hop1 = with_neighbours(ds.graph, targets);
    const at::Tensor near = with_neighbours(ds.graph, hop1);
    at::Tensor far = at::ones({ds.num_nodes()}, at::kBool);
    far.index_put_({near}, false);
    poisoned.index_put_({far}, std::numeric_limits<float>::quiet_NaN());
    const at::Tensor clean = model.infer_nodes(ds.graph, half, targets, 100);
    const at::Tensor read = model.infer_nodes(ds.graph, poisoned, targets, 100);
    EXPECT_GT(far.sum().item<int64_t>(), ds.num_nodes() / 2) << "the test poisons most rows";
    EXPECT_TRUE(read.equal(clean)) << arch << ": a row outside the targets' hops was read";
  }
}

TEST(Trainer, InferenceOfSomeNodesMatchesInferenceOfAll) {
  const Dataset ds = small_rmat();
  const at::Tensor half = ds.features.to(at::kHalf);
  const at::Tensor targets = at::tensor({1999, 5, 0, 700, 5, 1234}, at::kLong);
  const at::Tensor order = std::get<0>(at::_unique(targets));
  for (const int layers : {1, 2, 3}) {
    for (const char* arch : {"sage", "gcn", "gat"}) {
      ModelConfig c;
      c.kind = parse_model_kind(arch);
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

namespace directgnn {
namespace {

TrainOptions resumable(const std::string& dir) {
  TrainOptions t = quick();
  t.epochs = 4;
  t.loader.batch_size = 64;
  t.eval_every = 2;
  t.checkpoint_dir = dir;
  return t;
}

// Stops after the first step through the flag a signal sets, then resumes from the state the
// stop saved.
TrainReport interrupted_then_resumed(const Dataset& ds, const std::string& dir) {
  const TrainOptions first = resumable(dir);
  clear_stop();
  // The flag is polled after every step, so the first step finishes and the state is saved.
  request_stop(SIGTERM);
  try {
    train(ds, first, std::cout);
    ADD_FAILURE() << "expected Interrupted";
  } catch (const Interrupted& e) {
    EXPECT_EQ(e.exit_code(), 143);
    EXPECT_NE(std::string(e.what()).find("Training state saved in " + dir), std::string::npos)
        << e.what();
    EXPECT_EQ(e.state_dir(), dir);  // the command line's resume command names it
  }
  clear_stop();
  TrainOptions second = resumable(dir);
  second.resume_dir = dir;
  return train(ds, second, std::cout);
}

TEST(Trainer, InterruptedAndResumedRunEndsWithTheSameParameters) {
  at::set_num_threads(1);
  const Dataset ds = small_rmat();
  testing::TempDirectory dir;
  clear_stop();
  const TrainReport straight = train(ds, resumable(dir.file("a")), std::cout);
  // The stop flag is seen after the first step; the resumed run does the other 3 epochs + 2/3.
  const TrainReport resumed = interrupted_then_resumed(ds, dir.file("b"));
  EXPECT_EQ(straight.param_digest, resumed.param_digest);
  EXPECT_EQ(straight.best_epoch, resumed.best_epoch);
  EXPECT_DOUBLE_EQ(straight.test_acc, resumed.test_acc);
  // A finished run cannot be resumed again without more epochs.
  TrainOptions again = resumable(dir.file("b"));
  again.resume_dir = dir.file("b");
  EXPECT_ERROR_CONTAINS(train(ds, again, std::cout), "the run finished all 4 epochs");
  again.epochs = 5;
  EXPECT_EQ(train(ds, again, std::cout).epochs, 5);
  // Other options than the saved ones are refused.
  TrainOptions other = resumable(dir.file("b"));
  other.resume_dir = dir.file("b");
  other.lr = 0.1;
  EXPECT_ERROR_CONTAINS(train(ds, other, std::cout), "was saved with other options");
  at::set_num_threads(num_threads());
}

TEST(Trainer, PrefetchDepthAndWorkersDoNotChangeTheResult) {
  const Dataset ds = small_rmat();
  std::string digest;
  for (int prefetch : {0, 1, 2, 4}) {
    for (int workers : {1, 3}) {
      TrainOptions t = quick();
      t.loader.prefetch = prefetch;
      t.loader.workers = workers;
      const TrainReport r = train(ds, t, std::cout);
      if (digest.empty()) digest = r.param_digest;
      EXPECT_EQ(r.param_digest, digest) << "prefetch " << prefetch << ", workers " << workers;
    }
  }
}

}  // namespace
}  // namespace directgnn
