// The link sampler's negatives on the GPU: sampling/negative_draw.h per thread.
#include "core/cuda_check.h"
#include "sampling/cuda/negative_kernels.h"

namespace directgnn::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void draw_negatives_kernel(negative_draw::Source source, NegativeJob job,
                                      int64_t* __restrict__ out, int* __restrict__ failed) {
  const int64_t count = job.ratio * job.batch;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t given = job.triplet ? job.positives[2 * (i / job.ratio)] : -1;
    int64_t src = 0, dst = 0;
    if (!negative_draw::draw(source, job.seed, static_cast<uint64_t>(i), given, &src, &dst) &&
        failed != nullptr) {
      *failed = 1;
    }
    if (job.triplet) {
      out[i] = dst;
    } else {
      out[2 * i] = src;
      out[2 * i + 1] = dst;
    }
  }
}

}  // namespace

void launch_draw_negatives(const negative_draw::Source& source, const NegativeJob& job,
                           int64_t* out, int* failed, cudaStream_t stream) {
  const int64_t count = job.ratio * job.batch;
  if (count == 0) return;
  const int64_t blocks = (count + kThreads - 1) / kThreads;
  draw_negatives_kernel<<<static_cast<int>(blocks < 65535 * 16 ? blocks : 65535 * 16), kThreads, 0,
                          stream>>>(source, job, out, failed);
  check_launch(stream, "draw_negatives_kernel", __FILE__, __LINE__);
}

}  // namespace directgnn::cuda
