#include "nn/linear.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/threads.h"
#include "directgnn/error.h"

namespace directgnn {
namespace {

constexpr int64_t kMinRowsPerBlock = 64;

int64_t block_count(int64_t rows) {
  return std::max<int64_t>(1, std::min<int64_t>(num_threads(), rows / kMinRowsPerBlock));
}

int64_t block_start(int64_t rows, int64_t blocks, int64_t b) { return rows * b / blocks; }

// out[rows] = a[rows] @ b, row blocks in parallel, each a single-threaded BLAS call.
// OpenMP workers do not inherit torch's thread-local grad mode, so the operands are detached.
void rows_mm(const at::Tensor& a_in, const at::Tensor& b_in, at::Tensor& out) {
  const at::Tensor a = a_in.detach(), b = b_in.detach();
  const int64_t rows = a.size(0), blocks = block_count(rows);
  at::parallel_for(0, blocks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      const int64_t lo = block_start(rows, blocks, k), hi = block_start(rows, blocks, k + 1);
      if (hi == lo) continue;
      at::Tensor slice = out.narrow(0, lo, hi - lo);
      at::mm_out(slice, a.narrow(0, lo, hi - lo), b);
    }
  });
}

class ParallelLinear : public torch::autograd::Function<ParallelLinear> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x,
                            const at::Tensor& weight, const std::optional<at::Tensor>& bias) {
    at::Tensor out = at::empty({x.size(0), weight.size(0)}, x.options());
    rows_mm(x, weight.t(), out);
    const bool has_bias = bias.has_value() && bias->defined();
    if (has_bias) out.add_(*bias);
    ctx->save_for_backward({x, weight});
    ctx->saved_data["has_bias"] = has_bias;
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor x = saved[0].detach();
    const at::Tensor weight = saved[1].detach();
    const at::Tensor grad = grads[0].detach().contiguous();
    at::Tensor grad_x, grad_w, grad_b;
    if (ctx->needs_input_grad(0)) {
      grad_x = at::empty_like(x);
      rows_mm(grad, weight, grad_x);
    }
    if (ctx->needs_input_grad(1)) {
      // dW = grad^T x, as a sum over row blocks of partial products, added in block order.
      const int64_t rows = x.size(0), blocks = block_count(rows);
      std::vector<at::Tensor> partial(blocks);
      at::parallel_for(0, blocks, 1, [&](int64_t begin, int64_t end) {
        for (int64_t k = begin; k < end; ++k) {
          const int64_t lo = block_start(rows, blocks, k), hi = block_start(rows, blocks, k + 1);
          partial[k] = at::mm(grad.narrow(0, lo, hi - lo).t(), x.narrow(0, lo, hi - lo));
        }
      });
      grad_w = partial[0];
      for (int64_t k = 1; k < blocks; ++k) grad_w.add_(partial[k]);
    }
    if (ctx->saved_data["has_bias"].toBool() && ctx->needs_input_grad(2)) grad_b = grad.sum(0);
    return {grad_x, grad_w, grad_b};
  }
};

}  // namespace

at::Tensor parallel_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  DGNN_CHECK(x.dim() == 2 && weight.dim() == 2 && x.size(1) == weight.size(1),
             "linear: x [M, K] and weight [N, K] do not match (", x.sizes(), " vs ", weight.sizes(),
             ")");
  // Off the CPU the library's own product is the right one (cuBLAS).
  if (!x.device().is_cpu()) return at::linear(x, weight, bias);
  return ParallelLinear::apply(x.contiguous(), weight, std::optional<at::Tensor>(bias));
}

at::Tensor glorot(at::IntArrayRef shape, int64_t fan_in, int64_t fan_out) {
  const double bound = std::sqrt(6.0 / static_cast<double>(std::max<int64_t>(1, fan_in + fan_out)));
  return at::empty(shape).uniform_(-bound, bound);
}

}  // namespace directgnn
