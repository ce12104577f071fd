#include "gpu/placement.h"

#include <algorithm>

#include "core/resources.h"
#include "directgnn/error.h"
#include "gpu/runtime.h"

namespace directgnn::gpu {

void check_pinnable(int64_t bytes, const std::string& parameter, const std::string& what,
                    const std::string& fallback) {
  const HostMemory mem = host_memory();
  if (mem.total == 0) return;  // unknown: let the driver decide
  const int64_t reserve = std::min<int64_t>(mem.total / 8, int64_t{4} << 30);
  DGNN_CHECK_ARG(bytes <= mem.total - reserve, parameter, what, " is ", gib_text(bytes),
                 ", but pinning locks it in RAM and this machine has ", gib_text(mem.total),
                 " (MemTotal in /proc/meminfo; ", gib_text(reserve), " kept for everything else); ",
                 fallback);
}

void check_fits_on_device(int64_t bytes, int device, const std::string& parameter,
                          const std::string& what, const std::string& fallback) {
  const DeviceMemory dev = device_memory(device);
  const int64_t headroom = std::min<int64_t>(dev.total / 10, int64_t{2} << 30);
  DGNN_CHECK_ARG(bytes <= dev.free - headroom, parameter, what, " is ", gib_text(bytes),
                 ", but cuda:", device, " has ", gib_text(dev.free), " free of ",
                 gib_text(dev.total), " (", gib_text(headroom), " kept for training); ", fallback);
}

}  // namespace directgnn::gpu
