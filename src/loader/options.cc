#include "loader/options.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <tuple>

#include "core/resources.h"
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

std::vector<TypePlacement> parse_type_placements(const std::string& text) {
  std::vector<TypePlacement> out;
  if (text.empty()) return out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    std::string item = text.substr(start, end - start);
    item.erase(std::remove_if(item.begin(), item.end(), ::isspace), item.end());
    const size_t eq = item.find('=');
    DGNN_CHECK_ARG(eq != std::string::npos && eq > 0 && eq + 1 < item.size(), "features_per_type",
                   "'", item, "' is not TYPE=PLACEMENT; write e.g. paper=disk,author=pinned");
    const std::string type = item.substr(0, eq);
    for (const TypePlacement& p : out) {
      DGNN_CHECK_ARG(p.type != type, "features_per_type", "node type '", type,
                     "' is named twice; give each type one placement");
    }
    out.push_back({type, parse_feature_placement(item.substr(eq + 1))});
    start = end + 1;
  }
  return out;
}

std::string type_placements_text(const std::vector<TypePlacement>& placements) {
  std::string out;
  for (const TypePlacement& p : placements) {
    out += (out.empty() ? "" : ",") + p.type + "=" + feature_placement_name(p.placement);
  }
  return out;
}

std::pair<Placement, std::string> auto_type_placement(const TableFacts& table, bool gpu,
                                                      PlacementRoom& room) {
  if (table.on_gpu) return {Placement::kDevice, "on the GPU already"};
  if (gpu && table.bytes <= room.gpu_left) {
    room.gpu_left -= table.bytes;
    return {Placement::kDevice, "fits in GPU memory"};
  }
  const Placement in_memory = gpu ? Placement::kPinned : Placement::kHost;
  if (table.bytes <= room.ram_left) {
    room.ram_left -= table.bytes;
    return {in_memory, gpu ? "fits in RAM, not in the GPU's share" : "fits in RAM"};
  }
  if (table.has_file) return {Placement::kDisk, "larger than the RAM left for tables"};
  return {in_memory, "larger than the RAM left, but in memory already, with no file to read"};
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
  DGNN_CHECK_ARG(o.cache.policy == disk::CachePolicy::kAuto || o.cache.gib > 0,
                 "feature_cache_policy",
                 "says how the feature cache keeps its rows, but there is none; give "
                 "feature_cache_gib too, or leave it out");
  DGNN_CHECK_ARG(
      o.cache.lookahead_batches == 0 || o.cache.policy == disk::CachePolicy::kLookahead ||
          o.cache.policy == disk::CachePolicy::kAuto,
      "lookahead_batches", "sizes the look-ahead cache's window, but the feature_cache_policy is ",
      disk::cache_policy_name(o.cache.policy),
      "; set it to lookahead, or leave "
      "lookahead_batches out");
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

// A heterogeneous type's gather method: `auto` as the homogeneous table's; a GPU method only for
// a table GPU threads can read.
GatherMethod type_gather_method(GatherMethod method, Placement p, bool gpu,
                                const std::string& type) {
  if (!gpu) {
    DGNN_CHECK_ARG(method == GatherMethod::kAuto || method == GatherMethod::kCpuCopy, "gather",
                   gather_method_name(method), " gathers onto a GPU, but training runs on the CPU");
    return GatherMethod::kCpuCopy;
  }
  if (method == GatherMethod::kAuto) return default_gather_method(p);
  DGNN_CHECK_ARG(
      method == GatherMethod::kCpuCopy || p == Placement::kPinned || p == Placement::kDevice,
      "gather", gather_method_name(method), " has GPU threads read the table, but node type '",
      type, "' keeps its table ", placement_name(p),
      ", where only the CPU reads it; place it pinned or device (features_per_type ", type,
      "=pinned), or gather auto");
  return method;
}

// The placement the user gave node type `t` (the type's own, else `features`), checked.
std::optional<Placement> given_placement(const LoaderOptions& o, const HeteroDataset& ds, size_t t,
                                         bool gpu) {
  const NodeType& type = ds.node_types[t];
  std::optional<Placement> p = o.features;
  const char* parameter = "features";
  for (const TypePlacement& named : o.type_features) {
    if (named.type == type.name) p = named.placement, parameter = "features_per_type";
  }
  if (!p) return p;
  const std::string what = placement_name(*p) + (parameter == std::string("features")
                                                     ? " (for node type '" + type.name + "')"
                                                     : " for node type '" + type.name + "'");
  DGNN_CHECK_ARG(gpu || *p == Placement::kHost || *p == Placement::kDisk, parameter, what,
                 " keeps the table for a GPU to read, but training runs on the CPU: place it "
                 "host or disk, or set device to cuda");
  DGNN_CHECK_ARG(*p != Placement::kDisk || !type.features_path.empty(), parameter, what,
                 " reads rows from the type's features .npy, but ",
                 ds.source.empty() ? "this dataset" : ds.source,
                 " holds the table in memory, not in a file; save the dataset as a dataset "
                 "directory (directgnn convert, or HeteroDataset.save) and load that, or give "
                 "the table as a numpy memory map of its .npy");
  return p;
}

// The types `type_features` names exist and have tables; a placement given where no type has
// a table is refused.
void check_named_types(const LoaderOptions& o, const HeteroDataset& ds) {
  const std::string where = ds.source.empty() ? "the dataset" : ds.source;
  for (const TypePlacement& named : o.type_features) {
    const auto found = std::find_if(ds.node_types.begin(), ds.node_types.end(),
                                    [&](const NodeType& t) { return t.name == named.type; });
    DGNN_CHECK_ARG(found != ds.node_types.end(), "features_per_type", "no node type '", named.type,
                   "' in ", where);
    DGNN_CHECK_ARG(found->has_features(), "features_per_type", "node type '", named.type,
                   "' has no feature table to place (a learnable table stands in for its input, "
                   "where node embeddings are asked for); leave it out");
  }
  const bool any = std::any_of(ds.node_types.begin(), ds.node_types.end(),
                               [](const NodeType& t) { return t.has_features(); });
  DGNN_CHECK_ARG(any || !o.features, "features", feature_placement_name(o.features),
                 ": no node type of ", where,
                 " has a feature table to place (their inputs are learnable tables, or none); "
                 "leave features at auto");
}

int64_t type_table_bytes(const NodeType& type) {
  return type.features.numel() * type.features.element_size();
}

bool any_on_disk(const std::vector<Placement>& placements) {
  return std::find(placements.begin(), placements.end(), Placement::kDisk) != placements.end();
}

// What `auto` may still take: a share of the memory free, less the tables `given` a placement.
// Unknown free RAM (0) leaves every table in memory. cpu-copy gathers keep tables off the GPU.
PlacementRoom auto_room(const LoaderOptions& o, const HeteroDataset& ds, const LoaderSettings& s,
                        const std::vector<std::optional<Placement>>& given) {
  PlacementRoom room;
  const int64_t ram = host_memory().available;
  room.ram_left = ram > 0 ? ram / 2 : std::numeric_limits<int64_t>::max();
  if (s.gpu() && o.gather.method != GatherMethod::kCpuCopy) {
    room.gpu_left = gpu::device_memory(s.index()).free / 4;
  }
  for (size_t t = 0; t < ds.node_types.size(); ++t) {
    if (given[t] == Placement::kDevice) room.gpu_left -= type_table_bytes(ds.node_types[t]);
    if (given[t] == Placement::kHost || given[t] == Placement::kPinned) {
      room.ram_left -= type_table_bytes(ds.node_types[t]);
    }
  }
  return room;
}

// Every featured type's placement and gather method into `s` (its device resolved).
void resolve_type_placements(const LoaderOptions& o, const HeteroDataset& ds, LoaderSettings& s) {
  check_named_types(o, ds);
  std::vector<std::optional<Placement>> given(ds.node_types.size());
  for (size_t t = 0; t < ds.node_types.size(); ++t) {
    if (ds.node_types[t].has_features()) given[t] = given_placement(o, ds, t, s.gpu());
  }
  PlacementRoom room = auto_room(o, ds, s, given);
  s.gather = o.gather;
  for (size_t t = 0; t < ds.node_types.size(); ++t) {
    const NodeType& type = ds.node_types[t];
    Placement p = Placement::kHost;
    std::string why;
    GatherMethod method = GatherMethod::kCpuCopy;  // a featureless type gathers nothing
    if (type.has_features()) {
      if (given[t]) {
        p = *given[t];
      } else {
        const TableFacts facts{type_table_bytes(type), type.features.is_cuda(),
                               !type.features_path.empty()};
        std::tie(p, why) = auto_type_placement(facts, s.gpu(), room);
      }
      method = type_gather_method(o.gather.method, p, s.gpu(), type.name);
    }
    s.type_features.push_back(p);
    s.type_reasons.push_back(why);
    s.type_gather.push_back(method);
  }
  const bool disk = any_on_disk(s.type_features);
  DGNN_CHECK_ARG(o.cache.gib == 0 || disk, "feature_cache_gib",
                 "the cache keeps hot rows of tables read from disk in RAM, but no node type's "
                 "table is placed on disk; place one there (features_per_type TYPE=disk)");
  DGNN_CHECK_ARG((o.disk.backend == disk::Backend::kAuto && !o.disk.direct) || disk,
                 o.disk.direct ? "disk_direct" : "disk_io",
                 "says how rows on disk are read, but no node type's table is placed on disk; "
                 "place one there (features_per_type TYPE=disk), or leave it out");
  DGNN_CHECK_ARG(o.cache.ranking == disk::CacheRanking::kPresample || o.cache.gib > 0,
                 "feature_cache_rank",
                 "ranks the rows of the feature cache, but there is none; give feature_cache_gib "
                 "too, or leave it out");
}

// Caps the run's GPU memory where asked, before any placement reads what is free.
void cap_gpu_memory(const LoaderOptions& o, const LoaderSettings& s) {
  if (o.gpu_memory_gib == 0) return;
  DGNN_CHECK_ARG(std::isfinite(o.gpu_memory_gib) && o.gpu_memory_gib > 0, "gpu_memory_gib",
                 "must be a positive number of GiB, got ", o.gpu_memory_gib);
  DGNN_CHECK_ARG(s.gpu(), "gpu_memory_gib",
                 "caps a GPU's memory, but this run trains on the CPU; leave it out");
  gpu::limit_memory(s.index(), static_cast<int64_t>(o.gpu_memory_gib * double(int64_t{1} << 30)));
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
  // A rank without an explicit index trains on its own GPU where there are enough; outside a
  // group (Python), on torch's current device, as torch puts tensors sent to "cuda".
  int index =
      group != nullptr ? rank_gpu(group->env(), gpu::device_count()) : gpu::current_device();
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
  cap_gpu_memory(o, s);
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

LoaderSettings resolve_hetero_loader(const LoaderOptions& o, const HeteroDataset& ds,
                                     const ProcessGroup* group, const HeteroSampling& sampling) {
  check_counts(o);
  DGNN_CHECK_ARG(sampling.gpu_sampler_twin || o.sampler != SamplerChoice::kGpu, "sampler",
                 "gpu: ", sampling.why_cpu, "; leave sampler at auto or cpu");
  if (o.device.kind == DeviceChoice::Kind::kAuto && !gpu::available()) {
    check_gpu_only_choices(o);
    for (const TypePlacement& p : o.type_features) {
      DGNN_CHECK_ARG(p.placement != Placement::kPinned && p.placement != Placement::kDevice,
                     "features_per_type", p.type, "=", feature_placement_name(p.placement),
                     " needs a GPU, but ", gpu::unavailable_reason(), "; place it host or disk");
    }
  }
  LoaderSettings s;
  s.device = resolve_device(o.device, group, &s.note);
  cap_gpu_memory(o, s);
  resolve_type_placements(o, ds, s);
  DGNN_CHECK_ARG(s.gpu() || o.sampler != SamplerChoice::kGpu, "sampler",
                 "gpu samples on a GPU, but training runs on the CPU: set sampler to cpu, or "
                 "device to cuda");
  s.gpu_sampler = sampling.gpu_sampler_twin && s.gpu() && o.sampler != SamplerChoice::kCpu;
  s.graph = o.graph;
  s.fanouts = o.fanouts;
  s.batch_size = o.batch_size;
  s.disk = o.disk;
  s.cache = o.cache;
  // As node training: on the CPU a producer thread only takes cores from the model, on a GPU
  // or with rows read from disk it hides that work behind the step.
  s.prefetch = o.prefetch.value_or(
      s.gpu() || any_on_disk(s.type_features) ? LoaderOptions::kGpuPrefetch : 0);
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
