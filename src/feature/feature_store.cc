#include "feature/feature_store.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "core/parallel.h"
#include "core/resources.h"
#include "directgnn/error.h"
#include "feature/cpu/gather.h"
#include "feature/gpu_gather.h"
#include "gpu/placement.h"
#include "gpu/runtime.h"

namespace directgnn {
namespace {

template <typename Id>
void check_range(const Id* ids, int64_t count, int64_t num_rows) {
  const int64_t i = first_index_where(count, 1 << 16, [&](int64_t k) {
    return ids[k] < 0 || static_cast<int64_t>(ids[k]) >= num_rows;
  });
  DGNN_CHECK_INDEX(i < 0, "feature gather: ids[", i,
                   "] = ", i < 0 ? 0 : static_cast<int64_t>(ids[i]),
                   " is out of range for a table of ", num_rows, " rows");
}

void check_range_on_device(const at::Tensor& ids, int64_t num_rows) {
  if (ids.numel() == 0) return;
  const at::Tensor bad = at::logical_or(ids < 0, ids >= num_rows);
  if (!bad.any().item<bool>()) return;
  const int64_t i = bad.nonzero().min().item<int64_t>();
  fail_index("feature gather: ids[", i, "] = ", ids[i].item<int64_t>(),
             " is out of range for a table of ", num_rows, " rows");
}

}  // namespace

Placement parse_placement(const std::string& name) {
  if (name == "host") return Placement::kHost;
  if (name == "pinned") return Placement::kPinned;
  if (name == "device") return Placement::kDevice;
  if (name == "disk") return Placement::kDisk;
  fail_argument("features", "'", name, "' is not a placement (use host, pinned, device or disk)");
}

std::string placement_name(Placement placement) {
  switch (placement) {
    case Placement::kHost:
      return "host";
    case Placement::kPinned:
      return "pinned";
    case Placement::kDevice:
      return "device";
    case Placement::kDisk:
      return "disk";
  }
  return "unknown";
}

GatherMethod parse_gather_method(const std::string& name) {
  if (name == "auto") return GatherMethod::kAuto;
  if (name == "cpu-copy") return GatherMethod::kCpuCopy;
  if (name == "zero-copy") return GatherMethod::kZeroCopy;
  if (name == "aligned") return GatherMethod::kAligned;
  fail_argument("gather", "'", name,
                "' is not a gather method (use auto, cpu-copy, zero-copy or aligned)");
}

std::string gather_method_name(GatherMethod method) {
  switch (method) {
    case GatherMethod::kAuto:
      return "auto";
    case GatherMethod::kCpuCopy:
      return "cpu-copy";
    case GatherMethod::kZeroCopy:
      return "zero-copy";
    case GatherMethod::kAligned:
      return "aligned";
  }
  return "unknown";
}

GatherMethod default_gather_method(Placement placement) {
  return placement == Placement::kPinned || placement == Placement::kDevice
             ? GatherMethod::kAligned
             : GatherMethod::kCpuCopy;
}

void check_ids_in_range(const at::Tensor& ids, int64_t num_rows) {
  DGNN_CHECK_ARG(ids.dim() == 1, "ids", "must be 1-D, got ", ids.dim(), " dimensions");
  DGNN_CHECK_TYPE(ids.scalar_type() == at::kInt || ids.scalar_type() == at::kLong,
                  "feature gather: ids have dtype ", ids.scalar_type(), "; use int32 or int64");
  if (!ids.device().is_cpu()) return check_range_on_device(ids, num_rows);
  DGNN_CHECK(ids.is_contiguous(), "feature gather: ids must be contiguous");
  if (ids.scalar_type() == at::kInt) {
    check_range(ids.data_ptr<int32_t>(), ids.numel(), num_rows);
  } else {
    check_range(ids.data_ptr<int64_t>(), ids.numel(), num_rows);
  }
}

FeatureStore::FeatureStore(at::Tensor table, Placement placement, int device_index)
    : table_(std::move(table)), placement_(placement), device_index_(device_index) {
  DGNN_CHECK_ARG(table_.defined() && table_.dim() == 2, "table", "must be a 2-D tensor");
  if (!table_.is_contiguous()) table_ = table_.contiguous();
  if (table_.is_cuda()) {
    // Already on a GPU: kept where it is (no copy), at whatever address it starts.
    DGNN_CHECK_ARG(placement_ == Placement::kDevice, "features", "a table already on ",
                   table_.device().str(),
                   " can only be placed 'device' (it stays where it is), "
                   "not '",
                   placement_name(placement_), "'; move it to the CPU with .cpu() first");
    device_index_ = table_.device().index();
    device_table_ = table_;
    device_rows_ = device_table_.data_ptr();
    return;
  }
  DGNN_CHECK_TYPE(table_.device().is_cpu(), "feature table on ", table_.device().str(),
                  ": use a CPU or CUDA tensor");
  DGNN_CHECK_ARG(placement_ != Placement::kDisk, "features",
                 "disk reads rows from a .npy file: build the store with FeatureStore::on_disk "
                 "(from a dataset directory)");
  if (placement_ == Placement::kHost) return;
  const int64_t bytes = table_.numel() * table_.element_size();
  if (placement_ == Placement::kPinned) {
    gpu::check_pinnable(bytes, "features", "pinned: the feature table",
                        "set features to host (the CPU gathers from the memory-mapped table), or "
                        "halve the table with float16 features (directgnn convert writes them)");
  }
  DGNN_CHECK_ARG(gpu::available(), "features", placement_name(placement_), " needs a GPU, but ",
                 gpu::unavailable_reason(), "; set features to host");
  DGNN_CHECK_ARG(device_index_ >= 0 && device_index_ < gpu::device_count(), "device", device_index_,
                 " does not exist (this machine has ", gpu::device_count(), " GPU(s))");
  if (placement_ == Placement::kPinned) {
    if (bytes > 0) {
      pin_ = gpu::pin_host_memory(table_.data_ptr(), static_cast<size_t>(bytes), device_index_);
      device_rows_ = gpu::mapped_device_pointer(table_.data_ptr());
    }
    return;
  }
  // The table and room for training (activations, the model, the sampler) must fit.
  gpu::check_fits_on_device(bytes, device_index_, "features", "device: the feature table",
                            "set features to pinned to read it from host memory (zero-copy), or "
                            "halve the table with float16 features");
  try {
    device_table_ =
        table_.to(c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(device_index_)));
  } catch (const std::exception& e) {
    fail_argument("features", "device: copying the feature table (", gib_text(bytes),
                  ") to cuda:", device_index_,
                  " failed; set features to pinned to read it from host memory. (", e.what(), ")");
  }
  device_rows_ = device_table_.data_ptr();
}

