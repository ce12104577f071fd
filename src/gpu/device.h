// The GPU side of training beyond the feature gather (feature/gpu_gather.h): side streams and
// the events that hand minibatches over to the training stream, the sampler's and dropout's
// kernels on tensors, and memory figures. Implemented in gpu/cuda/device.cc where torch has
// CUDA, and by gpu/no_cuda.cc (clear errors) elsewhere.
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace directgnn::gpu {

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

// Queues a kernel that spins for about `cycles` GPU clock cycles on the current stream of
// `device` (tests: delays a stream so a missing wait shows up as wrong data).
void delay_current_stream(int device, int64_t cycles);

// Makes the current stream wait for the ticket's work (no host synchronisation), and ties
// each tensor in `used` (allocated on the side stream) to the current stream, so the caching
// allocator does not hand its memory out again before the current stream is done with it.
void wait_on_current_stream(const Ticket& ticket, const std::vector<at::Tensor>& used);

// The dropout mask (0 or 1/(1-p)) for the CUDA tensor `x`: the same elements the CPU loop
// keeps for `seed` (nn/dropout_hash.h).
at::Tensor dropout_mask(const at::Tensor& x, uint64_t seed, double p);

// A CSR graph the GPU sampler reads: device pointers to pinned host memory (zero-copy) or to
// GPU memory.
struct DeviceCsr {
  const int64_t* indptr = nullptr;
  const void* indices = nullptr;
  bool indices_int32 = false;
  int device = 0;
};

// Per frontier node (int64 ids on the device), how many neighbours it keeps at `fanout`.
at::Tensor pick_counts(const DeviceCsr& graph, const at::Tensor& frontier, int64_t fanout);
// Writes each frontier node's picks (global ids) at out[offsets[i] .. offsets[i + 1]).
void pick_neighbors(const DeviceCsr& graph, const at::Tensor& frontier, int64_t fanout,
                    uint64_t seed, uint64_t hop, const at::Tensor& offsets, at::Tensor& out);

// The GPU's PCI bus id ("0000:3b:00.0"), to find it in NVML.
std::string pci_bus_id(int device);

// Peak memory the caching allocator has handed out on `device` since the last reset.
int64_t peak_allocated_bytes(int device);
void reset_peak_allocated(int device);

}  // namespace directgnn::gpu
