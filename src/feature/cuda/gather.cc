// Tensor glue of the GPU gather: takes tensors and torch's current stream, owns the per-device
// staging buffers of cpu-copy, pins host memory, and calls the plain-CUDA kernels in
// gather_kernels.cu. Built only where torch has CUDA (elsewhere no_cuda.cc stands in).
#include "feature/cpu/gather.h"

#include <ATen/ATen.h>
#include <ATen/core/CachingHostAllocator.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "core/cuda_check.h"
#include "feature/cuda/gather_kernels.h"
#include "feature/gpu_gather.h"

namespace directgnn::gpu {
namespace {

// cpu-copy's two pinned staging buffers for one device. While the copy out of one runs on the
// stream, the CPU fills the other; an event per buffer says when its last copy finished.
struct StagingBuffer {
  void* host = nullptr;
  size_t bytes = 0;
  cudaEvent_t copied = nullptr;
};

class DeviceResources {
 public:
  static DeviceResources& get(int device) {
    static std::mutex registry_mutex;
    // Never destroyed: at process exit the CUDA context may already be gone.
    static auto* registry = new std::vector<DeviceResources*>();
    std::lock_guard<std::mutex> lock(registry_mutex);
    if (registry->empty()) registry->resize(static_cast<size_t>(std::max(device_count(), 1)));
    DGNN_CHECK(device >= 0 && static_cast<size_t>(device) < registry->size(), "cuda:", device,
               " does not exist");
    auto*& slot = (*registry)[static_cast<size_t>(device)];
    if (slot == nullptr) slot = new DeviceResources(device);
    return *slot;
  }

  std::mutex mutex;

  // The next staging buffer, at least `bytes` large, once its previous copy has finished.
  StagingBuffer& acquire(size_t bytes) {
    StagingBuffer& b = staging_[next_];
    next_ ^= 1;
    DGNN_CUDA_CHECK(cudaEventSynchronize(b.copied));
    if (b.bytes < bytes) {
      // Grow by half again so slowly rising batch sizes do not reallocate every step.
      const size_t want = std::max(bytes, b.bytes + b.bytes / 2);
      if (b.host != nullptr) DGNN_CUDA_CHECK(cudaFreeHost(b.host));
      b.host = nullptr;
      b.bytes = 0;
      const cudaError_t err = cudaHostAlloc(&b.host, want, cudaHostAllocDefault);
      if (err != cudaSuccess) {
        cudaGetLastError();
        fail("cpu-copy gather: allocating a ", want, "-byte pinned staging buffer failed (",
             cudaGetErrorString(err), "); use smaller batches or gather aligned");
      }
      b.bytes = want;
    }
    return b;
  }

 private:
  explicit DeviceResources(int device) {
    c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device));
    for (StagingBuffer& b : staging_) {
      DGNN_CUDA_CHECK(cudaEventCreateWithFlags(&b.copied, cudaEventDisableTiming));
    }
  }

  StagingBuffer staging_[2];
  int next_ = 0;
};

int id_bits(int64_t num_rows) {
  int bits = 1;
  while (bits < 63 && (int64_t{1} << bits) < num_rows) ++bits;
  return bits;
}

at::Tensor gather_cpu_copy(const GatherSource& source, const at::Tensor& ids_in, int device,
                           cudaStream_t stream, at::Tensor out) {
  const at::Tensor ids = ids_in.device().is_cpu() ? ids_in : ids_in.cpu();
  const size_t bytes = static_cast<size_t>(ids.numel() * source.row_bytes);
  if (bytes == 0) return out;
  DeviceResources& res = DeviceResources::get(device);
  std::lock_guard<std::mutex> lock(res.mutex);
  StagingBuffer& buffer = res.acquire(bytes);
  const auto* table = static_cast<const uint8_t*>(source.host_table.data_ptr());
  auto* staging = static_cast<uint8_t*>(buffer.host);
  if (ids.scalar_type() == at::kInt) {
    cpu::gather_rows(table, source.row_bytes, ids.data_ptr<int32_t>(), ids.numel(), staging);
  } else {
    cpu::gather_rows(table, source.row_bytes, ids.data_ptr<int64_t>(), ids.numel(), staging);
  }
  DGNN_CUDA_CHECK(cudaMemcpyAsync(out.data_ptr(), staging, bytes, cudaMemcpyHostToDevice, stream));
  DGNN_CUDA_CHECK(cudaEventRecord(buffer.copied, stream));
  return out;
}

// A CUDA build still runs on machines without a GPU (or without a driver): entry points that
// are not behind the front door's own checks say so before touching CUDA.
void require_gpu(const char* what) {
  DGNN_CHECK(device_count() > 0, what, " needs a GPU, but ", unavailable_reason());
}

}  // namespace

bool available() { return device_count() > 0; }

std::string unavailable_reason() {
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return std::string("no usable CUDA device (") + cudaGetErrorString(err) + ")";
  }
  return n == 0 ? "no CUDA device is visible" : "";
}

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

std::string device_name(int device) {
  require_gpu("naming a GPU");
  cudaDeviceProp prop{};
  DGNN_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  return prop.name;
}

