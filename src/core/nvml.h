// GPU power, energy and PCIe link through NVML, loaded at run time (libnvidia-ml.so.1 comes with
// the driver; nothing links against it), so every build runs where no driver is installed.
#pragma once

#include <string>

namespace directgnn {

// A PCIe link as NVML reports it; 0 where unknown. An idle link may train down to Gen1 to save
// power: read `gen` while data moves.
struct PcieLink {
  int gen = 0, width = 0;          // now
  int max_gen = 0, max_width = 0;  // the most the GPU and its slot allow
};

class GpuEnergyMeter {
 public:
  // `pci_bus_id` names the GPU (as CUDA reports it: CUDA and NVML number devices differently
  // under CUDA_VISIBLE_DEVICES); empty picks NVML's device 0.
  explicit GpuEnergyMeter(const std::string& pci_bus_id);
  ~GpuEnergyMeter();
  GpuEnergyMeter(const GpuEnergyMeter&) = delete;
  GpuEnergyMeter& operator=(const GpuEnergyMeter&) = delete;

  // Whether power can be read; reason() says why not.
  bool available() const { return device_ != nullptr; }
  const std::string& reason() const { return reason_; }
  // Energy used by the GPU since the driver loaded, in joules (NaN where the GPU does not
  // count it: before Volta).
  double energy_joules() const;
  // Power draw now, in watts (NaN when unavailable).
  double power_watts() const;
  // The GPU's PCIe link now (all 0 where NVML or the GPU is not found).
  PcieLink pcie_link() const;

 private:
  void* library_ = nullptr;
  void* handle_ = nullptr;  // the GPU, where NVML found it
  void* device_ = nullptr;  // the same, where its power can be read
  std::string reason_;
};

}  // namespace directgnn
