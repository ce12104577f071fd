// The torch operators of directgnn (TORCH_LIBRARY(directgnn)): torch.ops.directgnn.gather,
// gather.out, pin_, unpin_, is_pinned, configure_allocator, sample_neighbors and the dataset
// readers. Strings from Python are parsed
// here, once; the library below takes typed options. No pybind11 and no libpython: Python
// loads this library with torch.ops.load_library, and the shapes of `gather` for
// torch.compile come from the package's fake kernel (directgnn/_ops.py).
#include "ops.h"

#include <ATen/ATen.h>
#include <torch/library.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "core/threads.h"
#include "directgnn/error.h"
#include "errors.h"
#include "feature/feature_store.h"
#include "gpu/placement.h"
#include "gpu/runtime.h"

namespace directgnn::ops {
namespace {

int gpu_of(const at::Tensor& table, const at::Tensor& ids) {
  if (ids.is_cuda()) return ids.device().index();
  if (table.is_cuda()) return table.device().index();
  return 0;
}

void check_out(const at::Tensor& out, const at::Tensor& result) {
  DGNN_CHECK_TYPE(out.scalar_type() == result.scalar_type() && out.device() == result.device(),
                  "directgnn.gather: out is ", out.scalar_type(), " on ", out.device().str(),
                  "; it must be ", result.scalar_type(), " on ", result.device().str(),
                  " (the table's dtype, on the ids' device)");
}

}  // namespace

GatherOptions gather_options_arg(const std::string& method, bool sort_ids, int64_t max_threads) {
  DGNN_CHECK_ARG(max_threads >= 0, "max_threads", "must be >= 0 (0 = no cap), got ", max_threads);
  GatherOptions options;
  options.method = parse_gather_method(method);
  options.sort_ids = sort_ids;
  options.max_threads = max_threads;
  return options;
}

at::Tensor gather(const at::Tensor& table, const at::Tensor& ids, const std::string& method,
                  bool sort_ids, int64_t max_threads) {
  DGNN_CHECK_ARG(table.dim() == 2, "table", "must be 2-D [rows, features], got ", table.dim(),
                 " dimension(s)");
  const GatherOptions options = gather_options_arg(method, sort_ids, max_threads);
  const FeatureStore store = FeatureStore::as_is(table, gpu_of(table, ids), ids.is_cuda());
  return store.gather(ids, ids.device(), options);
}

at::Tensor& gather_out(const at::Tensor& table, const at::Tensor& ids, const std::string& method,
                       bool sort_ids, int64_t max_threads, at::Tensor& out) {
  const GatherOptions options = gather_options_arg(method, sort_ids, max_threads);
  const bool in_place = table.is_cpu() && ids.is_cpu() && out.is_cpu() && out.is_contiguous() &&
                        out.dim() == 2 && out.size(0) == ids.numel() && table.dim() == 2 &&
                        out.size(1) == table.size(1) && out.scalar_type() == table.scalar_type() &&
                        options.method != GatherMethod::kZeroCopy &&
                        options.method != GatherMethod::kAligned;
  if (in_place) {
    FeatureStore::as_is(table, 0, false).gather_into(ids, out);
    return out;
  }
  const at::Tensor result = gather(table, ids, method, sort_ids, max_threads);
  check_out(out, result);
  if (out.sizes() != result.sizes()) {
    DGNN_CHECK_ARG(out.numel() == 0, "out", "has shape ", out.sizes(), " but the rows need ",
                   result.sizes(), "; pass an empty tensor to be resized");
    out.resize_(result.sizes());
  }
  out.copy_(result);
  return out;
}

void pin(const at::Tensor& tensor, bool read_only) {
  DGNN_CHECK_TYPE(tensor.is_cpu(), "directgnn.pin_: the tensor is on ", tensor.device().str(),
                  "; only CPU memory is pinned");
  DGNN_CHECK_ARG(tensor.is_contiguous(), "self",
                 "the tensor is not contiguous; pinning works on its own memory in "
                 "place, so pass a contiguous tensor (or .contiguous(), which copies)");
  const int64_t bytes = tensor.numel() * tensor.element_size();
  if (bytes == 0) return;
  gpu::check_pinnable(bytes, "self", "the tensor",
                      "keep it unpinned (CPU ids gather it on the CPU; CUDA ids use the "
                      "cpu-copy method)");
  // Read-only unless asked: a writable registration of a private file mapping (np.load's
  // mmap_mode="c", torch.from_file) copies the whole file into anonymous memory. The tensor's
  // storage stays alive while pinned, so its pages are never freed under the registration.
  gpu::pin_counted(tensor.data_ptr(), static_cast<size_t>(bytes), read_only,
                   std::make_shared<c10::Storage>(tensor.storage()));
}

void unpin(const at::Tensor& tensor) {
  gpu::unpin_counted(tensor.data_ptr(),
                     static_cast<size_t>(tensor.numel() * tensor.element_size()));
}

bool is_pinned(const at::Tensor& tensor) {
  return tensor.is_cpu() && tensor.numel() > 0 &&
         gpu::pinned_device_pointer(tensor.data_ptr()) != nullptr;
}

}  // namespace directgnn::ops

