// The minibatch loader (loader/loader.h) on the CPU, and the typed run choices
// (loader/options.h). The GPU path is covered by tests/gpu/gpu_training_test.cc.
#include "loader/loader.h"

#include <ATen/ATen.h>

#include <set>

#include "graph/rmat.h"
#include "loader/options.h"
#include "nn/model.h"
#include "test_util.h"

namespace directgnn {
namespace {

Dataset small_graph() {
  RmatDatasetOptions o;
  o.graph.num_nodes = 3000;
  o.graph.edge_factor = 6;
  o.feat_dim = 12;
  o.num_classes = 5;
  return make_rmat_dataset(o);
}

LoaderSettings cpu_options(int prefetch, int workers) {
  LoaderSettings o;
  o.fanouts = {5, 3};
  o.batch_size = 100;
  o.prefetch = prefetch;
  o.workers = workers;
  return o;
}

// Every seed once, in the given order, with its labels and input rows; the same minibatches
// whatever the prefetch depth and the number of workers.
TEST(MinibatchLoader, YieldsEverySeedInOrderWithItsRowsAndLabels) {
  const Dataset ds = small_graph();
  const at::Tensor order = at::randperm(ds.num_nodes(), at::kLong).narrow(0, 0, 950);
  const auto seed_of = [](int64_t step) { return uint64_t{77} + static_cast<uint64_t>(step); };
  const MinibatchLoader reference(ds, cpu_options(0, 1));
  EXPECT_EQ(reference.steps(950), 10);
  EXPECT_EQ(reference.mode(), "host/cpu/cpu");
  for (const auto& [prefetch, workers] : {std::pair{0, 1}, std::pair{2, 1}, std::pair{3, 3}}) {
    const MinibatchLoader loader(ds, cpu_options(prefetch, workers));
    MinibatchLoader::Epoch epoch = loader.epoch(order, seed_of);
    int64_t seen = 0;
    for (int64_t step = 0; !epoch.done(); ++step) {
      const Minibatch b = epoch.next();
      const int64_t n = b.seeds.numel();
      ASSERT_TRUE(b.seeds.equal(order.narrow(0, seen, n))) << "step " << step;
      EXPECT_TRUE(b.labels.equal(ds.labels.index_select(0, b.seeds)));
      EXPECT_TRUE(b.x.equal(ds.features.index_select(0, b.batch.input_nodes)));
      EXPECT_TRUE(b.batch.input_nodes.narrow(0, 0, n).equal(b.seeds)) << "seeds come first";
      const Minibatch direct = reference.prepare(b.seeds, seed_of(step));
      EXPECT_TRUE(direct.batch.input_nodes.equal(b.batch.input_nodes)) << "step " << step;
      seen += n;
    }
    EXPECT_EQ(seen, 950) << "prefetch " << prefetch << ", workers " << workers;
  }
}

TEST(MinibatchLoader, StartsAtAGivenStepAndChecksItsOptions) {
  const Dataset ds = small_graph();
  const at::Tensor order = at::arange(1000, at::kLong);
  const MinibatchLoader loader(ds, cpu_options(2, 2));
  MinibatchLoader::Epoch epoch = loader.epoch(
      order, [](int64_t s) { return uint64_t(s); }, 7);
  EXPECT_TRUE(epoch.next().seeds.equal(at::arange(700, 800, at::kLong)));
  LoaderSettings bad = cpu_options(2, 1);
  bad.prefetch = 65;
  EXPECT_ERROR_CONTAINS(MinibatchLoader(ds, bad), "prefetch: must be in 0..64");
  bad = cpu_options(2, 1);
  bad.gpu_sampler = true;
  EXPECT_ERROR_CONTAINS(MinibatchLoader(ds, bad), "sampler: gpu samples on a GPU");
  EXPECT_ERROR_CONTAINS(loader.epoch(order.to(at::kInt), [](int64_t) { return uint64_t(0); }),
                        "seeds must be a 1-D int64 CPU tensor");
}

// Block 0 reading its sources from the table in place: x holds only block 0's destinations,
// block 0's ids are global, and SAGE and GCN (residual and norm included) give the same bits,
// forward and backward, as with every input row gathered. Both sampling modes.
TEST(MinibatchLoader, SourcesInPlaceGiveTheSameOutputsAndGradients) {
  const Dataset ds = small_graph();
  const at::Tensor seeds = at::arange(40, 140, at::kLong);
  for (const SampleMode mode : {SampleMode::kFreshPerLayer, SampleMode::kOncePerNode}) {
    LoaderSettings o = cpu_options(0, 1);
    o.sample_mode = mode;
    const MinibatchLoader gathered(ds, o);
    o.sources_in_place = true;
    const MinibatchLoader in_place(ds, o);
    const Minibatch a = gathered.prepare(seeds, 5), b = in_place.prepare(seeds, 5);
    const Block& first = b.batch.blocks.front();
    ASSERT_EQ(b.x.size(0), first.num_dst);
    EXPECT_TRUE(b.x.equal(a.x.narrow(0, 0, first.num_dst)));
    EXPECT_TRUE(first.indices.equal(
        a.batch.input_nodes.index_select(0, a.batch.blocks.front().indices.to(at::kLong))));
    EXPECT_TRUE(b.source_table.is_same(ds.features));
    for (const std::string arch : {"sage", "gcn"}) {
      ModelConfig c;
      c.kind = parse_model_kind(arch);
      c.in_dim = ds.feat_dim();
      c.hidden = 16;
      c.num_classes = ds.num_classes;
      c.residual = true;
      c.norm = Norm::kLayer;
      c.dropout = 0;  // the two passes would draw different masks
      at::manual_seed(1);
      GnnModel model(c);
      const at::Tensor want = model.forward(a.batch.blocks, a.x);
      const at::Tensor got = model.forward(b.batch.blocks, b.x, b.source_table);
      EXPECT_TRUE(got.equal(want)) << arch;
      std::vector<at::Tensor> grads_want, grads_got;
      want.sum().backward();
      for (const at::Tensor& p : model.parameters()) grads_want.push_back(p.grad().clone());
      model.zero_grad();
      got.sum().backward();
      for (const at::Tensor& p : model.parameters()) grads_got.push_back(p.grad().clone());
      for (size_t i = 0; i < grads_want.size(); ++i) {
        EXPECT_TRUE(grads_got[i].equal(grads_want[i])) << arch << " parameter " << i;
      }
    }
  }
  LoaderSettings disk = cpu_options(0, 1);
  disk.sources_in_place = true;
  disk.features = Placement::kDisk;
  EXPECT_ERROR_CONTAINS(MinibatchLoader(ds, disk), "sources_in_place reads a host table");
}

TEST(LoaderOptions, ParseChoicesAndResolveThemOnTheCpu) {
  EXPECT_EQ(parse_device("cuda:3"), DeviceChoice::cuda(3));
  EXPECT_EQ(device_choice_name(parse_device("cuda")), "cuda");
  EXPECT_EQ(device_choice_name(parse_device("cpu")), "cpu");
  EXPECT_ERROR_CONTAINS(parse_device("cuda:x"), "use cuda or cuda:N");
  EXPECT_ERROR_CONTAINS(parse_device("tpu"), "use auto, cpu, cuda or cuda:N");
  EXPECT_ERROR_CONTAINS(parse_sampler("fast"), "use auto, cpu or gpu");
  EXPECT_FALSE(parse_feature_placement("auto").has_value());
  EXPECT_EQ(feature_placement_name(parse_feature_placement("pinned")), "pinned");
  EXPECT_FALSE(parse_prefetch("auto").has_value());
  EXPECT_EQ(parse_prefetch("3"), 3);
  EXPECT_ERROR_CONTAINS(parse_prefetch("65"), "0..64");
  const Dataset ds = small_graph();
  LoaderOptions cpu;
  cpu.fanouts = {5, 3};
  cpu.device = DeviceChoice::cpu();
  const LoaderSettings run = resolve_loader(cpu, ds);
  EXPECT_FALSE(run.gpu());
  EXPECT_EQ(run.features, Placement::kHost);
  EXPECT_EQ(run.gather.method, GatherMethod::kCpuCopy);
  EXPECT_FALSE(run.gpu_sampler);
  EXPECT_EQ(run.prefetch, 0) << "no prefetching on the CPU by default";
  LoaderOptions disk = cpu;
  disk.features = Placement::kDisk;
  EXPECT_EQ(resolve_loader(disk, ds).prefetch, LoaderOptions::kGpuPrefetch)
      << "rows read from disk are prefetched by default";
  cpu.sampler = SamplerChoice::kGpu;
  EXPECT_ERROR_CONTAINS(resolve_loader(cpu, ds), "sampler: gpu samples on a GPU");
  cpu.sampler = SamplerChoice::kAuto;
  cpu.cache.gib = 1;
  EXPECT_ERROR_CONTAINS(resolve_loader(cpu, ds), "keeps hot rows of a table read from disk");
}

// Where "auto" puts a table: on a GPU pinned, on the CPU host, a GPU table stays on its GPU.
TEST(LoaderOptions, AutoFeaturePlacementFollowsTheDeviceAndTheTable) {
  const at::Tensor table = at::zeros({4, 2});
  EXPECT_EQ(resolve_feature_placement(std::nullopt, table, true), Placement::kPinned);
  EXPECT_EQ(resolve_feature_placement(std::nullopt, table, false), Placement::kHost);
  EXPECT_EQ(resolve_feature_placement(Placement::kDisk, table, true), Placement::kDisk);
  EXPECT_EQ(default_gather_method(Placement::kPinned), GatherMethod::kAligned);
  EXPECT_EQ(default_gather_method(Placement::kDevice), GatherMethod::kAligned);
  EXPECT_EQ(default_gather_method(Placement::kHost), GatherMethod::kCpuCopy);
  EXPECT_EQ(default_gather_method(Placement::kDisk), GatherMethod::kCpuCopy);
}

}  // namespace
}  // namespace directgnn
