// gpu/runtime.h for builds against a CUDA torch: devices, each device's staging buffers, side
// streams and events (from c10), and memory figures. The pin registry is pinning.cc.
#include "gpu/runtime.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/Sleep.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>

#include "core/cuda_check.h"
#include "core/resources.h"
#include "directgnn/error.h"

namespace directgnn::gpu {
namespace {

// A CUDA build still runs on machines without a GPU (or without a driver): entry points that
// are not behind a front door's own checks say so before touching CUDA.
void require_gpu(const char* what) {
  DGNN_CHECK(device_count() > 0, what, " needs a GPU, but ", unavailable_reason());
}

// One of a device's two pinned staging buffers; an event says when its last copy finished.
struct StagingBuffer {
  void* host = nullptr;
  size_t bytes = 0;
  cudaEvent_t copied = nullptr;
};

// What the runtime owns per device: the staging buffers of the CPU-gathered copies.
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
    if (b.bytes >= bytes) return b;
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

// This thread's side stream of `device` (one per thread, taken from torch's pool).
c10::cuda::CUDAStream side_stream(int device) {
  thread_local std::map<int, c10::cuda::CUDAStream> streams;
  auto it = streams.find(device);
  if (it == streams.end()) {
    it = streams
             .emplace(device, c10::cuda::getStreamFromPool(
                                  /*isHighPriority=*/false, static_cast<c10::DeviceIndex>(device)))
             .first;
  }
  return it->second;
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

int current_device() { return c10::cuda::current_device(); }

std::string device_name(int device) {
  require_gpu("naming a GPU");
  cudaDeviceProp prop{};
  DGNN_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  return prop.name;
}

std::string pci_bus_id(int device) {
  require_gpu("the GPU's PCI bus id");
  char id[32] = {0};
  DGNN_CUDA_CHECK(cudaDeviceGetPCIBusId(id, sizeof id, device));
  return id;
}

bool read_only_registration_supported(int device) {
  require_gpu("asking a GPU about read-only pinning");
  int supported = 0;
  DGNN_CUDA_CHECK(
      cudaDeviceGetAttribute(&supported, cudaDevAttrHostRegisterReadOnlySupported, device));
  return supported != 0;
}

namespace {

// Per device, the cap limit_memory set (absent: none).
std::map<int, int64_t>& memory_caps() {
  static std::map<int, int64_t> caps;
  return caps;
}
std::mutex caps_mutex;

DeviceMemory driver_memory(int device) {
  c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device));
  size_t free = 0, total = 0;
  DGNN_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return {static_cast<int64_t>(free), static_cast<int64_t>(total)};
}

}  // namespace

DeviceMemory device_memory(int device) {
  require_gpu("GPU memory figures");
  DeviceMemory m = driver_memory(device);
  std::lock_guard<std::mutex> lock(caps_mutex);
  const auto cap = memory_caps().find(device);
  if (cap == memory_caps().end()) return m;
  // Under a cap, what the allocator may still reserve.
  const auto stats =
      c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(device));
  const int64_t reserved = stats.reserved_bytes[0].current;
  m.free = std::min(m.free, std::max<int64_t>(0, cap->second - reserved));
  m.total = std::min(m.total, cap->second);
  return m;
}

void limit_memory(int device, int64_t bytes) {
  require_gpu("capping GPU memory");
  const DeviceMemory m = driver_memory(device);
  DGNN_CHECK_ARG(bytes > 0 && bytes <= m.total, "gpu_memory_gib",
                 "must be more than 0 and at "
                 "most cuda:",
                 device, "'s ", gib_text(m.total), ", got ", gib_text(bytes));
  // The fraction is the caching allocator's, which torch sets up with its CUDA side: before any
  // CUDA tensor exists it is not there yet.
  at::globalContext().lazyInitDevice(c10::DeviceType::CUDA);
  c10::cuda::CUDACachingAllocator::setMemoryFraction(
      static_cast<double>(bytes) / static_cast<double>(m.total),
      static_cast<c10::DeviceIndex>(device));
  std::lock_guard<std::mutex> lock(caps_mutex);
  memory_caps()[device] = bytes;
}

