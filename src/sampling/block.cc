#include "sampling/block.h"

#include <ATen/ATen.h>

namespace directgnn {

std::vector<Block> hop_blocks(const std::vector<HopCsr>& hops) {
  std::vector<Block> blocks(hops.size());
  for (size_t h = 0; h < hops.size(); ++h) {
    Block& block = blocks[hops.size() - 1 - h];
    block.indptr = hops[h].offsets;
    block.indices = hops[h].indices;
    block.edge_ids = hops[h].edges;
    block.num_dst = hops[h].row_end;
  }
  return blocks;
}

std::vector<Block> prefix_blocks(const std::vector<HopCsr>& hops) {
  std::vector<at::Tensor> indptrs{hops[0].offsets.narrow(0, 0, 1)}, indices, edges;
  std::vector<int64_t> edge_end;
  int64_t total = 0;
  for (const HopCsr& hop : hops) {
    indptrs.push_back(hop.offsets.narrow(0, 1, hop.offsets.numel() - 1) + total);
    indices.push_back(hop.indices);
    if (hop.edges.defined()) edges.push_back(hop.edges);
    total += hop.indices.numel();
    edge_end.push_back(total);
  }
  const at::Tensor indptr = at::cat(indptrs), all = at::cat(indices);
  const at::Tensor all_edges = edges.empty() ? at::Tensor() : at::cat(edges);
  std::vector<Block> blocks(hops.size());
  for (size_t h = 0; h < hops.size(); ++h) {
    Block& block = blocks[hops.size() - 1 - h];
    block.indptr = indptr.narrow(0, 0, hops[h].row_end + 1);
    block.indices = all.narrow(0, 0, edge_end[h]);
    if (all_edges.defined()) block.edge_ids = all_edges.narrow(0, 0, edge_end[h]);
    block.num_dst = hops[h].row_end;
  }
  return blocks;
}

void set_sources(MiniBatch& batch, const at::Tensor& degree) {
  const size_t hops = batch.blocks.size();
  int64_t num_src = batch.hop_nodes[0];
  for (size_t h = 0; h < hops; ++h) {
    num_src += batch.hop_nodes[h + 1];
    Block& block = batch.blocks[hops - 1 - h];
    block.num_src = num_src;
    block.src_degree = degree.index_select(0, batch.input_nodes.narrow(0, 0, num_src));
    block.dst_degree = block.src_degree.narrow(0, 0, block.num_dst);
  }
}

std::pair<at::Tensor, at::Tensor> relabel_first_seen(const at::Tensor& ids) {
  const auto unique = at::_unique2(ids, /*sorted=*/true, /*return_inverse=*/true,
                                   /*return_counts=*/true);
  const at::Tensor& values = std::get<0>(unique);
  const at::Tensor inverse = std::get<1>(unique).view({-1});
  const at::Tensor& counts = std::get<2>(unique);
  // A stable sort of the inverse groups each value's positions in input order: the first of
  // each group is the value's first appearance.
  const at::Tensor by_value = std::get<1>(at::sort(inverse, /*stable=*/true, 0, false));
  const at::Tensor group_start = counts.cumsum(0) - counts;
  const at::Tensor first = by_value.index_select(0, group_start);
  const at::Tensor order = std::get<1>(first.sort());
  const at::Tensor nodes = values.index_select(0, order);
  at::Tensor rank = at::empty_like(order);
  rank.index_put_({order}, at::arange(order.numel(), order.options()));
  return {nodes, rank.index_select(0, inverse)};
}

}  // namespace directgnn
