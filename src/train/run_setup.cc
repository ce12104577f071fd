#include "train/run_setup.h"

#include <algorithm>
#include <cctype>

#include "directgnn/error.h"
#include "feature/gpu_gather.h"

namespace directgnn {

DeviceChoice parse_device(const std::string& text) {
  if (text == "auto") return DeviceChoice::automatic();
  if (text == "cpu") return DeviceChoice::cpu();
  if (text == "cuda") return DeviceChoice::cuda();
  if (text.rfind("cuda:", 0) == 0) {
    DGNN_CHECK(
        text.size() > 5 && text.size() < 9 && std::all_of(text.begin() + 5, text.end(), ::isdigit),
        "--device '", text, "': use cuda or cuda:N");
    return DeviceChoice::cuda(std::stoi(text.substr(5)));
  }
  fail("--device '", text, "': use auto, cpu, cuda or cuda:N");
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
  fail("--sampler '", text, "': use auto, cpu or gpu");
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

std::string graph_placement_name(GraphPlacement placement) {
  return placement == GraphPlacement::kPinned ? "pinned" : "device";
}

namespace {

// With --device auto on a machine without a GPU, options that only make sense on a GPU name
// the missing GPU, not a mismatch.
void check_gpu_only_choices(const PlacementChoices& c) {
  struct Wants {
    const char* flag;
    std::string value;
    bool gpu;
  };
  const bool gpu_table = c.features == Placement::kPinned || c.features == Placement::kDevice;
  const bool gpu_gather = c.gather != GatherMethod::kAuto && c.gather != GatherMethod::kCpuCopy;
  for (const Wants& w :
       {Wants{"--features", feature_placement_name(c.features), gpu_table},
        Wants{"--gather", gather_method_name(c.gather), gpu_gather},
        Wants{"--sampler", sampler_name(c.sampler), c.sampler == SamplerChoice::kGpu}}) {
    DGNN_CHECK(!w.gpu, w.flag, " ", w.value, " needs a GPU, but ", gpu::unavailable_reason(),
               "; leave it out to train on the CPU");
  }
}

c10::Device resolve_device(const PlacementChoices& c, const ProcessGroup* group,
                           std::string& note) {
  DeviceChoice device = c.device;
  if (device.kind == DeviceChoice::Kind::kAuto) {
    if (!gpu::available()) {
      check_gpu_only_choices(c);
      note =
          "note: training on the CPU: " + gpu::unavailable_reason() + " (--device cuda needs one)";
      return c10::Device(c10::kCPU);
    }
    device = DeviceChoice::cuda();
  }
  if (device.kind == DeviceChoice::Kind::kCpu) return c10::Device(c10::kCPU);
  const std::string name = device_choice_name(device);
  DGNN_CHECK(gpu::available(), "--device ", name, ": ", gpu::unavailable_reason(),
             "; use --device cpu");
  // A rank without an explicit index trains on its own GPU where there are enough.
  int index = group != nullptr ? rank_gpu(group->env(), gpu::device_count()) : 0;
  if (device.index >= 0) index = device.index;
  DGNN_CHECK(index < gpu::device_count(), "--device ", name, ": this machine has ",
             gpu::device_count(), " GPU(s)");
  return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(index));
}

}  // namespace

RunSetup resolve_run(const PlacementChoices& c, const ProcessGroup* group) {
  RunSetup r;
  r.device = resolve_device(c, group, r.note);
  r.features = c.features ? *c.features : r.gpu() ? Placement::kPinned : Placement::kHost;
  DGNN_CHECK(r.gpu() || r.features == Placement::kHost || r.features == Placement::kDisk,
             "--features ", placement_name(r.features),
             " keeps the table for a GPU to read, but training runs on the CPU: use --features "
             "host or disk, or --device cuda");
  r.gather = c.gather;
  DGNN_CHECK(r.gpu() || r.gather == GatherMethod::kAuto || r.gather == GatherMethod::kCpuCopy,
             "--gather ", gather_method_name(r.gather),
             " gathers onto a GPU, but training runs on the CPU");
  DGNN_CHECK(r.gpu() || c.sampler != SamplerChoice::kGpu,
             "--sampler gpu samples on a GPU, but training runs on the CPU: use "
             "--sampler cpu, or --device cuda");
  r.gpu_sampler =
      c.sampler == SamplerChoice::kGpu || (c.sampler == SamplerChoice::kAuto && r.gpu());
  r.graph = c.graph;
  return r;
}

std::string report_device(const RunSetup& run) {
  if (!run.gpu()) return "cpu";
  return "cuda:" + std::to_string(run.index()) + " (" + gpu::device_name(run.index()) + ")";
}

}  // namespace directgnn
