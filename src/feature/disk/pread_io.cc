#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

#include "directgnn/error.h"
#include "feature/disk/extent_io.h"

namespace directgnn::disk {

void fail_read(const std::string& path, int64_t offset, int64_t wanted, int64_t got, int error) {
  if (error != 0) {
    fail_io(path, ": reading ", wanted, " bytes at offset ", offset,
            " failed: ", std::strerror(error), " (is the disk healthy and the file still there?)");
  }
  fail_io(path, ": short read at offset ", offset, ": wanted ", wanted, " bytes, got ", got,
          "; the file ended early, so it was truncated or replaced after it was opened. Restore "
          "it (or re-create it with directgnn convert/generate) and resume from the last "
          "checkpoint");
}

namespace {

// Reads one extent to at least its needed bytes.
void read_extent(const ExtentTarget& t, const ReadExtent& e) {
  int64_t got = 0;
  while (got < e.needed) {
    const ssize_t n = pread(t.fd, t.buffer + e.buffer_offset + got,
                            static_cast<size_t>(e.length - got), e.offset + got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail_read(*t.path, e.offset + got, e.length - got, 0, errno);
    if (n == 0) fail_read(*t.path, e.offset, e.needed, got, 0);
    got += n;
  }
}

}  // namespace

void read_with_pread(const ExtentTarget& target, const std::vector<ReadExtent>& extents,
                     int threads) {
  const auto count = static_cast<int64_t>(extents.size());
  std::atomic<int64_t> next{0};
  std::mutex mutex;
  std::exception_ptr error;  // the first failure, rethrown as it was (its kind kept)
  auto work = [&] {
    for (int64_t k = next++; k < count; k = next++) {
      try {
        read_extent(target, extents[static_cast<size_t>(k)]);
      } catch (const std::exception&) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!error) error = std::current_exception();
        next = count;  // the others stop after their current read
      }
    }
  };
  const int64_t team = std::min<int64_t>(std::max(threads, 1), count);
  std::vector<std::thread> pool;
  for (int64_t t = 1; t < team; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace directgnn::disk
