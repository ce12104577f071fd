// What the process has used so far, for the figures commands report.
#pragma once

#include <sys/resource.h>

#include <cstdint>

namespace directgnn {

// Peak resident memory of this process, in bytes.
inline int64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

}  // namespace directgnn
