// A user's choices of where a run trains, keeps its features and samples, as typed values
// (parsed from strings only at the CLI and Python boundaries), and their resolution against
// the machine: "auto" becomes the GPU or the CPU, and impossible combinations fail with the
// option to change.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <optional>
#include <string>

#include "dist/process_group.h"
#include "feature/feature_store.h"
#include "sampling/device_sampler.h"

namespace directgnn {

// --device: auto (a GPU when there is one, else the CPU with a one-line note), cpu, cuda
// (the rank's own GPU) or cuda:N.
struct DeviceChoice {
  enum class Kind { kAuto, kCpu, kCuda };
  Kind kind = Kind::kAuto;
  int index = -1;  // kCuda: the GPU, or -1 for the rank's own (GPU 0 in one process)

  static DeviceChoice automatic() { return {}; }
  static DeviceChoice cpu() { return {Kind::kCpu, -1}; }
  static DeviceChoice cuda(int index = -1) { return {Kind::kCuda, index}; }
  bool operator==(const DeviceChoice& o) const { return kind == o.kind && index == o.index; }
};
DeviceChoice parse_device(const std::string& text);
std::string device_choice_name(const DeviceChoice& choice);

// --sampler: auto (gpu on a GPU, cpu otherwise), cpu or gpu.
enum class SamplerChoice { kAuto, kCpu, kGpu };
SamplerChoice parse_sampler(const std::string& text);
std::string sampler_name(SamplerChoice choice);

// --features: nullopt is auto (pinned on a GPU, host on the CPU).
std::optional<Placement> parse_feature_placement(const std::string& text);
std::string feature_placement_name(const std::optional<Placement>& placement);
std::string graph_placement_name(GraphPlacement placement);

struct PlacementChoices {
  DeviceChoice device;
  std::optional<Placement> features;
  GatherMethod gather = GatherMethod::kAuto;
  SamplerChoice sampler = SamplerChoice::kAuto;
  GraphPlacement graph = GraphPlacement::kPinned;
  disk::RowFileOptions disk;  // --features disk: --disk-io, --disk-direct
  disk::CacheOptions cache;   // --features disk: --feature-cache-gib, --feature-cache-rank
};

// The choices resolved on this machine.
struct RunSetup {
  c10::Device device{c10::kCPU};
  Placement features = Placement::kHost;
  GatherMethod gather = GatherMethod::kAuto;
  bool gpu_sampler = false;
  GraphPlacement graph = GraphPlacement::kPinned;
  std::string note;  // why a run meant for a GPU trains on the CPU

  bool gpu() const { return device.is_cuda(); }
  int index() const { return device.index() < 0 ? 0 : device.index(); }
};

// Resolves `choices`; a rank of `group` asking for "cuda" gets its own GPU (dist/).
RunSetup resolve_run(const PlacementChoices& choices, const ProcessGroup* group);

// "cpu" or "cuda:N (name)", as reports print it.
std::string report_device(const RunSetup& run);

}  // namespace directgnn
