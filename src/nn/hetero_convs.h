// The per-relation convolutions of the heterogeneous gcn and gat models (nn/hetero_model.h):
// one relation's block (sources of one type, destinations of another), its term of the
// destinations' outputs, which the model sums over the relations into a type.
//
// relation_gcn: DGL's GraphConv(norm='both') inside HeteroGraphConv (PyG's GCNConv refuses
// bipartite relations):
//   out_v = W ( (d_v / k_v) sum over v's sampled in-neighbours u of x_u / sqrt(d_u d_v) ) + b
// with d_u the out-degree of u and d_v the in-degree of v in the relation, in the whole graph
// (Block::src_degree, dst_degree; clamped to 1, as DGL's), k_v the neighbours sampling kept. On
// a full neighbourhood (k_v = d_v) this is DGL's full-graph GraphConv; on a sampled block an
// unbiased estimate of it, as the homogeneous GCNConv (DGL instead normalises a sampled block by
// its own degrees). No self loop: a destination's own row reaches it through the residual or
// the relations alone.
//
// relation_gat: PyG's GATConv((-1, -1), add_self_loops=False) inside to_hetero (DGL's GATConv
// on a bipartite graph): sources and destinations projected by their own weights, attention
// LeakyReLU(a_src . W_s x_u + a_dst . W_d x_v, 0.2) softmaxed over v's sampled in-edges only,
// out_v = sum_u alpha_uv W_s x_u per head (concatenated, or averaged), plus a bias; a
// destination without in-edges gets the bias alone.
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>

#include "sampling/block.h"

namespace directgnn {

// x_src float32 [block.num_src, in]; weight [out, in]; bias [out].
at::Tensor relation_gcn(const Block& block, const at::Tensor& x_src, const at::Tensor& weight,
                        const at::Tensor& bias);

struct RelationGat {
  at::Tensor lin_src;           // [heads * channels, in_src]
  at::Tensor lin_dst;           // [heads * channels, in_dst]; undefined when in_dst is 0
  at::Tensor att_src, att_dst;  // [1, heads, channels]
  at::Tensor bias;              // [heads * channels] when concat, else [channels]
  int64_t heads = 1, channels = 0;
  bool concat = true;
};

// x_src [block.num_src, in_src], x_dst [block.num_dst, in_dst] (in_dst may be 0).
at::Tensor relation_gat(const Block& block, const at::Tensor& x_src, const at::Tensor& x_dst,
                        const RelationGat& p, double attn_dropout, bool training);

}  // namespace directgnn