FeatureStore FeatureStore::as_is(at::Tensor table, int device_index, bool detect_pinned) {
  DGNN_CHECK_ARG(table.defined() && table.dim() == 2, "table", "must be a 2-D tensor");
  DGNN_CHECK_ARG(table.is_contiguous(), "table",
                 "not contiguous; the gather reads rows in place, so pass table.contiguous() "
                 "once (a copy) and gather from that");
  if (table.is_cuda()) return FeatureStore(std::move(table), Placement::kDevice);
  DGNN_CHECK_TYPE(table.device().is_cpu(), "feature table on ", table.device().str(),
                  ": use a CPU or CUDA tensor");
  FeatureStore store;
  store.table_ = std::move(table);
  store.device_index_ = device_index;
  const int64_t bytes = store.table_.numel() * store.table_.element_size();
  if (detect_pinned && bytes > 0) {
    const auto* first = static_cast<const char*>(store.table_.data_ptr());
    const void* rows = gpu::pinned_device_pointer(first);
    // Pinned only when the whole table is: the last byte's page too, at the same offset.
    const void* last = rows != nullptr ? gpu::pinned_device_pointer(first + bytes - 1) : nullptr;
    if (last != nullptr &&
        static_cast<const char*>(last) == static_cast<const char*>(rows) + bytes - 1) {
      store.device_rows_ = rows;
      store.placement_ = Placement::kPinned;
    }
  }
  return store;
}

