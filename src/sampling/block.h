// A block (message-flow graph) for one GNN layer, as in DGL: a CSR over local ids whose rows
// are the layer's destination nodes and whose column ids index its source nodes. The
// destination nodes are the first `num_dst` source nodes, so a layer reads its own
// ("root") inputs as x_src[:num_dst]. One exception: a CPU loader with sources_in_place
// (loader/loader.h) rewrites block 0 to read the whole feature table, its indices global ids,
// src_degree the whole graph's and num_src the node count, while dst_degree stays local.
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace directgnn {

// How a k-hop sample draws neighbours.
enum class SampleMode {
  // DGL's blocks: each layer draws anew for every one of its destination nodes, so a seed's
  // neighbours differ from layer to layer (what `directgnn train` does).
  kFreshPerLayer,
  // PyG's hops: a node's neighbours are drawn once, at the hop that first reaches it, and
  // every layer reuses them. Hop h samples only the nodes first reached at hop h - 1; the
  // blocks are prefixes of one CSR, as PyG's trim_to_layer sees them.
  kOncePerNode,
};

struct Block {
  at::Tensor indptr;      // int64 [num_dst + 1]
  at::Tensor indices;     // int32 or int64 [num_edges]: source ids in [0, num_src)
  at::Tensor src_degree;  // float32 [num_src]: each source node's degree in the whole graph
  at::Tensor dst_degree;  // float32 [num_dst]: the same for the destination nodes
  // int64 [num_edges]: each edge's position in the graph's CSR (its edge id), when the sampler
  // was asked for them (SamplerOptions::edge_ids); undefined otherwise.
  at::Tensor edge_ids;
  int64_t num_src = 0;
  int64_t num_dst = 0;

  int64_t num_edges() const { return indices.numel(); }
};

struct MiniBatch {
  at::Tensor seeds;           // int64 [B]: global ids of the nodes whose outputs are trained
  at::Tensor input_nodes;     // int64 [blocks.front().num_src]: global ids; the first B are seeds
  std::vector<Block> blocks;  // blocks.front() reads the input features, blocks.back() emits seeds
  // Per hop, seeds first: the nodes first reached there (PyG's num_sampled_nodes, hops + 1
  // entries) and the edges drawn there (num_sampled_edges, one entry per hop).
  std::vector<int64_t> hop_nodes, hop_edges;
};

// Each hop's draw (seed hop first): a CSR over the rows it drew, `offsets` and local `indices`,
// the picks' CSR positions in the graph (`edges`, undefined when not asked for), and `row_end`:
// hop h's destinations are rows [0, row_end).
struct HopCsr {
  at::Tensor offsets, indices, edges;
  int64_t row_end = 0;
};

// The blocks, outermost first. kFreshPerLayer: hop h drew all of its destination rows, and its
// CSR is the block.
std::vector<Block> hop_blocks(const std::vector<HopCsr>& hops);
// kOncePerNode: hop h drew only rows [row_end[h - 1], row_end[h]); the hops join into one CSR,
// and each block is its prefix over rows [0, row_end[h]) (views of the joined tensors).
std::vector<Block> prefix_blocks(const std::vector<HopCsr>& hops);
// Sets every block's num_src and degrees from batch.hop_nodes and batch.input_nodes, given each
// node's degree in the whole graph (float32 [N]).
void set_sources(MiniBatch& batch, const at::Tensor& degree);

// The nodes of `ids` (int64, any device) in order of first appearance, and each element's
// position in that list, as tensor operations on the ids' device (the GPU twin's relabelling).
std::pair<at::Tensor, at::Tensor> relabel_first_seen(const at::Tensor& ids);

}  // namespace directgnn
