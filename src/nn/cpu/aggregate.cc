#include "nn/cpu/aggregate.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include "nn/cpu/csr_kernel_util.h"

namespace directgnn::cpu {
namespace {

inline float edge_weight(const float* weight, int64_t e, float mean_scale) {
  return weight != nullptr ? weight[e] : mean_scale;
}

template <typename Id>
void forward_kernel(const int64_t* indptr, const Id* indices, const float* weight, const float* x,
                    int64_t num_dst, int64_t f, float* out) {
  at::parallel_for(0, num_dst, 64, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      float* row = out + i * f;
      for (int64_t c = 0; c < f; ++c) row[c] = 0.0f;
      const int64_t lo = indptr[i], hi = indptr[i + 1];
      const float scale = hi > lo ? 1.0f / static_cast<float>(hi - lo) : 0.0f;
      for (int64_t e = lo; e < hi; ++e) {
        const float w = edge_weight(weight, e, scale);
        const float* src = x + static_cast<int64_t>(indices[e]) * f;
        for (int64_t c = 0; c < f; ++c) row[c] += w * src[c];
      }
    }
  });
}

// grad_x[idx[e]] += w[e] * grad_out[i]. Threads own disjoint column ranges (multiples of 16
// floats, one cache line), so every sum runs in edge order whatever the thread count.
template <typename Id>
void backward_kernel(const int64_t* indptr, const Id* indices, const float* weight,
                     const float* grad_out, int64_t num_dst, int64_t f, float* grad_x) {
  for_each_column_share(f, [&](int64_t c0, int64_t c1) {
    for (int64_t i = 0; i < num_dst; ++i) {
      const int64_t lo = indptr[i], hi = indptr[i + 1];
      const float scale = hi > lo ? 1.0f / static_cast<float>(hi - lo) : 0.0f;
      const float* g = grad_out + i * f;
      for (int64_t e = lo; e < hi; ++e) {
        const float w = edge_weight(weight, e, scale);
        float* dst = grad_x + static_cast<int64_t>(indices[e]) * f;
        for (int64_t c = c0; c < c1; ++c) dst[c] += w * g[c];
      }
    }
  });
}

class CsrAggregate : public torch::autograd::Function<CsrAggregate> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& indptr,
                            const at::Tensor& indices, const std::optional<at::Tensor>& weight_in,
                            const at::Tensor& x_src) {
    const int64_t num_dst = indptr.numel() - 1, f = x_src.size(1);
    at::Tensor out = at::empty({num_dst, f}, x_src.options());
    const at::Tensor weight = weight_in.value_or(at::Tensor());  // undefined: the mean
    const float* w = weight.defined() ? weight.data_ptr<float>() : nullptr;
    dispatch_ids(indices, [&](auto* idx) {
      forward_kernel(indptr.data_ptr<int64_t>(), idx, w, x_src.data_ptr<float>(), num_dst, f,
                     out.data_ptr<float>());
    });
    ctx->save_for_backward({indptr, indices, weight});
    ctx->saved_data["num_src"] = x_src.size(0);
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& indptr = saved[0];
    const at::Tensor& indices = saved[1];
    const at::Tensor& weight = saved[2];
    const at::Tensor grad_out = grads[0].contiguous();
    const int64_t num_src = ctx->saved_data["num_src"].toInt();
    const int64_t f = grad_out.size(1);
    at::Tensor grad_x = at::zeros({num_src, f}, grad_out.options());
    const float* w = weight.defined() ? weight.data_ptr<float>() : nullptr;
    dispatch_ids(indices, [&](auto* idx) {
      backward_kernel(indptr.data_ptr<int64_t>(), idx, w, grad_out.data_ptr<float>(),
                      indptr.numel() - 1, f, grad_x.data_ptr<float>());
    });
    return {at::Tensor(), at::Tensor(), at::Tensor(), grad_x};
  }
};

}  // namespace

at::Tensor csr_aggregate(const at::Tensor& indptr, const at::Tensor& indices,
                         const at::Tensor& weight, const at::Tensor& x_src) {
  return CsrAggregate::apply(indptr, indices, std::optional<at::Tensor>(weight), x_src);
}

}  // namespace directgnn::cpu