FeatureStore FeatureStore::on_disk(at::Tensor table, const std::string& path,
                                   const disk::RowFileOptions& options, int device_index) {
  DGNN_CHECK_TYPE(table.defined() && table.dim() == 2 && table.device().is_cpu(),
                  "features disk: the feature table must be a 2-D CPU tensor");
  auto file = std::make_shared<const disk::RowFile>(path, options);
  DGNN_CHECK(file->num_rows() == table.size(0) && file->dim() == table.size(1) &&
                 file->dtype() == table.scalar_type(),
             path, ": holds a [", file->num_rows(), ", ", file->dim(), "] ", file->dtype(),
             " array, but the dataset's feature table is ", table.sizes(), " ", table.scalar_type(),
             "; the file changed since the dataset was loaded, reload it");
  FeatureStore store;
  store.table_ = std::move(table);
  store.placement_ = Placement::kDisk;
  store.device_index_ = device_index;
  store.gathered_ = std::make_shared<disk::SeenRows>(file->num_rows());
  store.disk_ = std::move(file);
  return store;
}

void FeatureStore::cache_hot_rows(const at::Tensor& ranked, int64_t bytes,
                                  const std::function<void(int64_t, int64_t)>& progress,
                                  disk::CachePolicy policy) {
  DGNN_CHECK_ARG(disk_ != nullptr, "feature_cache_gib",
                 "the cache keeps rows of a table read from disk; the table is ",
                 placement_name(placement_), ": set features to disk, or drop the cache");
  cache_.reset();  // the old one's memory goes before the new one is filled
  cache_ = std::make_shared<const disk::RowCache>(*disk_, ranked, bytes, progress, policy);
}

void FeatureStore::clear_distinct_rows() const {
  if (disk_ == nullptr) return;
  gathered_->clear();
  disk_->clear_distinct_rows();
}

int64_t FeatureStore::begin_plan() const {
  if (cache_ == nullptr || cache_->policy() != disk::CachePolicy::kLookahead) return -1;
  return cache_->begin_plan();
}

void FeatureStore::plan_gather(int64_t generation, int64_t step, const at::Tensor& ids) const {
  DGNN_CHECK(generation >= 0 && cache_ != nullptr,
             "feature gather: this table plans no batches (begin_plan said so)");
  cache_->plan(generation, step, ids.device().is_cpu() ? ids : ids.cpu());
}

void FeatureStore::read_disk_rows(const at::Tensor& ids, at::Tensor& out,
                                  const PlannedGather& planned) const {
  gathered_->add(ids);
  if (cache_ != nullptr && planned.generation >= 0)
    return cache_->read_planned(*disk_, ids, out, planned.generation, planned.step);
  if (cache_ != nullptr) return cache_->read_rows(*disk_, ids, out);
  disk_->read_rows(ids, out);
}

std::string FeatureStore::description() const {
  if (disk_ == nullptr) return placement_name(placement_);
  return placement_name(placement_) + " (" + disk_->path() + ": " + disk_->describe() + ")";
}

at::Tensor FeatureStore::gather(const at::Tensor& ids) const {
  return gather(ids, c10::Device(c10::kCPU));
}

