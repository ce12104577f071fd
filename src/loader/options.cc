#include "loader/options.h"

#include <algorithm>
#include <cctype>

#include "directgnn/error.h"
#include "gpu/runtime.h"
#include "sampling/sampler.h"

namespace directgnn {

DeviceChoice parse_device(const std::string& text) {
  if (text == "auto") return DeviceChoice::automatic();
  if (text == "cpu") return DeviceChoice::cpu();
  if (text == "cuda") return DeviceChoice::cuda();
  if (text.rfind("cuda:", 0) == 0) {
    DGNN_CHECK_ARG(
        text.size() > 5 && text.size() < 9 && std::all_of(text.begin() + 5, text.end(), ::isdigit),
        "device", "'", text, "' is not a device; use cuda or cuda:N");
    return DeviceChoice::cuda(std::stoi(text.substr(5)));
  }
  fail_argument("device", "'", text, "' is not a device; use auto, cpu, cuda or cuda:N");
}

std::string device_choice_name(const DeviceChoice& choice) {
  switch (choice.kind) {
    case DeviceChoice::Kind::kAuto:
      return "auto";
    case DeviceChoice::Kind::kCpu:
      return "cpu";
    case DeviceChoice::Kind::kCuda:
      return choice.index < 0 ? "cuda" : "cuda:" + std::to_string(choice.index);
  }
  return "unknown";
}

SamplerChoice parse_sampler(const std::string& text) {
  if (text == "auto") return SamplerChoice::kAuto;
  if (text == "cpu") return SamplerChoice::kCpu;
  if (text == "gpu") return SamplerChoice::kGpu;
  fail_argument("sampler", "'", text, "' is not a sampler; use auto, cpu or gpu");
}

std::string sampler_name(SamplerChoice choice) {
  return choice == SamplerChoice::kAuto ? "auto" : choice == SamplerChoice::kCpu ? "cpu" : "gpu";
}

std::optional<Placement> parse_feature_placement(const std::string& text) {
  if (text == "auto") return std::nullopt;
  return parse_placement(text);
}

std::string feature_placement_name(const std::optional<Placement>& placement) {
  return placement ? placement_name(*placement) : "auto";
}

std::optional<int> parse_prefetch(const std::string& text) {
  if (text == "auto") return std::nullopt;
  int64_t depth = -1;
  size_t used = 0;
  try {
    depth = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  DGNN_CHECK_ARG(used == text.size() && !text.empty() && depth >= 0 && depth <= 64, "prefetch", "'",
                 text, "': give auto or a number of minibatches in 0..64");
  return static_cast<int>(depth);
}

namespace {

// With device auto on a machine without a GPU, options that only make sense on a GPU name
// the missing GPU, not a mismatch.
void check_gpu_only_choices(const LoaderOptions& c) {
  struct Wants {
    const char* parameter;
    std::string value;
    bool gpu;
  };
  const bool gpu_table = c.features == Placement::kPinned || c.features == Placement::kDevice;
  const bool gpu_gather =
      c.gather.method != GatherMethod::kAuto && c.gather.method != GatherMethod::kCpuCopy;
  for (const Wants& w :
       {Wants{"features", feature_placement_name(c.features), gpu_table},
        Wants{"gather", gather_method_name(c.gather.method), gpu_gather},
        Wants{"sampler", sampler_name(c.sampler), c.sampler == SamplerChoice::kGpu}}) {
    DGNN_CHECK_ARG(!w.gpu, w.parameter, w.value, " needs a GPU, but ", gpu::unavailable_reason(),
                   "; leave ", w.parameter, " at auto to train on the CPU");
  }
}

void check_counts(const LoaderOptions& o) {
  check_fanouts(o.fanouts, static_cast<int64_t>(o.fanouts.size()));
  DGNN_CHECK_ARG(o.batch_size >= 1, "batch_size", "must be positive, got ", o.batch_size);
  DGNN_CHECK_ARG(!o.prefetch || (*o.prefetch >= 0 && *o.prefetch <= 64), "prefetch",
                 "must be in 0..64, got ", o.prefetch.value_or(0));
  DGNN_CHECK_ARG(o.workers >= 1 && o.workers <= 64, "workers", "must be in 1..64, got ", o.workers);
  DGNN_CHECK_ARG(o.cache.gib >= 0, "feature_cache_gib", "must not be negative, got ", o.cache.gib);
}

// The placement, gather method and sampler of `s` (its device resolved) from `o`.
void resolve_data_path(const LoaderOptions& o, const Dataset& ds, LoaderSettings& s) {
  s.features = resolve_feature_placement(o.features, ds.features, s.gpu());
  DGNN_CHECK_ARG(s.gpu() || s.features == Placement::kHost || s.features == Placement::kDisk,
                 "features", placement_name(s.features),
                 " keeps the table for a GPU to read, but training runs on the CPU: set "
                 "features to host or disk, or device to cuda");
  DGNN_CHECK_ARG(o.cache.gib == 0 || s.features == Placement::kDisk, "feature_cache_gib",
                 "the cache keeps hot rows of a table read from disk in RAM; set features to "
                 "disk (other placements hold the whole table already)");
  DGNN_CHECK_ARG(s.gpu() || o.gather.method == GatherMethod::kAuto ||
                     o.gather.method == GatherMethod::kCpuCopy,
                 "gather", gather_method_name(o.gather.method),
                 " gathers onto a GPU, but training runs on the CPU");
  s.gather = o.gather;
  if (s.gather.method == GatherMethod::kAuto) {
    s.gather.method = s.gpu() ? default_gather_method(s.features) : GatherMethod::kCpuCopy;
  }
  DGNN_CHECK_ARG(s.gpu() || o.sampler != SamplerChoice::kGpu, "sampler",
                 "gpu samples on a GPU, but training runs on the CPU: set sampler to cpu, or "
                 "device to cuda");
  s.gpu_sampler =
      o.sampler == SamplerChoice::kGpu || (o.sampler == SamplerChoice::kAuto && s.gpu());
}

}  // namespace

c10::Device resolve_device(const DeviceChoice& choice, const ProcessGroup* group,
                           std::string* note) {
  DeviceChoice device = choice;
  if (device.kind == DeviceChoice::Kind::kAuto) {
    if (!gpu::available()) {
      if (note != nullptr) {
        // Brief: every run on a machine without a GPU prints it. Why there is none is said
        // where a GPU was asked for (device cuda) and by `directgnn info`.
        *note = "note: training on the CPU (no usable GPU)";
      }
      return c10::Device(c10::kCPU);
    }
    device = DeviceChoice::cuda();
  }
  if (device.kind == DeviceChoice::Kind::kCpu) return c10::Device(c10::kCPU);
  const std::string name = device_choice_name(device);
  DGNN_CHECK_ARG(gpu::available(), "device", name, ": ", gpu::unavailable_reason(),
                 "; use device cpu");
  // A rank without an explicit index trains on its own GPU where there are enough.
  int index = group != nullptr ? rank_gpu(group->env(), gpu::device_count()) : 0;
  if (device.index >= 0) index = device.index;
  DGNN_CHECK_ARG(index < gpu::device_count(), "device", name, ": this machine has ",
                 gpu::device_count(), " GPU(s)");
  return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(index));
}

Placement resolve_feature_placement(const std::optional<Placement>& choice, const at::Tensor& table,
                                    bool gpu) {
  if (choice) return *choice;
  if (table.defined() && table.is_cuda()) return Placement::kDevice;
  return gpu ? Placement::kPinned : Placement::kHost;
}

LoaderSettings resolve_loader(const LoaderOptions& o, const Dataset& ds,
                              const ProcessGroup* group) {
  check_counts(o);
  if (o.device.kind == DeviceChoice::Kind::kAuto && !gpu::available()) check_gpu_only_choices(o);
  LoaderSettings s;
  s.device = resolve_device(o.device, group, &s.note);
  resolve_data_path(o, ds, s);
  s.fanouts = o.fanouts;
  s.batch_size = o.batch_size;
  s.graph = o.graph;
  s.sample_mode = o.sample_mode;
  s.weighted = o.weighted;
  s.edge_ids = o.edge_ids;
  s.disk = o.disk;
  s.cache = o.cache;
  s.prefetch = o.prefetch.value_or(
      s.gpu() || s.features == Placement::kDisk ? LoaderOptions::kGpuPrefetch : 0);
  s.workers = o.workers;
  return s;
}

LoaderSettings resolve_hetero_loader(const LoaderOptions& o, const ProcessGroup* group) {
  check_counts(o);
  LoaderSettings s;
  s.device = resolve_device(o.device, group, &s.note);
  s.fanouts = o.fanouts;
  s.batch_size = o.batch_size;
  // As node training: on the CPU a producer thread only takes cores from the model, on a GPU
  // it hides sampling behind the step.
  s.prefetch = o.prefetch.value_or(s.gpu() ? LoaderOptions::kGpuPrefetch : 0);
  s.workers = o.workers;
  return s;
}

bool can_read_sources_in_place(const Dataset& dataset, const LoaderSettings& settings) {
  const at::Tensor& table = dataset.features;
  return settings.device.is_cpu() && settings.features == Placement::kHost && table.dim() == 2 &&
         table.scalar_type() == at::kFloat && table.is_contiguous();
}

std::string report_device(const LoaderSettings& settings) {
  if (!settings.gpu()) return "cpu";
  return "cuda:" + std::to_string(settings.index()) + " (" + gpu::device_name(settings.index()) +
         ")";
}

}  // namespace directgnn