bool read_only_registration_supported(int device) {
  require_gpu("asking a GPU about read-only pinning");
  int supported = 0;
  DGNN_CUDA_CHECK(
      cudaDeviceGetAttribute(&supported, cudaDevAttrHostRegisterReadOnlySupported, device));
  return supported != 0;
}

DeviceMemory device_memory(int device) {
  require_gpu("GPU memory figures");
  c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device));
  size_t free = 0, total = 0;
  DGNN_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return {static_cast<int64_t>(free), static_cast<int64_t>(total)};
}

namespace {

// The registrations this process made, by start address (the driver refuses overlapping ones,
// so the entry starting at or before an address is the only one that can cover it). Pinning
// memory a live handle covers shares that handle; the last handle unregisters. An entry
// whose handles are gone but whose deleter has not yet run is unregistered by whoever meets
// it first; the `id` tells the late deleter that its work was done.
struct PinEntry {
  uintptr_t end = 0;
  uint64_t id = 0;
  std::weak_ptr<void> handle;
  bool read_only = false;  // registered with cudaHostRegisterReadOnly
};
std::mutex pin_mutex;
std::map<uintptr_t, PinEntry>& pin_entries() {
  static auto* entries = new std::map<uintptr_t, PinEntry>;  // never destroyed: deleters may
  return *entries;                                           // run during exit
}

// Kernels queued on any stream may still read the memory: they finish first.
void unregister_entry(std::map<uintptr_t, PinEntry>::iterator it) {
  if (cudaDeviceSynchronize() != cudaSuccess) cudaGetLastError();
  if (cudaHostUnregister(reinterpret_cast<void*>(it->first)) != cudaSuccess) cudaGetLastError();
  pin_entries().erase(it);
}

[[noreturn]] void fail_overlap(uintptr_t begin, uintptr_t end) {
  fail("pinning host memory: [", begin, ", ", end,
       ") overlaps a pinned range without lying inside it (pinning works on whole pages); pin "
       "the whole table once");
}

// With pin_mutex held: the live handle covering [begin, end), if any. Throws when the range
// overlaps one of ours without lying inside it, or when `writable` is asked of a read-only one.
std::shared_ptr<void> covering_pin(uintptr_t begin, uintptr_t end, bool writable) {
  auto& entries = pin_entries();
  auto next = entries.upper_bound(begin);
  if (next != entries.end() && next->first < end) {
    if (next->second.handle.expired()) {
      unregister_entry(next);
    } else {
      fail_overlap(begin, end);
    }
  }
  auto it = entries.upper_bound(begin);
  if (it == entries.begin()) return nullptr;
  --it;
  if (begin >= it->second.end) return nullptr;
  if (it->second.handle.expired()) {
    unregister_entry(it);  // its deleter is about to run; do its work now
    return nullptr;
  }
  if (end > it->second.end) fail_overlap(begin, end);
  DGNN_CHECK(!writable || !it->second.read_only, "pinning host memory for writing: [", begin, ", ",
             end, ") lies in a read-only registration (a feature table's); release that first");
  return it->second.handle.lock();
}

}  // namespace

std::shared_ptr<void> pin_host_memory(void* ptr, size_t bytes, int device, bool read_only) {
  require_gpu("pinning host memory for a GPU");
  const auto begin = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(pin_mutex);
  if (std::shared_ptr<void> live = covering_pin(begin, begin + bytes, !read_only)) {
    return std::shared_ptr<void>(live, ptr);
  }
  c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device));
  // Read-only for feature tables: the GPU never writes them, and a private file mapping
  // registered for writing would be copied page by page (copy-on-write) into anonymous
  // memory. Portable: mapped for every GPU of the process, not only `device`.
  const bool as_read_only = read_only && read_only_registration_supported(device);
  const unsigned flags = cudaHostRegisterMapped | cudaHostRegisterPortable |
                         (as_read_only ? cudaHostRegisterReadOnly : 0u);
  const cudaError_t err = cudaHostRegister(ptr, bytes, flags);
  if (err == cudaErrorHostMemoryAlreadyRegistered) {
    cudaGetLastError();
    // Registered by someone else (cudaHostAlloc, torch's pin_memory): stays theirs, provided
    // it covers the whole range; a page shared with another registration does not.
    if (pinned_device_pointer(ptr) == nullptr ||
        pinned_device_pointer(static_cast<const char*>(ptr) + bytes - 1) == nullptr) {
      fail_overlap(begin, begin + bytes);
    }
    return std::shared_ptr<void>(ptr, [](void*) {});
  }
  if (err != cudaSuccess) {
    cudaGetLastError();
    fail("pinning ", bytes, " bytes (", static_cast<double>(bytes) / (1 << 30),
         " GiB) of host memory with cudaHostRegister failed: ", cudaGetErrorString(err),
         ". Pinned memory must fit in physical RAM and under the locked-memory limit: raise "
         "`ulimit -l` (e.g. `ulimit -l unlimited`, or memlock in /etc/security/limits.conf), "
         "or keep the table in plain host memory (features host; in Python a CPU tensor "
         "gathered with method=\"cpu-copy\")");
  }
  static uint64_t next_id = 0;
  const uint64_t id = ++next_id;
  std::shared_ptr<void> handle(ptr, [begin, id](void*) {
    std::lock_guard<std::mutex> lock(pin_mutex);
    auto it = pin_entries().find(begin);
    if (it != pin_entries().end() && it->second.id == id) unregister_entry(it);
  });
  pin_entries()[begin] = PinEntry{begin + bytes, id, handle, as_read_only};
  return handle;
}

