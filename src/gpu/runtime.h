// The GPU runtime every GPU path of directgnn shares (as faiss's GpuResources): whether a GPU is
// usable and what it is, the one registry of pinned host memory, the side streams that prepare
// minibatches and the events that hand them to the training stream, each device's pinned staging
// buffers, and memory figures. Implemented in gpu/cuda/ where torch has CUDA; gpu/no_cuda.cc
// stands in elsewhere, where available() is false and every other call throws saying this build
// has no CUDA. Callers never test for CUDA at compile time.
#pragma once

#include <ATen/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace directgnn::gpu {

// --- devices ---------------------------------------------------------------------------------

// True when this build has CUDA and at least one device is visible.
bool available();
// Why available() is false (empty when it is true).
std::string unavailable_reason();
int device_count();
// The calling thread's current device (torch.cuda.current_device(): what torch.cuda.set_device
// chose, 0 by default): where a GPU named without an index is, as torch places "cuda".
int current_device();
std::string device_name(int device);
// The GPU's PCI bus id ("0000:3b:00.0"), to find it in NVML.
std::string pci_bus_id(int device);
// Whether `device` can map host memory registered read-only (cudaHostRegisterReadOnly); where
// it cannot, pin_host_memory registers for reading and writing.
bool read_only_registration_supported(int device);
struct DeviceMemory {
  int64_t free = 0, total = 0;
};
// Free and total memory of `device`, in bytes (cudaMemGetInfo); under limit_memory's cap, what
// the cap leaves (the cap less what torch's allocator holds) and the cap.
DeviceMemory device_memory(int device);
// Caps what torch's caching allocator may hold on `device` at `bytes` (its memory fraction, as
// torch.cuda.set_per_process_memory_fraction): an allocation beyond it fails as out of memory,
// and device_memory reports the cap. Throws naming gpu_memory_gib for a cap of 0 or beyond the
// device's memory.
void limit_memory(int device, int64_t bytes);
// Peak memory the caching allocator has handed out on `device` since the last reset.
int64_t peak_allocated_bytes(int device);
void reset_peak_allocated(int device);
// Waits for all work on `device`.
void synchronize(int device);
// How host threads wait for a GPU (the scheduling flag of cudaSetDeviceFlags). kAuto is CUDA's
// heuristic, which spins while the process has fewer CUDA contexts than cores, so CPU time
// measured across a wait includes the spinning; kBlocking sleeps on an OS primitive, so what
// is measured is the host's own work (at some microseconds of wake-up per wait).
enum class HostSync { kAuto, kSpin, kYield, kBlocking };
HostSync parse_host_sync(const std::string& name);  // auto, spin, yield or blocking
std::string host_sync_name(HostSync sync);
// Sets how host threads wait for every visible device from now on (where no GPU is visible,
// nothing waits and nothing is set).
void set_host_sync(HostSync sync);
// The flag `device` reports (cudaGetDeviceFlags): what set_host_sync asked for, read back.
HostSync host_sync(int device);
// Host-to-device bandwidth of cudaMemcpyAsync from a pinned buffer of `bytes`, in GB/s (the
// median of `reps` copies): the ceiling zero-copy reads are measured against.
double pinned_copy_bandwidth(size_t bytes, int reps, int device);

// --- pinned host memory: one registry ----------------------------------------------------------

// Registers [ptr, ptr + bytes) as mapped, portable pinned memory (read-only where supported and
// asked for: the GPU never writes feature tables or graphs). The returned handle unregisters on
// destruction. Pinning memory that a live handle already covers shares that registration (it
// ends with the last handle); asking to write memory registered read-only is refused. Memory
// someone else registered (torch's pin_memory, cudaHostAlloc) stays theirs. Throws with the size
// asked for when the driver refuses.
std::shared_ptr<void> pin_host_memory(void* ptr, size_t bytes, int device, bool read_only = true);
// Counted pins made by callers that cannot hold a handle (Python's pin_/unpin_): each pin of
// [ptr, ptr + bytes) needs one unpin of the same range; `owner` (a tensor's storage, say) is kept
// alive while pinned, so the memory is never freed under its registration. Asking to write a
// range counted read-only is refused until it is unpinned.
void pin_counted(void* ptr, size_t bytes, bool read_only, std::shared_ptr<const void> owner);
void unpin_counted(const void* ptr, size_t bytes);
// The address a kernel on `device` reads pinned host memory `ptr` through.
const void* mapped_device_pointer(const void* ptr);
// The same, or nullptr when `ptr` is not in pinned, mapped host memory (or there is no GPU).
const void* pinned_device_pointer(const void* ptr);

// --- staging buffers ------------------------------------------------------------------------

// Copies `bytes` to `device_dst` on cuda:`device` through one of that device's two pinned
// staging buffers: waits until the buffer's last copy has finished, lets `fill` write the bytes
// into it on this thread, then queues one cudaMemcpyAsync on torch's current stream. The two
// buffers alternate, so the CPU fills one while the other is copied; they grow as needed.
void stage_to_device(int device, size_t bytes, void* device_dst,
                     const std::function<void(void* staging)>& fill);

// --- streams ---------------------------------------------------------------------------------

// Work done on a side stream, and the event that marks its end.
struct Ticket {
  std::shared_ptr<void> event;
  int device = -1;
};

// Runs `work` with the calling thread's side stream of `device` as the current stream, and
// records an event after it. Each thread has its own side stream.
Ticket run_on_side_stream(int device, const std::function<void()>& work);
// Waits on the host until the current stream of `device` has finished its work (only that
// stream: training on another stream goes on).
void synchronize_current_stream(int device);
// Makes the current stream wait for the ticket's work (no host synchronisation), and ties
// each tensor in `used` (allocated on the side stream) to the current stream, so the caching
// allocator does not hand its memory out again before the current stream is done with it.
void wait_on_current_stream(const Ticket& ticket, const std::vector<at::Tensor>& used);
// Queues a kernel that spins for about `cycles` GPU clock cycles on the current stream of
// `device` (tests: delays a stream so a missing wait shows up as wrong data).
void delay_current_stream(int device, int64_t cycles);

}  // namespace directgnn::gpu
