// The link loader (loader/link_loader.h) on the CPU: the link sampler's batches with their
// input rows, in order, whatever the prefetch depth and the number of workers.
#include "loader/link_loader.h"

#include <ATen/ATen.h>

#include "graph/rmat.h"
#include "test_util.h"

namespace directgnn {
namespace {

Dataset small_link_graph() {
  RmatDatasetOptions o;
  o.graph.num_nodes = 2000;
  o.graph.edge_factor = 6;
  o.feat_dim = 10;
  o.num_classes = 3;
  return make_rmat_dataset(o);
}

LoaderSettings cpu_settings(int prefetch, int workers) {
  LoaderSettings s;
  s.fanouts = {4, 3};
  s.batch_size = 64;
  s.prefetch = prefetch;
  s.workers = workers;
  return s;
}

// The first `count` edges of `graph` as [count, 2] (src, dst) pairs.
at::Tensor some_edges(const CsrGraph& graph, int64_t count) {
  const at::Tensor dst = at::repeat_interleave(graph.degrees()).narrow(0, 0, count);
  const at::Tensor src = graph.indices.to(at::kLong).narrow(0, 0, count);
  return at::stack({src, dst}, 1);
}

TEST(LinkLoader, YieldsTheSamplersBatchesInOrderWithTheirRows) {
  const Dataset ds = small_link_graph();
  const at::Tensor positives = some_edges(ds.graph, 300);
  LinkSamplerOptions link;
  link.neg_ratio = 2;
  const auto seed_of = [](int64_t step) { return uint64_t{5} + static_cast<uint64_t>(step); };
  const LinkLoader reference(ds, ds.graph, cpu_settings(0, 1), link);
  EXPECT_EQ(reference.steps(300), 5);
  EXPECT_EQ(reference.mode(), "host/cpu/cpu");
  for (const auto& [prefetch, workers] : {std::pair{0, 1}, std::pair{2, 1}, std::pair{3, 2}}) {
    const LinkLoader loader(ds, ds.graph, cpu_settings(prefetch, workers), link);
    LinkLoader::Epoch epoch = loader.epoch(positives, seed_of);
    int64_t seen = 0;
    for (int64_t step = 0; !epoch.done(); ++step) {
      const LinkMinibatch m = epoch.next();
      const int64_t n = m.batch.positives.size(0);
      const at::Tensor expected = positives.narrow(0, seen, n);
      ASSERT_TRUE(m.batch.positives.equal(expected)) << "step " << step;
      EXPECT_TRUE(m.x.equal(ds.features.index_select(0, m.batch.sample.input_nodes)));
      const LinkBatch direct = reference.sampler().sample(expected, seed_of(step));
      EXPECT_TRUE(direct.edge_label_index.equal(m.batch.edge_label_index)) << "step " << step;
      EXPECT_TRUE(direct.sample.input_nodes.equal(m.batch.sample.input_nodes)) << "step " << step;
      seen += n;
    }
    EXPECT_EQ(seen, 300) << "prefetch " << prefetch << ", workers " << workers;
  }
}

TEST(LinkLoader, RefusesWhatItCannotDoByName) {
  const Dataset ds = small_link_graph();
  LoaderSettings gpu_sampler = cpu_settings(0, 1);
  gpu_sampler.gpu_sampler = true;
  EXPECT_ERROR_CONTAINS(LinkLoader(ds, ds.graph, gpu_sampler, {}), "sampler: gpu samples on a GPU");
  LoaderSettings weighted = cpu_settings(0, 1);
  weighted.weighted = true;
  EXPECT_ERROR_CONTAINS(LinkLoader(ds, ds.graph, weighted, {}), "weighted_sampling: ");
  LoaderSettings disk = cpu_settings(0, 1);
  disk.features = Placement::kDisk;
  EXPECT_ERROR_CONTAINS(LinkLoader(ds, ds.graph, disk, {}), "features.npy");
}

}  // namespace
}  // namespace directgnn
