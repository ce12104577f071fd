#include "nn/gcn_conv.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <cmath>

#include "nn/aggregate.h"
#include "nn/linear.h"

namespace directgnn {
namespace {

// The normalisation in gcn_conv.h: per-edge weights [num_edges], self-loop weights [num_dst].
// The same with tensor operations, on any device (the GPU path).
std::pair<at::Tensor, at::Tensor> gcn_weights_generic(const Block& block) {
  const at::Tensor dst = edge_destinations(block.indptr, block.num_edges());
  const at::Tensor count =
      (block.indptr.narrow(0, 1, block.num_dst) - block.indptr.narrow(0, 0, block.num_dst))
          .to(at::kFloat);
  const at::Tensor di = block.dst_degree + 1.0f;
  const at::Tensor scale =
      at::where(count > 0, block.dst_degree / count.clamp_min(1.0f), at::zeros_like(count));
  const at::Tensor src_deg = block.src_degree.index_select(0, block.indices.to(at::kLong));
  const at::Tensor edge =
      scale.index_select(0, dst) / at::sqrt(di.index_select(0, dst) * (src_deg + 1.0f));
  return {edge, 1.0f / di};
}

std::pair<at::Tensor, at::Tensor> gcn_weights(const Block& block) {
  if (!block.indptr.device().is_cpu()) return gcn_weights_generic(block);
  const int64_t num_dst = block.num_dst;
  at::Tensor edge = at::empty({block.num_edges()}, at::kFloat);
  at::Tensor self = at::empty({num_dst}, at::kFloat);
  const int64_t* indptr = block.indptr.data_ptr<int64_t>();
  const float* deg = block.src_degree.data_ptr<float>();
  const at::Tensor dst_degree = block.dst_degree.contiguous();
  const float* dst_deg = dst_degree.data_ptr<float>();
  float* w = edge.data_ptr<float>();
  float* s = self.data_ptr<float>();
  auto fill = [&](const auto* idx) {
    at::parallel_for(0, num_dst, 256, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t lo = indptr[i], hi = indptr[i + 1];
        const float di = dst_deg[i] + 1.0f;
        s[i] = 1.0f / di;
        const float scale = hi > lo ? dst_deg[i] / static_cast<float>(hi - lo) : 0.0f;
        for (int64_t e = lo; e < hi; ++e) w[e] = scale / std::sqrt(di * (deg[idx[e]] + 1.0f));
      }
    });
  };
  if (block.indices.scalar_type() == at::kInt) {
    fill(block.indices.data_ptr<int32_t>());
  } else {
    fill(block.indices.data_ptr<int64_t>());
  }
  return {edge, self};
}

}  // namespace

GCNConv::GCNConv(int64_t in_dim, int64_t out_dim) {
  // Glorot initialisation, zero bias, as in PyG's GCNConv.
  const double bound = std::sqrt(6.0 / static_cast<double>(in_dim + out_dim));
  weight_ = register_parameter("weight", at::empty({out_dim, in_dim}).uniform_(-bound, bound));
  bias_ = register_parameter("bias", at::zeros({out_dim}));
}

at::Tensor GCNConv::forward(const Block& block, const at::Tensor& x_src, const at::Tensor& x_dst) {
  const auto [edge, self] = gcn_weights(block);
  const at::Tensor h =
      csr_aggregate(block.indptr, block.indices, edge, x_src) + x_dst * self.unsqueeze(1);
  return parallel_linear(h, weight_, bias_);
}

}  // namespace directgnn
