// gpu/runtime.h in builds without a CUDA torch: no GPU is available, and every call that needs
// one explains why it cannot run.
#include "directgnn/error.h"
#include "gpu/runtime.h"

namespace directgnn::gpu {
namespace {

[[noreturn]] void no_cuda(const char* what) {
  fail(what, " needs a GPU, but ", unavailable_reason(),
       "; use device cpu, or build against a CUDA torch (docs/gather.md)");
}

}  // namespace

bool available() { return false; }

std::string unavailable_reason() {
  return "this build of directgnn has no CUDA support (built with DIRECTGNN_CUDA=OFF, or "
         "against a CPU-only torch)";
}

int device_count() { return 0; }
int current_device() { no_cuda("naming the current device"); }
std::string device_name(int) { no_cuda("naming a device"); }
std::string pci_bus_id(int) { return ""; }
bool read_only_registration_supported(int) { no_cuda("asking about read-only pinning"); }
DeviceMemory device_memory(int) { no_cuda("reading device memory"); }
void limit_memory(int, int64_t) { no_cuda("capping GPU memory"); }
int64_t peak_allocated_bytes(int) { return 0; }
void reset_peak_allocated(int) {}
void synchronize(int) { no_cuda("synchronising a device"); }
void set_host_sync(HostSync) {}  // nothing waits for a GPU here
HostSync host_sync(int) { no_cuda("reading how the host waits"); }
double pinned_copy_bandwidth(size_t, int, int) { no_cuda("measuring pinned copy bandwidth"); }

std::shared_ptr<void> pin_host_memory(void*, size_t, int, bool) {
  no_cuda("pinned placement (cudaHostRegister)");
}
void pin_counted(void*, size_t bytes, bool, std::shared_ptr<const void>) {
  if (bytes > 0) no_cuda("pinning host memory");
}
void unpin_counted(const void*, size_t bytes) {
  if (bytes > 0) no_cuda("unpinning host memory");
}
const void* mapped_device_pointer(const void*) { no_cuda("pinned placement"); }
const void* pinned_device_pointer(const void*) { return nullptr; }

void stage_to_device(int, size_t, void*, const std::function<void(void*)>&) {
  no_cuda("copying to a GPU");
}

Ticket run_on_side_stream(int, const std::function<void()>&) { no_cuda("a side stream"); }
void synchronize_current_stream(int) { no_cuda("a stream"); }
void wait_on_current_stream(const Ticket&, const std::vector<at::Tensor>&) {
  no_cuda("waiting on a stream");
}
void delay_current_stream(int, int64_t) { no_cuda("a stream"); }

}  // namespace directgnn::gpu
