// The one registry of pinned host memory (gpu/runtime.h): registrations by handle, shared by
// everything that pins the same memory, and the counted pins of Python's pin_/unpin_.
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>

#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "core/cuda_check.h"
#include "directgnn/error.h"
#include "gpu/runtime.h"

namespace directgnn::gpu {
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

// A counted pin: the handle, what keeps the memory alive, and how many pins are outstanding.
struct CountedPin {
  std::shared_ptr<void> handle;
  std::shared_ptr<const void> owner;
  int64_t count = 0;
  bool read_only = true;
};

std::mutex pin_mutex;  // guards both maps
std::map<uintptr_t, PinEntry>& pin_entries() {
  static auto* entries = new std::map<uintptr_t, PinEntry>;  // never destroyed: deleters may
  return *entries;                                           // run during exit
}
std::map<std::pair<uintptr_t, size_t>, CountedPin>& counted_pins() {
  static auto* pins = new std::map<std::pair<uintptr_t, size_t>, CountedPin>;
  return *pins;
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
  DGNN_CHECK_ARG(!writable || !it->second.read_only, "read_only", "[", begin, ", ", end,
                 ") lies in a read-only registration (a feature table's); release that first");
  return it->second.handle.lock();
}

// With pin_mutex held: registers [ptr, ptr + bytes) anew, or takes over memory someone else
// registered.
std::shared_ptr<void> register_range(void* ptr, size_t bytes, int device, bool read_only) {
  const auto begin = reinterpret_cast<uintptr_t>(ptr);
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

// With pin_mutex held.
std::shared_ptr<void> pin_locked(void* ptr, size_t bytes, int device, bool read_only) {
  DGNN_CHECK(available(), "pinning host memory for a GPU needs a GPU, but ", unavailable_reason());
  const auto begin = reinterpret_cast<uintptr_t>(ptr);
  if (std::shared_ptr<void> live = covering_pin(begin, begin + bytes, !read_only)) {
    return std::shared_ptr<void>(live, ptr);
  }
  return register_range(ptr, bytes, device, read_only);
}

}  // namespace

std::shared_ptr<void> pin_host_memory(void* ptr, size_t bytes, int device, bool read_only) {
  std::lock_guard<std::mutex> lock(pin_mutex);
  return pin_locked(ptr, bytes, device, read_only);
}

void pin_counted(void* ptr, size_t bytes, bool read_only, std::shared_ptr<const void> owner) {
  if (bytes == 0) return;
  std::lock_guard<std::mutex> lock(pin_mutex);
  const auto key = std::make_pair(reinterpret_cast<uintptr_t>(ptr), bytes);
  auto it = counted_pins().find(key);
  if (it == counted_pins().end()) {
    CountedPin pin{pin_locked(ptr, bytes, 0, read_only), std::move(owner), 0, read_only};
    it = counted_pins().emplace(key, std::move(pin)).first;
  }
  DGNN_CHECK_ARG(read_only || !it->second.read_only, "read_only",
                 "this memory is already pinned read-only; unpin it as often as it was pinned, "
                 "then pin it with read_only=False");
  ++it->second.count;
}

void unpin_counted(const void* ptr, size_t bytes) {
  if (bytes == 0) return;
  std::shared_ptr<void> last;  // released after the lock: its deleter takes it
  {
    std::lock_guard<std::mutex> lock(pin_mutex);
    const auto it = counted_pins().find(std::make_pair(reinterpret_cast<uintptr_t>(ptr), bytes));
    DGNN_CHECK_ARG(it != counted_pins().end(), "self", "this memory was not pinned by pin_");
    if (--it->second.count > 0) return;
    last = std::move(it->second.handle);
    counted_pins().erase(it);
  }
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

}  // namespace directgnn::gpu
