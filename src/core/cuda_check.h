// Error checks for CUDA runtime calls: every call that can fail goes through DGNN_CUDA_CHECK,
// which throws directgnn::Error naming the call, the place and the runtime's message.
// DIRECTGNN_DEBUG_SYNC=1 makes launch checks synchronise, so an asynchronous fault is reported
// at the op that caused it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <cstring>

#include "directgnn/error.h"

namespace directgnn::cuda {

inline bool debug_sync_enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("DIRECTGNN_DEBUG_SYNC");
    return v != nullptr && std::strcmp(v, "0") != 0 && v[0] != '\0';
  }();
  return enabled;
}

[[noreturn]] inline void fail_cuda(cudaError_t err, const char* what, const char* file, int line) {
  fail("CUDA error in ", what, " (", file, ":", line, "): ", cudaGetErrorName(err), ": ",
       cudaGetErrorString(err));
}

// After a kernel launch: report launch errors, and with DIRECTGNN_DEBUG_SYNC=1 wait for the
// kernel so faults surface here.
inline void check_launch(cudaStream_t stream, const char* what, const char* file, int line) {
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess && debug_sync_enabled()) err = cudaStreamSynchronize(stream);
  if (err != cudaSuccess) fail_cuda(err, what, file, line);
}

}  // namespace directgnn::cuda

#define DGNN_CUDA_CHECK(expr)                                             \
  do {                                                                    \
    const cudaError_t dgnn_err_ = (expr);                                 \
    if (dgnn_err_ != cudaSuccess) {                                       \
      ::directgnn::cuda::fail_cuda(dgnn_err_, #expr, __FILE__, __LINE__); \
    }                                                                     \
  } while (0)
