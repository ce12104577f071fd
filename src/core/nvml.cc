#include "core/nvml.h"

#include <dlfcn.h>

#include <cmath>
#include <limits>

namespace directgnn {
namespace {

// The few NVML entry points used, by their documented C signatures (0 is NVML_SUCCESS).
using NvmlInit = int (*)();
using NvmlShutdown = int (*)();
using NvmlHandleByIndex = int (*)(unsigned, void**);
using NvmlHandleByPci = int (*)(const char*, void**);
using NvmlPower = int (*)(void*, unsigned*);             // milliwatts
using NvmlEnergy = int (*)(void*, unsigned long long*);  // millijoules
using NvmlUnsigned = int (*)(void*, unsigned*);

template <typename Fn>
Fn symbol(void* library, const char* name) {
  return reinterpret_cast<Fn>(dlsym(library, name));
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

GpuEnergyMeter::GpuEnergyMeter(const std::string& pci_bus_id) {
  library_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library_ == nullptr) {
    reason_ = "NVML (libnvidia-ml.so.1, part of the NVIDIA driver) is not installed";
    return;
  }
  const auto init = symbol<NvmlInit>(library_, "nvmlInit_v2");
  if (init == nullptr || init() != 0) {
    reason_ = "NVML did not initialise (no NVIDIA driver running?)";
    return;
  }
  void* device = nullptr;
  int status = -1;
  if (!pci_bus_id.empty()) {
    if (const auto by_pci = symbol<NvmlHandleByPci>(library_, "nvmlDeviceGetHandleByPciBusId_v2")) {
      status = by_pci(pci_bus_id.c_str(), &device);
    }
  }
  if (status != 0) {
    if (const auto by_index =
            symbol<NvmlHandleByIndex>(library_, "nvmlDeviceGetHandleByIndex_v2")) {
      status = by_index(0, &device);
    }
  }
  if (status != 0 || device == nullptr) {
    reason_ = "NVML found no device " + pci_bus_id;
    return;
  }
  handle_ = device;
  device_ = device;
  if (std::isnan(power_watts())) {
    device_ = nullptr;
    reason_ = "the driver does not report this GPU's power";
  }
}

GpuEnergyMeter::~GpuEnergyMeter() {
  if (library_ == nullptr) return;
  if (const auto shutdown = symbol<NvmlShutdown>(library_, "nvmlShutdown")) shutdown();
  dlclose(library_);
}

double GpuEnergyMeter::energy_joules() const {
  if (device_ == nullptr) return kNaN;
  const auto energy = symbol<NvmlEnergy>(library_, "nvmlDeviceGetTotalEnergyConsumption");
  unsigned long long mj = 0;
  if (energy == nullptr || energy(device_, &mj) != 0) return kNaN;
  return static_cast<double>(mj) / 1e3;
}

double GpuEnergyMeter::power_watts() const {
  if (device_ == nullptr) return kNaN;
  const auto power = symbol<NvmlPower>(library_, "nvmlDeviceGetPowerUsage");
  unsigned mw = 0;
  if (power == nullptr || power(device_, &mw) != 0) return kNaN;
  return static_cast<double>(mw) / 1e3;
}

PcieLink GpuEnergyMeter::pcie_link() const {
  PcieLink link;
  if (handle_ == nullptr) return link;
  const auto read = [this](const char* name) {
    const auto fn = symbol<NvmlUnsigned>(library_, name);
    unsigned value = 0;
    return fn != nullptr && fn(handle_, &value) == 0 ? static_cast<int>(value) : 0;
  };
  link.gen = read("nvmlDeviceGetCurrPcieLinkGeneration");
  link.width = read("nvmlDeviceGetCurrPcieLinkWidth");
  link.max_gen = read("nvmlDeviceGetMaxPcieLinkGeneration");
  link.max_width = read("nvmlDeviceGetMaxPcieLinkWidth");
  return link;
}

}  // namespace directgnn