at::Tensor FeatureStore::gather(const at::Tensor& ids_in, const c10::Device& device,
                                const GatherOptions& options) const {
  const at::Tensor ids = ids_in.contiguous();
  if (device.is_cpu()) {
    DGNN_CHECK_ARG(
        options.method == GatherMethod::kAuto || options.method == GatherMethod::kCpuCopy, "gather",
        gather_method_name(options.method),
        " gathers onto a GPU, but the target device is the CPU");
    if (placement_ == Placement::kDevice) {
      check_ids_in_range(ids, num_rows());
      return device_table_.index_select(0, ids.to(device_table_.device())).cpu();
    }
    at::Tensor out = at::empty({ids.numel(), dim()}, table_.options());
    gather_into(ids, out, options.planned);
    return out;
  }
  DGNN_CHECK(device.is_cuda(), "feature gather: cannot gather onto device ", device.str());
  DGNN_CHECK(gpu::available(), "feature gather onto ", device.str(), ": ",
             gpu::unavailable_reason());
  const int index = device.has_index() ? device.index() : device_index_;
  if (placement_ == Placement::kDisk) return gather_disk_to_gpu(ids, index, options);
  DGNN_CHECK(placement_ == Placement::kHost || index == device_index_, "feature gather onto ",
             device.str(), ": the table is ", placement_name(placement_),
             " for cuda:", device_index_, "; gather onto that device");
  const GatherMethod method =
      options.method == GatherMethod::kAuto ? default_gather_method(placement_) : options.method;
  DGNN_CHECK_ARG(method == GatherMethod::kCpuCopy || placement_ != Placement::kHost, "gather",
                 gather_method_name(method),
                 " has GPU threads read the table, which needs it pinned (features pinned; "
                 "from Python a UnifiedTensor or pin_memory()) or on the GPU (features "
                 "device); the table is in plain host memory");
  DGNN_CHECK_ARG(method != GatherMethod::kCpuCopy || placement_ != Placement::kDevice, "gather",
                 "cpu-copy copies from host memory, but the table is on the GPU; use zero-copy, "
                 "aligned or auto");
  DGNN_CHECK_ARG(options.max_threads >= 0, "max_threads", "must be >= 0, got ",
                 options.max_threads);
  check_ids_in_range(ids, num_rows());
  gpu::GatherSource source;
  source.host_table = table_;
  source.rows = device_rows_;
  source.placement = placement_;
  source.num_rows = num_rows();
  source.dim = dim();
  source.row_bytes = row_bytes();
  source.dtype = table_.scalar_type();
  return gpu::gather(source, ids, index, method, options);
}

void FeatureStore::gather_into(const at::Tensor& ids, at::Tensor& out) const {
  gather_into(ids, out, {});
}

void FeatureStore::gather_into(const at::Tensor& ids_in, at::Tensor& out,
                               const PlannedGather& planned) const {
  const at::Tensor ids = ids_in.device().is_cpu() ? ids_in.contiguous() : ids_in.cpu();
  check_ids_in_range(ids, num_rows());
  DGNN_CHECK(out.is_contiguous() && out.device().is_cpu() && out.dim() == 2 &&
                 out.size(0) == ids.numel() && out.size(1) == dim() &&
                 out.scalar_type() == table_.scalar_type(),
             "feature gather: output must be a contiguous CPU [", ids.numel(), ", ", dim(), "] ",
             table_.scalar_type(), " tensor");
  DGNN_CHECK(table_.is_cpu(), "feature gather: the table is on ", table_.device().str(),
             "; gather onto the CPU with gather(ids)");
  if (disk_ != nullptr) return read_disk_rows(ids, out, planned);
  const auto* base = static_cast<const uint8_t*>(table_.data_ptr());
  auto* dst = static_cast<uint8_t*>(out.data_ptr());
  if (ids.scalar_type() == at::kInt) {
    cpu::gather_rows(base, row_bytes(), ids.data_ptr<int32_t>(), ids.numel(), dst);
  } else {
    cpu::gather_rows(base, row_bytes(), ids.data_ptr<int64_t>(), ids.numel(), dst);
  }
}

// Rows are read from the file straight into pinned host memory (the staging buffer) and go to
// the GPU in one copy on the current stream; the caching host allocator keeps the buffer until
// that copy is done.
at::Tensor FeatureStore::gather_disk_to_gpu(const at::Tensor& ids_in, int index,
                                            const GatherOptions& options) const {
  DGNN_CHECK(options.method == GatherMethod::kAuto || options.method == GatherMethod::kCpuCopy,
             "feature gather: method '", gather_method_name(options.method),
             "' has GPU threads read the table, but a disk table is read by the CPU; use "
             "cpu-copy or auto");
  const at::Tensor ids = ids_in.device().is_cpu() ? ids_in.contiguous() : ids_in.cpu();
  check_ids_in_range(ids, num_rows());
  at::Tensor staging = at::empty({ids.numel(), dim()}, table_.options().pinned_memory(true));
  read_disk_rows(ids, staging, options.planned);
  return staging.to(c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(index)),
                    /*non_blocking=*/true);
}

}  // namespace directgnn
