// A block (message-flow graph) for one GNN layer, as in DGL: a CSR over local ids whose rows
// are the layer's destination nodes and whose column ids index its source nodes. The
// destination nodes are the first `num_dst` source nodes, so a layer reads its own
// ("root") inputs as x_src[:num_dst].
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <vector>

namespace directgnn {

struct Block {
  at::Tensor indptr;      // int64 [num_dst + 1]
  at::Tensor indices;     // int32 or int64 [num_edges]: source ids in [0, num_src)
  at::Tensor src_degree;  // float32 [num_src]: each source node's degree in the whole graph
  at::Tensor dst_degree;  // float32 [num_dst]: the same for the destination nodes
  int64_t num_src = 0;
  int64_t num_dst = 0;

  int64_t num_edges() const { return indices.numel(); }
};

struct MiniBatch {
  at::Tensor seeds;           // int64 [B]: global ids of the nodes whose outputs are trained
  at::Tensor input_nodes;     // int64 [blocks.front().num_src]: global ids; the first B are seeds
  std::vector<Block> blocks;  // blocks.front() reads the input features, blocks.back() emits seeds
};

}  // namespace directgnn
