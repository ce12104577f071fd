// Checks of a sampled minibatch against its graph, shared by the sampler tests.
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <numeric>
#include <set>
#include <vector>

#include "graph/csr_graph.h"
#include "sampling/block.h"
#include "sampling/uniform_pick.h"

namespace directgnn {

// The hop that drew row i of block l (outermost first).
inline size_t hop_of_row(const MiniBatch& batch, SampleMode mode, size_t l, int64_t i) {
  const size_t layers = batch.blocks.size();
  if (mode == SampleMode::kFreshPerLayer) return layers - 1 - l;
  size_t hop = 0;
  for (int64_t end = batch.hop_nodes[0]; i >= end; end += batch.hop_nodes[hop]) ++hop;
  return hop;
}

// Layer l's destinations are the first num_dst of its sources, the next layer's sources are
// this layer's destinations, and input_nodes, seeds first, holds the outermost sources.
inline void expect_chained_blocks(const MiniBatch& batch, const at::Tensor& seeds, size_t layers) {
  ASSERT_EQ(batch.blocks.size(), layers);
  EXPECT_TRUE(batch.seeds.cpu().equal(seeds));
  for (size_t l = 0; l + 1 < layers; ++l) {
    EXPECT_EQ(batch.blocks[l].num_dst, batch.blocks[l + 1].num_src) << "layer " << l;
  }
  EXPECT_EQ(batch.blocks.back().num_dst, seeds.numel());
  EXPECT_EQ(batch.blocks.front().num_src, batch.input_nodes.numel());
  const at::Tensor all = batch.input_nodes.cpu();
  EXPECT_EQ(std::get<0>(at::_unique(all)).numel(), all.numel()) << "input nodes repeat";
  EXPECT_TRUE(all.narrow(0, 0, seeds.numel()).equal(seeds)) << "seeds must come first";
  ASSERT_EQ(batch.hop_nodes.size(), layers + 1);
  EXPECT_EQ(std::accumulate(batch.hop_nodes.begin(), batch.hop_nodes.end(), int64_t{0}),
            all.numel());
}

// Every sampled edge exists, each row keeps min(fan-out, degree) distinct neighbours, and the
// degrees are the graph's.
inline void expect_valid_batch(const CsrGraph& graph, const MiniBatch& batch,
                               const at::Tensor& seeds, const std::vector<int64_t>& fanouts,
                               SampleMode mode = SampleMode::kFreshPerLayer) {
  expect_chained_blocks(batch, seeds, fanouts.size());
  if (::testing::Test::HasFatalFailure()) return;
  const at::Tensor idx = graph.indices.to(at::kLong), all = batch.input_nodes.cpu();
  const int64_t* p = graph.indptr.data_ptr<int64_t>();
  const int64_t* ix = idx.data_ptr<int64_t>();
  const int64_t* a = all.data_ptr<int64_t>();
  for (size_t l = 0; l < batch.blocks.size(); ++l) {
    const Block& b = batch.blocks[l];
    const at::Tensor bp = b.indptr.cpu(), bi = b.indices.cpu().to(at::kLong);
    ASSERT_EQ(bp.numel(), b.num_dst + 1);
    ASSERT_EQ(bi.numel(), bp[-1].item<int64_t>());
    const int64_t* q = bp.data_ptr<int64_t>();
    const int64_t* li = bi.data_ptr<int64_t>();
    const at::Tensor sd = b.src_degree.cpu();
    for (int64_t i = 0; i < b.num_dst; ++i) {
      const int64_t u = a[i], deg = p[u + 1] - p[u];
      const int64_t fanout = fanouts[hop_of_row(batch, mode, l, i)];
      const std::set<int64_t> nbrs(ix + p[u], ix + p[u + 1]);
      EXPECT_EQ(q[i + 1] - q[i], uniform_pick::pick_count(deg, fanout)) << "node " << u;
      std::set<int64_t> picked;
      for (int64_t e = q[i]; e < q[i + 1]; ++e) {
        ASSERT_LT(li[e], b.num_src);
        EXPECT_TRUE(nbrs.count(a[li[e]])) << u << "->" << a[li[e]] << " is no edge";
        picked.insert(li[e]);
      }
      EXPECT_EQ(picked.size(), static_cast<size_t>(q[i + 1] - q[i])) << "repeated pick of " << u;
      EXPECT_EQ(sd[i].item<float>(), static_cast<float>(deg));
    }
  }
}

// Every block's edge ids are its edges' positions in the graph: in the destination's row, and
// naming the same source the block names.
inline void expect_edge_ids(const CsrGraph& graph, const MiniBatch& batch) {
  const at::Tensor idx = graph.indices.to(at::kLong), all = batch.input_nodes.cpu();
  const int64_t* p = graph.indptr.data_ptr<int64_t>();
  for (size_t l = 0; l < batch.blocks.size(); ++l) {
    const Block& b = batch.blocks[l];
    ASSERT_TRUE(b.edge_ids.defined()) << "block " << l;
    ASSERT_EQ(b.edge_ids.numel(), b.num_edges()) << "block " << l;
    const at::Tensor ids = b.edge_ids.cpu(), bp = b.indptr.cpu();
    EXPECT_TRUE(idx.index_select(0, ids).equal(all.index_select(0, b.indices.cpu().to(at::kLong))))
        << "block " << l;
    for (int64_t i = 0; i < b.num_dst; ++i) {
      const int64_t u = all[i].item<int64_t>();
      for (int64_t e = bp[i].item<int64_t>(); e < bp[i + 1].item<int64_t>(); ++e) {
        const int64_t id = ids[e].item<int64_t>();
        ASSERT_TRUE(id >= p[u] && id < p[u + 1]) << "edge " << id << " is not in node " << u;
      }
    }
  }
}

}  // namespace directgnn
