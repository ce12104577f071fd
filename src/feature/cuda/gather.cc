// Tensor glue of the GPU gather: takes tensors and torch's current stream and calls the
// plain-CUDA kernels in gather_kernels.cu; the staging buffers of cpu-copy are the runtime's
// (gpu/runtime.h). Built only where torch has CUDA (elsewhere no_cuda.cc stands in).
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
#include "feature/gather_plan.h"
#include "feature/gpu_gather.h"
#include "gpu/runtime.h"

namespace directgnn::gpu {
namespace {

// CPU threads gather the rows into one of the device's staging buffers, which one copy takes
// to the GPU (gpu/runtime.h).
at::Tensor gather_cpu_copy(const GatherSource& source, const at::Tensor& ids_in, int device,
                           at::Tensor out) {
  const at::Tensor ids = ids_in.device().is_cpu() ? ids_in : ids_in.cpu();
  const size_t bytes = static_cast<size_t>(ids.numel() * source.row_bytes);
  const auto* table = static_cast<const uint8_t*>(source.host_table.data_ptr());
  stage_to_device(device, bytes, out.data_ptr(), [&](void* staging) {
    auto* rows = static_cast<uint8_t*>(staging);
    if (ids.scalar_type() == at::kInt) {
      cpu::gather_rows(table, source.row_bytes, ids.data_ptr<int32_t>(), ids.numel(), rows);
    } else {
      cpu::gather_rows(table, source.row_bytes, ids.data_ptr<int64_t>(), ids.numel(), rows);
    }
  });
  return out;
}

void require_gpu(const char* what) {
  DGNN_CHECK(device_count() > 0, what, " needs a GPU, but ", unavailable_reason());
}

}  // namespace

at::Tensor gather(const GatherSource& source, const at::Tensor& ids_in, int device,
                  GatherMethod method, const GatherOptions& options) {
  const c10::Device target(c10::kCUDA, static_cast<c10::DeviceIndex>(device));
  c10::cuda::CUDAGuard guard(target);
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream(target.index()).stream();
  at::Tensor out = at::empty({ids_in.numel(), source.dim},
                             at::TensorOptions().dtype(source.dtype).device(target));
  if (method == GatherMethod::kCpuCopy) {
    return gather_cpu_copy(source, ids_in, device, out);
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
    cuda::sort_ids(ids.data_ptr(), g.ids_int64, g.count,
                   gather_plan::sort_end_bit(source.num_rows, g.ids_int64 ? 8 : 4),
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

}  // namespace directgnn::gpu
