// The GPU twin of the gather in builds without CUDA (torch was built for the CPU only): asking
// for GPU work explains how to get it.
#include "directgnn/error.h"
#include "feature/gpu_gather.h"
#include "gpu/runtime.h"

namespace directgnn::gpu {
namespace {

[[noreturn]] void no_cuda_gather(const char* what) {
  fail(what, " needs a GPU, but ", unavailable_reason(),
       ". Set features to host (CPU gather), or rebuild against a CUDA build of PyTorch "
       "(see bench/gpu/run.sh)");
}

}  // namespace

at::Tensor gather(const GatherSource&, const at::Tensor&, int, GatherMethod, const GatherOptions&) {
  no_cuda_gather("gathering features onto a CUDA device");
}

}  // namespace directgnn::gpu
