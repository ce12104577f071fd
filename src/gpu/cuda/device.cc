// gpu/device.h for builds against a CUDA torch: streams and events from c10, kernels from
// gpu/cuda/kernels.cu on torch's current stream.
#include "gpu/device.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/Sleep.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>

#include <map>

#include "core/cuda_check.h"
#include "directgnn/error.h"
#include "gpu/cuda/kernels.h"
#include "nn/dropout_hash.h"

namespace directgnn::gpu {
namespace {

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

void check_frontier(const at::Tensor& frontier) {
  DGNN_CHECK(frontier.is_cuda() && frontier.scalar_type() == at::kLong && frontier.is_contiguous(),
             "GPU sampler: the frontier must be contiguous int64 on the GPU");
}

}  // namespace

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

at::Tensor dropout_mask(const at::Tensor& x, uint64_t seed, double p) {
  DGNN_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat,
             "GPU dropout: x must be float32 on a GPU");
  at::Tensor mask = at::empty(x.sizes(), x.options().requires_grad(false));
  kernels::launch_dropout_mask(mask.data_ptr<float>(), mask.numel(), seed,
                               dropout_hash::threshold(p), static_cast<float>(1.0 / (1.0 - p)),
                               c10::cuda::getCurrentCUDAStream(x.get_device()));
  return mask;
}

at::Tensor pick_counts(const DeviceCsr& graph, const at::Tensor& frontier, int64_t fanout) {
  check_frontier(frontier);
  at::Tensor counts = at::empty({frontier.numel()}, frontier.options());
  kernels::launch_pick_counts(graph.indptr, frontier.data_ptr<int64_t>(), frontier.numel(), fanout,
                              counts.data_ptr<int64_t>(),
                              c10::cuda::getCurrentCUDAStream(frontier.get_device()));
  return counts;
}

void pick_neighbors(const DeviceCsr& graph, const at::Tensor& frontier, int64_t fanout,
                    uint64_t seed, uint64_t hop, const at::Tensor& offsets, at::Tensor& out) {
  check_frontier(frontier);
  DGNN_CHECK(offsets.is_cuda() && offsets.numel() == frontier.numel() + 1 && out.is_cuda() &&
                 out.scalar_type() == at::kLong,
             "GPU sampler: offsets [n + 1] and out must be int64 on the GPU");
  kernels::launch_pick_neighbors(graph.indptr, graph.indices, graph.indices_int32,
                                 frontier.data_ptr<int64_t>(), frontier.numel(), fanout, seed, hop,
                                 offsets.data_ptr<int64_t>(), out.data_ptr<int64_t>(),
                                 c10::cuda::getCurrentCUDAStream(frontier.get_device()));
}

std::string pci_bus_id(int device) {
  char id[32] = {0};
  DGNN_CUDA_CHECK(cudaDeviceGetPCIBusId(id, sizeof id, device));
  return id;
}

int64_t peak_allocated_bytes(int device) {
  const auto stats =
      c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(device));
  return stats.allocated_bytes[0].peak;  // [0]: all pools
}

void reset_peak_allocated(int device) {
  c10::cuda::CUDACachingAllocator::resetPeakStats(static_cast<c10::DeviceIndex>(device));
}

}  // namespace directgnn::gpu
