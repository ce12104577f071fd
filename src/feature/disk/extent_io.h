// The two ways RowFile reads a plan's extents into its buffer. Both read each extent to at
// least its `needed` bytes, retrying partial reads, and throw naming the file and the offset
// on an error or a read that ends early (the file shrank after it was opened).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "feature/disk/read_plan.h"

namespace directgnn::disk {

struct ExtentTarget {
  int fd = -1;
  const std::string* path = nullptr;
  uint8_t* buffer = nullptr;
};

// `threads` threads, each one pread at a time.
void read_with_pread(const ExtentTarget& target, const std::vector<ReadExtent>& extents,
                     int threads);
// One io_uring ring with up to `queue_depth` reads in flight (throws when this build has no
// liburing or the kernel refuses the ring).
void read_with_uring(const ExtentTarget& target, const std::vector<ReadExtent>& extents,
                     int queue_depth);
// Empty when a ring can be made here; otherwise why not (no liburing in this build, or the
// kernel's answer to io_uring_queue_init).
std::string uring_unavailable_reason();

// The message of a failed or short read.
[[noreturn]] void fail_read(const std::string& path, int64_t offset, int64_t wanted, int64_t got,
                            int error);

}  // namespace directgnn::disk