const void* mapped_device_pointer(const void* ptr) {
  void* device_ptr = nullptr;
  DGNN_CUDA_CHECK(cudaHostGetDevicePointer(&device_ptr, const_cast<void*>(ptr), 0));
  return device_ptr;
}

const void* pinned_device_pointer(const void* ptr) {
  if (!available()) return nullptr;
  void* device_ptr = nullptr;
  if (cudaHostGetDevicePointer(&device_ptr, const_cast<void*>(ptr), 0) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return device_ptr;
}

at::Tensor gather(const GatherSource& source, const at::Tensor& ids_in, int device,
                  GatherMethod method, const GatherOptions& options) {
  const c10::Device target(c10::kCUDA, static_cast<c10::DeviceIndex>(device));
  c10::cuda::CUDAGuard guard(target);
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream(target.index()).stream();
  at::Tensor out = at::empty({ids_in.numel(), source.dim},
                             at::TensorOptions().dtype(source.dtype).device(target));
  if (method == GatherMethod::kCpuCopy) {
    return gather_cpu_copy(source, ids_in, device, stream, out);
  }
  if (ids_in.numel() == 0 || source.row_bytes == 0) return out;
  const at::Tensor ids = ids_in.to(target, /*non_blocking=*/true).contiguous();
  cuda::RowGather g;
  g.table = source.rows;
  g.row_bytes = source.row_bytes;
  g.ids = ids.data_ptr();
  g.ids_int64 = ids.scalar_type() == at::kLong;
  g.count = ids.numel();
  g.out = out.data_ptr();
  g.max_threads = options.max_threads;
  at::Tensor sorted, positions;
  if (options.sort_ids) {
    const auto id_options = at::TensorOptions().device(target);
    sorted = at::empty_like(ids);
    positions = at::empty({g.count}, id_options.dtype(at::kLong));
    at::Tensor scratch = at::empty({g.count}, id_options.dtype(at::kLong));
    const size_t ws_bytes = cuda::sort_ids_workspace_bytes(g.count, g.ids_int64);
    at::Tensor workspace = at::empty({static_cast<int64_t>(std::max<size_t>(ws_bytes, 1))},
                                     id_options.dtype(at::kByte));
    cuda::sort_ids(ids.data_ptr(), g.ids_int64, g.count, id_bits(source.num_rows),
                   sorted.data_ptr(), scratch.data_ptr<int64_t>(), positions.data_ptr<int64_t>(),
                   workspace.data_ptr(), ws_bytes, stream);
    g.ids = sorted.data_ptr();
    g.out_rows = positions.data_ptr<int64_t>();
  }
  if (method == GatherMethod::kAligned) {
    cuda::launch_aligned_gather(g, stream);
  } else {
    cuda::launch_naive_gather(g, static_cast<int>(c10::elementSize(source.dtype)), stream);
  }
  // A table in torch's pinned memory (pin_memory()) goes back to torch's host allocator when
  // its tensor is freed: the allocator must not hand it out again before this kernel has read
  // it. (Memory the allocator does not own is left alone by record_event.)
  if (source.placement == Placement::kPinned && source.host_table.defined()) {
    const c10::DataPtr& data = source.host_table.storage().data_ptr();
    at::getHostAllocator(at::kCUDA)->record_event(data.get(), data.get_context(),
                                                  at::cuda::getCurrentCUDAStream(target.index()));
  }
  return out;
}

void synchronize(int device) {
  c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device));
  DGNN_CUDA_CHECK(cudaDeviceSynchronize());
}

double pinned_copy_bandwidth(size_t bytes, int reps, int device) {
  require_gpu("timing pinned copies");
  c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device));
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream(device).stream();
  at::Tensor host = at::empty({static_cast<int64_t>(bytes)},
                              at::TensorOptions().dtype(at::kByte).pinned_memory(true));
  host.fill_(1);
  at::Tensor dev = at::empty({static_cast<int64_t>(bytes)},
                             at::TensorOptions().dtype(at::kByte).device(c10::kCUDA, device));
  std::vector<double> seconds;
  for (int r = -2; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    DGNN_CUDA_CHECK(
        cudaMemcpyAsync(dev.data_ptr(), host.data_ptr(), bytes, cudaMemcpyHostToDevice, stream));
    DGNN_CUDA_CHECK(cudaStreamSynchronize(stream));
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r >= 0) seconds.push_back(s);
  }
  std::sort(seconds.begin(), seconds.end());
  return static_cast<double>(bytes) / seconds[seconds.size() / 2] / 1e9;
}

}  // namespace directgnn::gpu
