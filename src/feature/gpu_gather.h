// The GPU twin of the feature gather, as the front door (feature_store.cc) and the benchmarks
// see it. Builds whose torch has CUDA implement it in cuda/gather.cc; other builds link
// no_cuda.cc, where every call throws an Error saying this build has no CUDA and what to use
// instead. Callers never test for CUDA at compile time. Devices and pinning: gpu/runtime.h.
#pragma once

#include <ATen/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "feature/feature_store.h"

namespace directgnn::gpu {

// What a GPU gather reads from. `host_table` is the CPU table (cpu-copy reads it); `rows`
// is the device-accessible address of row 0 for zero-copy and aligned.
struct GatherSource {
  at::Tensor host_table;
  const void* rows = nullptr;
  Placement placement = Placement::kHost;
  int64_t num_rows = 0;
  int64_t dim = 0;
  int64_t row_bytes = 0;
  at::ScalarType dtype = at::kFloat;
};

// Ids are already range-checked. Returns [len(ids), dim] on cuda:`device`, queued on torch's
// current stream. `method` is resolved (never kAuto) and valid for the placement.
at::Tensor gather(const GatherSource& source, const at::Tensor& ids, int device,
                  GatherMethod method, const GatherOptions& options);

}  // namespace directgnn::gpu
