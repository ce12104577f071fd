#include "nn/cpu/attention.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>

#include "nn/cpu/csr_kernel_util.h"

namespace directgnn::cpu {
namespace {

// The shape of an aggregation: rows of h_src are `heads` blocks of `channels` floats.
struct Shape {
  int64_t num_dst, heads, channels;
  int64_t width() const { return heads * channels; }
};

template <typename Id>
void forward_kernel(const int64_t* indptr, const Id* indices, const float* alpha, const float* h,
                    Shape s, float* out) {
  const int64_t f = s.width(), c_len = s.channels;
  at::parallel_for(0, s.num_dst, 64, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      float* row = out + i * f;
      std::fill(row, row + f, 0.0f);
      for (int64_t e = indptr[i]; e < indptr[i + 1]; ++e) {
        const float* src = h + static_cast<int64_t>(indices[e]) * f;
        const float* a = alpha + e * s.heads;
        for (int64_t k = 0; k < s.heads; ++k) {
          const float w = a[k];
          float* r = row + k * c_len;
          const float* x = src + k * c_len;
          for (int64_t c = 0; c < c_len; ++c) r[c] += w * x[c];
        }
      }
    }
  });
}

// grad_alpha[e, k] = <grad_out[i, k, :], h_src[j, k, :]>: one writer per edge.
template <typename Id>
void alpha_grad_kernel(const int64_t* indptr, const Id* indices, const float* grad_out,
                       const float* h, Shape s, float* grad_alpha) {
  const int64_t f = s.width(), c_len = s.channels;
  at::parallel_for(0, s.num_dst, 64, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float* g = grad_out + i * f;
      for (int64_t e = indptr[i]; e < indptr[i + 1]; ++e) {
        const float* src = h + static_cast<int64_t>(indices[e]) * f;
        for (int64_t k = 0; k < s.heads; ++k) {
          float dot = 0.0f;
          for (int64_t c = k * c_len; c < (k + 1) * c_len; ++c) dot += g[c] * src[c];
          grad_alpha[e * s.heads + k] = dot;
        }
      }
    }
  });
}

// grad_h[j] += alpha[e, k] * grad_out[i] per head. Threads own disjoint column ranges (whole
// cache lines), so every sum runs in edge order whatever the thread count, without atomics.
template <typename Id>
void source_grad_kernel(const int64_t* indptr, const Id* indices, const float* alpha,
                        const float* grad_out, Shape s, float* grad_h) {
  const int64_t f = s.width(), c_len = s.channels;
  for_each_column_share(f, [&](int64_t c0, int64_t c1) {
    const int64_t k0 = c0 / c_len, k1 = (c1 - 1) / c_len;  // the heads these columns cross
    for (int64_t i = 0; i < s.num_dst; ++i) {
      const float* g = grad_out + i * f;
      for (int64_t e = indptr[i]; e < indptr[i + 1]; ++e) {
        float* dst = grad_h + static_cast<int64_t>(indices[e]) * f;
        for (int64_t k = k0; k <= k1; ++k) {
          const float w = alpha[e * s.heads + k];
          const int64_t lo = std::max(c0, k * c_len), hi = std::min(c1, (k + 1) * c_len);
          for (int64_t c = lo; c < hi; ++c) dst[c] += w * g[c];
        }
      }
    }
  });
}

class MultiHeadAggregate : public torch::autograd::Function<MultiHeadAggregate> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& indptr,
                            const at::Tensor& indices, const at::Tensor& alpha,
                            const at::Tensor& h_src) {
    const Shape s{indptr.numel() - 1, alpha.size(1), h_src.size(1) / alpha.size(1)};
    at::Tensor out = at::empty({s.num_dst, s.width()}, h_src.options());
    dispatch_ids(indices, [&](auto* idx) {
      forward_kernel(indptr.data_ptr<int64_t>(), idx, alpha.data_ptr<float>(),
                     h_src.data_ptr<float>(), s, out.data_ptr<float>());
    });
    ctx->save_for_backward({indptr, indices, alpha, h_src});
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &indptr = saved[0], &indices = saved[1];
    const at::Tensor alpha = saved[2].detach(), h_src = saved[3].detach();
    const at::Tensor grad_out = grads[0].detach().contiguous();
    const Shape s{indptr.numel() - 1, alpha.size(1), h_src.size(1) / alpha.size(1)};
    at::Tensor grad_alpha, grad_h;
    if (ctx->needs_input_grad(2)) {
      grad_alpha = at::empty_like(alpha);
      dispatch_ids(indices, [&](auto* idx) {
        alpha_grad_kernel(indptr.data_ptr<int64_t>(), idx, grad_out.data_ptr<float>(),
                          h_src.data_ptr<float>(), s, grad_alpha.data_ptr<float>());
      });
    }
    if (ctx->needs_input_grad(3)) {
      grad_h = at::zeros_like(h_src);
      dispatch_ids(indices, [&](auto* idx) {
        source_grad_kernel(indptr.data_ptr<int64_t>(), idx, alpha.data_ptr<float>(),
                           grad_out.data_ptr<float>(), s, grad_h.data_ptr<float>());
      });
    }
    return {at::Tensor(), at::Tensor(), grad_alpha, grad_h};
  }
};

}  // namespace

at::Tensor multi_head_aggregate(const at::Tensor& indptr, const at::Tensor& indices,
                                const at::Tensor& alpha, const at::Tensor& h_src) {
  return MultiHeadAggregate::apply(indptr, indices, alpha, h_src);
}

}  // namespace directgnn::cpu