int64_t peak_allocated_bytes(int device) {
  const auto stats =
      c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(device));
  return stats.allocated_bytes[0].peak;  // [0]: all pools
}

void reset_peak_allocated(int device) {
  c10::cuda::CUDACachingAllocator::resetPeakStats(static_cast<c10::DeviceIndex>(device));
}

void synchronize(int device) {
  c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device));
  DGNN_CUDA_CHECK(cudaDeviceSynchronize());
}

void set_host_sync(HostSync sync) {
  const unsigned flag = sync == HostSync::kSpin       ? cudaDeviceScheduleSpin
                        : sync == HostSync::kYield    ? cudaDeviceScheduleYield
                        : sync == HostSync::kBlocking ? cudaDeviceScheduleBlockingSync
                                                      : cudaDeviceScheduleAuto;
  for (int d = 0; d < device_count(); ++d) {
    c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(d));
    unsigned flags = 0;
    DGNN_CUDA_CHECK(cudaGetDeviceFlags(&flags));
    if ((flags & cudaDeviceScheduleMask) == flag) continue;
    // On a device already in use the flags are overwritten: keep the two that may be set.
    DGNN_CUDA_CHECK(
        cudaSetDeviceFlags((flags & (cudaDeviceMapHost | cudaDeviceLmemResizeToMax)) | flag));
  }
}

HostSync host_sync(int device) {
  require_gpu("reading how the host waits");
  c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device));
  unsigned flags = 0;
  DGNN_CUDA_CHECK(cudaGetDeviceFlags(&flags));
  switch (flags & cudaDeviceScheduleMask) {
    case cudaDeviceScheduleSpin:
      return HostSync::kSpin;
    case cudaDeviceScheduleYield:
      return HostSync::kYield;
    case cudaDeviceScheduleBlockingSync:
      return HostSync::kBlocking;
    default:
      return HostSync::kAuto;
  }
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

void stage_to_device(int device, size_t bytes, void* device_dst,
                     const std::function<void(void* staging)>& fill) {
  if (bytes == 0) return;
  const cudaStream_t stream =
      c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(device)).stream();
  DeviceResources& res = DeviceResources::get(device);
  std::lock_guard<std::mutex> lock(res.mutex);
  StagingBuffer& buffer = res.acquire(bytes);
  fill(buffer.host);
  DGNN_CUDA_CHECK(cudaMemcpyAsync(device_dst, buffer.host, bytes, cudaMemcpyHostToDevice, stream));
  DGNN_CUDA_CHECK(cudaEventRecord(buffer.copied, stream));
}

Ticket run_on_side_stream(int device, const std::function<void()>& work) {
  c10::cuda::CUDAGuard device_guard(static_cast<c10::DeviceIndex>(device));
  const c10::cuda::CUDAStream stream = side_stream(device);
  {
    c10::cuda::CUDAStreamGuard stream_guard(stream);
    work();
  }
  auto event = std::make_shared<at::cuda::CUDAEvent>(cudaEventDisableTiming);
  event->record(stream);
  return {event, device};
}

void synchronize_current_stream(int device) {
  c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(device)).synchronize();
}

void delay_current_stream(int device, int64_t cycles) {
  c10::cuda::CUDAGuard device_guard(static_cast<c10::DeviceIndex>(device));
  at::cuda::sleep(cycles);  // on the current stream
}

void wait_on_current_stream(const Ticket& ticket, const std::vector<at::Tensor>& used) {
  DGNN_CHECK(ticket.event != nullptr, "waiting on a ticket that holds no work");
  c10::cuda::CUDAGuard device_guard(static_cast<c10::DeviceIndex>(ticket.device));
  const c10::cuda::CUDAStream current =
      c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(ticket.device));
  static_cast<at::cuda::CUDAEvent*>(ticket.event.get())->block(current);
  for (const at::Tensor& t : used) {
    if (t.defined() && t.is_cuda() && t.storage().data_ptr().get() != nullptr) {
      c10::cuda::CUDACachingAllocator::recordStream(t.storage().data_ptr(), current);
    }
  }
}

}  // namespace directgnn::gpu
