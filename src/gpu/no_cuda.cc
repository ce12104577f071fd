// gpu/device.h in builds without a CUDA torch: every call explains why it cannot run.
#include "directgnn/error.h"
#include "gpu/device.h"

namespace directgnn::gpu {
namespace {

[[noreturn]] void no_cuda(const char* what) {
  fail(what,
       " needs a GPU, but this build of directgnn has no CUDA (DIRECTGNN_CUDA=OFF, or a "
       "CPU-only torch); "
       "use device cpu, or build against a CUDA torch (docs/gather.md)");
}

}  // namespace

Ticket run_on_side_stream(int, const std::function<void()>&) { no_cuda("a side stream"); }
void wait_on_current_stream(const Ticket&, const std::vector<at::Tensor>&) {
  no_cuda("waiting on a stream");
}
void synchronize_current_stream(int) { no_cuda("a stream"); }
void delay_current_stream(int, int64_t) { no_cuda("a stream"); }
at::Tensor dropout_mask(const at::Tensor&, uint64_t, double) { no_cuda("GPU dropout"); }
at::Tensor pick_counts(const DeviceCsr&, const at::Tensor&, int64_t) {
  no_cuda("GPU neighbour sampling");
}
void pick_neighbors(const DeviceCsr&, const at::Tensor&, int64_t, uint64_t, uint64_t,
                    const at::Tensor&, at::Tensor&) {
  no_cuda("GPU neighbour sampling");
}
std::string pci_bus_id(int) { return ""; }
int64_t peak_allocated_bytes(int) { return 0; }
void reset_peak_allocated(int) {}

}  // namespace directgnn::gpu
