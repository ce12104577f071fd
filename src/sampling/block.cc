#include "sampling/block.h"

#include <ATen/ATen.h>

namespace directgnn {

std::vector<Block> hop_blocks(const std::vector<at::Tensor>& offsets,
                              const std::vector<at::Tensor>& indices,
                              const std::vector<int64_t>& row_end) {
  std::vector<Block> blocks(offsets.size());
  for (size_t h = 0; h < offsets.size(); ++h) {
    Block& block = blocks[offsets.size() - 1 - h];
    block.indptr = offsets[h];
    block.indices = indices[h];
    block.num_dst = row_end[h];
  }
  return blocks;
}

std::vector<Block> prefix_blocks(const std::vector<at::Tensor>& offsets,
                                 const std::vector<at::Tensor>& indices,
                                 const std::vector<int64_t>& row_end) {
  std::vector<at::Tensor> indptrs{offsets[0].narrow(0, 0, 1)};
  std::vector<int64_t> edge_end;
  int64_t total = 0;
  for (size_t h = 0; h < offsets.size(); ++h) {
    indptrs.push_back(offsets[h].narrow(0, 1, offsets[h].numel() - 1) + total);
    total += indices[h].numel();
    edge_end.push_back(total);
  }
  const at::Tensor indptr = at::cat(indptrs), all = at::cat(indices);
  std::vector<Block> blocks(offsets.size());
  for (size_t h = 0; h < offsets.size(); ++h) {
    Block& block = blocks[offsets.size() - 1 - h];
    block.indptr = indptr.narrow(0, 0, row_end[h] + 1);
    block.indices = all.narrow(0, 0, edge_end[h]);
    block.num_dst = row_end[h];
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
