// Names of gpu::HostSync (gpu/runtime.h), in every build; setting it is the runtime's.
#include "directgnn/error.h"
#include "gpu/runtime.h"

namespace directgnn::gpu {

HostSync parse_host_sync(const std::string& name) {
  for (const HostSync s :
       {HostSync::kAuto, HostSync::kSpin, HostSync::kYield, HostSync::kBlocking}) {
    if (name == host_sync_name(s)) return s;
  }
  fail_argument("cuda_sync", "'", name,
                "' is not a way to wait for the GPU: use auto, spin, yield or blocking");
}

std::string host_sync_name(HostSync sync) {
  switch (sync) {
    case HostSync::kAuto:
      return "auto";
    case HostSync::kSpin:
      return "spin";
    case HostSync::kYield:
      return "yield";
    case HostSync::kBlocking:
      return "blocking";
  }
  return "auto";
}

}  // namespace directgnn::gpu
