// GPU power and energy through NVML, loaded at run time (libnvidia-ml.so.1 comes with the
// driver; nothing links against it), so every build runs where no driver is installed.
#pragma once

#include <string>

namespace directgnn {

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

 private:
  void* library_ = nullptr;
  void* device_ = nullptr;
  std::string reason_;
};

}  // namespace directgnn
