#include "nn/aggregate.h"

#include <ATen/ATen.h>

#include "directgnn/error.h"
#include "nn/cpu/aggregate.h"

namespace directgnn {

at::Tensor edge_destinations(const at::Tensor& indptr, int64_t num_edges) {
  const at::Tensor positions = at::arange(num_edges, indptr.options());
  return at::searchsorted(indptr, positions, /*out_int32=*/false, /*right=*/true) - 1;
}

at::Tensor csr_aggregate_generic(const at::Tensor& indptr, const at::Tensor& indices,
                                 const at::Tensor& weight, const at::Tensor& x_src) {
  const int64_t num_dst = indptr.numel() - 1, num_edges = indices.numel();
  const at::Tensor dst = edge_destinations(indptr, num_edges);
  at::Tensor w = weight;
  if (!w.defined() || w.numel() == 0) {
    const at::Tensor count = (indptr.narrow(0, 1, num_dst) - indptr.narrow(0, 0, num_dst));
    w = (1.0f / count.clamp_min(1).to(at::kFloat)).index_select(0, dst);
  }
  const at::Tensor messages = x_src.index_select(0, indices.to(at::kLong)) * w.unsqueeze(1);
  return at::zeros({num_dst, x_src.size(1)}, x_src.options()).index_add(0, dst, messages);
}

at::Tensor csr_aggregate(const at::Tensor& indptr, const at::Tensor& indices,
                         const at::Tensor& weight, const at::Tensor& x_src) {
  if (!x_src.device().is_cpu()) return csr_aggregate_generic(indptr, indices, weight, x_src);
  DGNN_CHECK(indptr.scalar_type() == at::kLong && indptr.dim() == 1 && indptr.is_contiguous(),
             "csr_aggregate: indptr must be contiguous int64");
  DGNN_CHECK((indices.scalar_type() == at::kInt || indices.scalar_type() == at::kLong) &&
                 indices.is_contiguous(),
             "csr_aggregate: indices must be contiguous int32 or int64");
  DGNN_CHECK(!weight.defined() || (weight.scalar_type() == at::kFloat &&
                                   weight.numel() == indices.numel() && weight.is_contiguous()),
             "csr_aggregate: weight must be float32 with one entry per edge");
  DGNN_CHECK(x_src.dim() == 2 && x_src.scalar_type() == at::kFloat,
             "csr_aggregate: x_src must be a float32 matrix");
  return cpu::csr_aggregate(indptr, indices, weight, x_src.contiguous());
}

}  // namespace directgnn