namespace {

// torch passes strings as c10::string_view; the library takes std::string.
at::Tensor gather_op(const at::Tensor& table, const at::Tensor& ids, c10::string_view method,
                     bool sort_ids, int64_t max_threads) {
  return directgnn::ops::gather(table, ids, std::string(method), sort_ids, max_threads);
}

at::Tensor& gather_out_op(const at::Tensor& table, const at::Tensor& ids, c10::string_view method,
                          bool sort_ids, int64_t max_threads, at::Tensor& out) {
  return directgnn::ops::gather_out(table, ids, std::string(method), sort_ids, max_threads, out);
}

}  // namespace

TORCH_LIBRARY(directgnn, m) {
  m.def(
      "gather(Tensor table, Tensor ids, *, str method=\"auto\", bool sort_ids=False, "
      "int max_threads=0) -> Tensor");
  m.def(
      "gather.out(Tensor table, Tensor ids, *, str method=\"auto\", bool sort_ids=False, "
      "int max_threads=0, Tensor(a!) out) -> Tensor(a!)");
  m.def("pin_(Tensor self, bool read_only=True) -> ()");
  m.def("unpin_(Tensor self) -> ()");
  m.def("is_pinned(Tensor self) -> bool");
  m.def("configure_allocator() -> ()", [] { directgnn::configure_allocator(); });
  directgnn::ops::define_gather_many(m);
  directgnn::ops::define_sampling(m);
  directgnn::ops::define_datasets(m);
  directgnn::ops::define_classes(m);
  directgnn::ops::define_link(m);
}

// CPU kernels only (no composite ones): under torch.compile these operators have no fake
// kernel and stay out of traced graphs instead of running on fake tensors.
TORCH_LIBRARY_IMPL(directgnn, CPU, m) {
  m.impl("gather", directgnn::ops::guarded<&gather_op>);
  m.impl("gather.out", directgnn::ops::guarded<&gather_out_op>);
  m.impl("pin_", directgnn::ops::guarded<&directgnn::ops::pin>);
  m.impl("unpin_", directgnn::ops::guarded<&directgnn::ops::unpin>);
  m.impl("is_pinned", directgnn::ops::guarded<&directgnn::ops::is_pinned>);
  directgnn::ops::impl_gather_many(m);
  directgnn::ops::impl_sampling(m);
}

TORCH_LIBRARY_IMPL(directgnn, CUDA, m) {
  m.impl("gather", directgnn::ops::guarded<&gather_op>);
  m.impl("gather.out", directgnn::ops::guarded<&gather_out_op>);
  m.impl("pin_",
         directgnn::ops::guarded<&directgnn::ops::pin>);  // says that only CPU memory is pinned
  m.impl("unpin_", directgnn::ops::guarded<&directgnn::ops::unpin>);
  m.impl("is_pinned", directgnn::ops::guarded<&directgnn::ops::is_pinned>);
  directgnn::ops::impl_gather_many(m);
  directgnn::ops::impl_sampling(m);
}
