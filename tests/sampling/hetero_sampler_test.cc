// The heterogeneous sampler (sampling/hetero_sampler.h): every sampled edge exists in its
// relation, per-relation fan-outs are honoured, the blocks are nested (destinations a prefix of
// sources, per type), and the result does not depend on the thread count.
#include "sampling/hetero_sampler.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <set>

#include "graph/hetero_test_graph.h"
#include "test_util.h"

namespace directgnn {
namespace {

std::set<int64_t> neighbours(const Relation& r, int64_t v) {
  const at::Tensor ptr = r.graph.indptr;
  const at::Tensor idx = r.graph.indices.to(at::kLong);
  std::set<int64_t> out;
  for (int64_t e = ptr[v].item<int64_t>(); e < ptr[v + 1].item<int64_t>(); ++e) {
    out.insert(idx[e].item<int64_t>());
  }
  return out;
}

// Checks every edge of every block against the graph and the fan-outs.
void check_batch(const HeteroDataset& ds, const HeteroSamplerOptions& o, const HeteroMiniBatch& b) {
  const size_t H = b.blocks.size();
  for (size_t l = 0; l < H; ++l) {
    const HeteroBlock& block = b.blocks[l];
    const size_t hop = H - 1 - l;
    for (size_t t = 0; t < ds.node_types.size(); ++t) {
      EXPECT_LE(block.num_dst[t], block.num_src[t]);
      if (l + 1 < H) EXPECT_EQ(block.num_dst[t], b.blocks[l + 1].num_src[t]);
    }
    for (size_t r = 0; r < ds.relations.size(); ++r) {
      const Relation& rel = ds.relations[r];
      const Block& blk = block.relations[r];
      ASSERT_EQ(blk.num_dst, block.num_dst[rel.dst_type]);
      ASSERT_EQ(blk.num_src, block.num_src[rel.src_type]);
      const at::Tensor ptr = blk.indptr;
      const at::Tensor idx = blk.indices.to(at::kLong);
      for (int64_t i = 0; i < blk.num_dst; ++i) {
        const int64_t v = b.input_nodes[rel.dst_type][i].item<int64_t>();
        const std::set<int64_t> nbr = neighbours(rel, v);
        const int64_t fanout = o.fanouts[r][hop];
        const int64_t want =
            fanout < 0 ? static_cast<int64_t>(nbr.size()) : std::min<int64_t>(fanout, nbr.size());
        const int64_t lo = ptr[i].item<int64_t>(), hi = ptr[i + 1].item<int64_t>();
        ASSERT_EQ(hi - lo, want) << rel.key() << " hop " << hop << " node " << v;
        std::set<int64_t> seen;
        for (int64_t e = lo; e < hi; ++e) {
          const int64_t local = idx[e].item<int64_t>();
          ASSERT_LT(local, blk.num_src);
          const int64_t u = b.input_nodes[rel.src_type][local].item<int64_t>();
          EXPECT_TRUE(nbr.count(u)) << rel.key() << ": " << u << " -> " << v << " is no edge";
          EXPECT_TRUE(seen.insert(u).second) << "neighbour drawn twice";
        }
      }
    }
  }
}

TEST(HeteroSampler, EveryEdgeExistsAndFanOutsAreHonoured) {
  const HeteroDataset ds = testing::random_hetero(3);
  const HeteroSamplerOptions o =
      parse_hetero_fanouts(ds, "3,2", "paper,cites,paper=2,-1;rev_writes=1,4", 2);
  const HeteroSampler sampler(ds, o);
  const at::Tensor seeds = at::arange(0, 60, 7, at::kLong);
  const HeteroMiniBatch b = sampler.sample(0, seeds, 11);
  ASSERT_EQ(b.blocks.size(), 2u);
  EXPECT_TRUE(at::equal(b.input_nodes[0].narrow(0, 0, seeds.numel()), seeds));
  EXPECT_EQ(b.blocks.back().num_dst[0], seeds.numel());
  EXPECT_EQ(b.blocks.back().num_dst[1], 0);
  check_batch(ds, o, b);
}

TEST(HeteroSampler, DoesNotDependOnTheThreadCount) {
  const HeteroDataset ds = testing::random_hetero(5, 3000, 2000, 50);
  const HeteroSamplerOptions o = parse_hetero_fanouts(ds, "4,3", "", 2);
  const HeteroSampler sampler(ds, o);
  const at::Tensor seeds = at::arange(0, 3000, 3, at::kLong);
  const int before = at::get_num_threads();
  at::set_num_threads(1);
  const HeteroMiniBatch one = sampler.sample(0, seeds, 9);
  at::set_num_threads(2);
  const HeteroMiniBatch two = sampler.sample(0, seeds, 9);
  at::set_num_threads(before);
  for (size_t t = 0; t < one.input_nodes.size(); ++t) {
    EXPECT_TRUE(at::equal(one.input_nodes[t], two.input_nodes[t]));
  }
  for (size_t l = 0; l < one.blocks.size(); ++l) {
    for (size_t r = 0; r < ds.relations.size(); ++r) {
      EXPECT_TRUE(
          at::equal(one.blocks[l].relations[r].indices, two.blocks[l].relations[r].indices));
    }
  }
  const HeteroMiniBatch other = sampler.sample(0, seeds, 10);
  EXPECT_FALSE(at::equal(one.input_nodes[1], other.input_nodes[1]));
}

TEST(HeteroSampler, FanOutsNameTheRelationAndTheFix) {
  const HeteroDataset ds = testing::random_hetero(1);
  EXPECT_ERROR_CONTAINS(parse_hetero_fanouts(ds, "2,2", "paper,likes,paper=3,3", 2),
                        "no relation 'paper,likes,paper'; the relations are");
  EXPECT_ERROR_CONTAINS(parse_hetero_fanouts(ds, "", "paper,cites,paper=3,3", 2),
                        "no fan-outs for relation author,writes,paper");
  EXPECT_ERROR_CONTAINS(parse_hetero_fanouts(ds, "2,2", "rev_writes=3", 2), "rev_writes");
  EXPECT_ERROR_CONTAINS(parse_hetero_fanouts(ds, "2,2", "cites", 2), "src,rel,dst=F1,F2");
  const HeteroSampler sampler(ds, parse_hetero_fanouts(ds, "2", "", 1));
  EXPECT_ERROR_CONTAINS(sampler.sample(0, at::tensor(std::vector<int64_t>{0, 60}), 0), "60");
}

}  // namespace
}  // namespace directgnn
