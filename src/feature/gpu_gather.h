// The GPU twin of the feature gather, as the front door (feature_store.cc) and the benchmarks
// see it. Builds whose torch has CUDA implement it in cuda/gather.cc; other builds link
// no_cuda.cc, where available() is false and every other call throws an Error saying this
// build has no CUDA and what to use instead. Callers never test for CUDA at compile time.
#pragma once

#include <ATen/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "feature/feature_store.h"

namespace directgnn::gpu {

// True when this build has CUDA and at least one device is visible.
bool available();
// Why available() is false (empty when it is true).
std::string unavailable_reason();
int device_count();
std::string device_name(int device);
// Whether `device` can map host memory registered read-only (cudaHostRegisterReadOnly); where it
// cannot, pin_host_memory registers for reading and writing.
bool read_only_registration_supported(int device);
// Free and total memory of `device`, in bytes (cudaMemGetInfo).
struct DeviceMemory {
  int64_t free = 0, total = 0;
};
DeviceMemory device_memory(int device);

// Registers [ptr, ptr + bytes) as mapped, portable pinned memory (read-only where supported
// and asked for: the GPU never writes feature tables or graphs). The returned handle unregisters on
// destruction. Pinning memory that a live handle already covers shares that registration (it ends
// with the last handle); memory someone else registered stays theirs. Throws with the size asked
// for when the driver refuses.
std::shared_ptr<void> pin_host_memory(void* ptr, size_t bytes, int device, bool read_only = true);
// The address a kernel on `device` reads pinned host memory `ptr` through.
const void* mapped_device_pointer(const void* ptr);
// The same, or nullptr when `ptr` is not in pinned, mapped host memory (or there is no GPU).
const void* pinned_device_pointer(const void* ptr);

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

// Waits for all work on `device`.
void synchronize(int device);
// Host-to-device bandwidth of cudaMemcpyAsync from a pinned buffer of `bytes`, in GB/s (the
// median of `reps` copies): the ceiling zero-copy gathers are measured against.
double pinned_copy_bandwidth(size_t bytes, int reps, int device);

}  // namespace directgnn::gpu
