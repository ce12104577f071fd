// The GPU twin in builds without CUDA (torch was built for the CPU only): nothing is
// available, and asking for GPU work explains how to get it.
#include "directgnn/error.h"
#include "feature/gpu_gather.h"

namespace directgnn::gpu {
namespace {

[[noreturn]] void no_cuda(const char* what) {
  fail(what, " needs a GPU, but ", unavailable_reason(),
       ". Set features to host (CPU gather), or rebuild against a CUDA build of PyTorch "
       "(see bench/gpu/run.sh)");
}

}  // namespace

bool available() { return false; }

std::string unavailable_reason() {
  return "this build of directgnn has no CUDA support (built with DIRECTGNN_CUDA=OFF, or "
         "against a CPU-only torch)";
}

int device_count() { return 0; }

std::string device_name(int) { no_cuda("naming a device"); }
bool read_only_registration_supported(int) { no_cuda("asking about read-only pinning"); }
DeviceMemory device_memory(int) { no_cuda("reading device memory"); }

std::shared_ptr<void> pin_host_memory(void*, size_t, int, bool) {
  no_cuda("pinned placement (cudaHostRegister)");
}

const void* mapped_device_pointer(const void*) { no_cuda("pinned placement"); }

const void* pinned_device_pointer(const void*) { return nullptr; }

at::Tensor gather(const GatherSource&, const at::Tensor&, int, GatherMethod, const GatherOptions&) {
  no_cuda("gathering features onto a CUDA device");
}

void synchronize(int) { no_cuda("synchronising a device"); }

double pinned_copy_bandwidth(size_t, int, int) { no_cuda("measuring pinned copy bandwidth"); }

}  // namespace directgnn::gpu
