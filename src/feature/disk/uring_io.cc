// io_uring reads through liburing. Built without liburing, this file only says so.
#include <algorithm>
#include <cstring>
#include <exception>
#include <vector>

#include "directgnn/error.h"
#include "feature/disk/extent_io.h"

#if DIRECTGNN_HAVE_LIBURING
#include <liburing.h>
#endif

namespace directgnn::disk {

#if DIRECTGNN_HAVE_LIBURING
namespace {

class Ring {
 public:
  explicit Ring(unsigned depth) : status_(io_uring_queue_init(depth, &ring_, 0)) {}
  ~Ring() {
    if (status_ == 0) io_uring_queue_exit(&ring_);
  }
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;
  int status() const { return status_; }
  io_uring* get() { return &ring_; }

 private:
  io_uring ring_{};
  int status_;
};

// The reads of one call: extents are queued in order, a partial read is queued again for its
// remainder, and after an error nothing new is queued but what is in flight is reaped (it
// writes into the caller's buffer) before the error is thrown.
class UringReads {
 public:
  UringReads(const ExtentTarget& t, const std::vector<ReadExtent>& extents, Ring& ring)
      : t_(t), extents_(extents), ring_(ring), done_(extents.size(), 0) {}

  void run(unsigned depth) {
    while (finished_ < extents_.size() && (!error_ || in_flight_ > 0)) {
      while (!error_ && in_flight_ < depth && next_ < extents_.size()) queue(next_++);
      const int rc = io_uring_submit_and_wait(ring_.get(), 1);
      if (rc < 0 && rc != -EINTR) {
        fail_io(*t_.path, ": io_uring submit failed: ", std::strerror(-rc));
      }
      reap();
    }
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void queue(size_t k) {
    const ReadExtent& e = extents_[k];
    io_uring_sqe* sqe = io_uring_get_sqe(ring_.get());
    const int64_t at = done_[k];
    io_uring_prep_read(sqe, t_.fd, t_.buffer + e.buffer_offset + at,
                       static_cast<unsigned>(e.length - at), static_cast<uint64_t>(e.offset + at));
    io_uring_sqe_set_data(sqe, reinterpret_cast<void*>(k));
    ++in_flight_;
  }

  void reap() {
    io_uring_cqe* cqe = nullptr;
    while (io_uring_peek_cqe(ring_.get(), &cqe) == 0) {
      const auto k = reinterpret_cast<size_t>(io_uring_cqe_get_data(cqe));
      const int res = cqe->res;
      io_uring_cqe_seen(ring_.get(), cqe);
      --in_flight_;
      complete(k, res);
    }
  }

  void complete(size_t k, int res) {
    const ReadExtent& e = extents_[k];
    try {
      if (res == -EINTR || res == -EAGAIN) return queue(k);
      if (res < 0) fail_read(*t_.path, e.offset + done_[k], e.length - done_[k], 0, -res);
      if (res == 0 && done_[k] < e.needed) fail_read(*t_.path, e.offset, e.needed, done_[k], 0);
      done_[k] += res;
      if (done_[k] < e.needed) return queue(k);
      ++finished_;
    } catch (const Error&) {
      if (!error_) error_ = std::current_exception();  // the first failure, its kind kept
    }
  }

  const ExtentTarget& t_;
  const std::vector<ReadExtent>& extents_;
  Ring& ring_;
  std::vector<int64_t> done_;
  size_t next_ = 0, finished_ = 0;
  unsigned in_flight_ = 0;
  std::exception_ptr error_;
};

}  // namespace

void read_with_uring(const ExtentTarget& target, const std::vector<ReadExtent>& extents,
                     int queue_depth) {
  if (extents.empty()) return;
  const auto depth = static_cast<unsigned>(std::max(1, queue_depth));
  Ring ring(depth);
  DGNN_CHECK_IO(ring.status() == 0, *target.path, ": cannot set up io_uring (",
                std::strerror(-ring.status()), "); set disk_io to pread");
  UringReads(target, extents, ring).run(depth);
}

std::string uring_unavailable_reason() {
  static const std::string reason = [] {
    Ring ring(4);
    return ring.status() == 0
               ? std::string()
               : std::string("io_uring_queue_init: ") + std::strerror(-ring.status());
  }();
  return reason;
}

#else

void read_with_uring(const ExtentTarget& target, const std::vector<ReadExtent>&, int) {
  fail(*target.path,
       ": this build has no io_uring (liburing was not found when it was "
       "configured); set disk_io to pread, or install liburing-dev and rebuild");
}

std::string uring_unavailable_reason() { return "this build has no liburing"; }

#endif

}  // namespace directgnn::disk
