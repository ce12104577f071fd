#include "feature/disk/row_file.h"

#include <ATen/Parallel.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "directgnn/error.h"
#include "feature/disk/extent_io.h"
#include "io/npy.h"

namespace directgnn::disk {
namespace {

// Reads exactly `bytes` at `offset` (the header); throws naming the file.
std::string read_exactly(int fd, const std::string& path, int64_t offset, int64_t bytes) {
  std::string out(static_cast<size_t>(bytes), '\0');
  int64_t got = 0;
  while (got < bytes) {
    const ssize_t n = pread(fd, out.data() + got, static_cast<size_t>(bytes - got), offset + got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      fail_io(path, ": cannot read its .npy header (",
              n < 0 ? std::strerror(errno) : "the file is too short", ")");
    got += n;
  }
  return out;
}

NpyHeader read_header(int fd, const std::string& path) {
  const std::string prefix = read_exactly(fd, path, 0, 12);
  const auto* p = reinterpret_cast<const uint8_t*>(prefix.data());
  size_t total = 12;
  if (p[6] == 1) total = 10 + (p[8] | (size_t{p[9]} << 8));
  if (p[6] == 2 || p[6] == 3) {
    total = 12 + (p[8] | (size_t{p[9]} << 8) | (size_t{p[10]} << 16) | (size_t{p[11]} << 24));
  }
  const std::string text = read_exactly(fd, path, 0, static_cast<int64_t>(total));
  return parse_npy_header(reinterpret_cast<const uint8_t*>(text.data()), text.size(), path);
}

struct Layout {
  at::ScalarType dtype = at::kFloat;
  int64_t rows = 0, dim = 0, row_bytes = 0, data_offset = 0, file_bytes = 0;
};

// The header, read through a buffered descriptor (O_DIRECT cannot read 12 bytes), and the
// check that the file holds exactly what the header promises.
Layout read_layout(int fd, const std::string& path) {
  const NpyHeader header = read_header(fd, path);
  Layout l;
  l.dtype = npy_scalar_type(header.descr, path);
  DGNN_CHECK_IO(header.shape.size() == 2 && !header.fortran_order, path,
                ": features disk needs a 2-D C-order [N, F] array, got shape of ",
                header.shape.size(), " dimension(s)");
  l.rows = header.shape[0];
  l.dim = header.shape[1];
  l.row_bytes = l.dim * static_cast<int64_t>(c10::elementSize(l.dtype));
  l.data_offset = static_cast<int64_t>(header.data_offset);
  struct stat st {};
  DGNN_CHECK_IO(fstat(fd, &st) == 0, path, ": cannot stat: ", std::strerror(errno));
  l.file_bytes = static_cast<int64_t>(st.st_size);
  const int64_t expected = l.data_offset + l.rows * l.row_bytes;
  DGNN_CHECK_IO(l.file_bytes == expected, path, ": is ", l.file_bytes, " bytes, but its header (",
                l.rows, " rows of ", l.row_bytes, " bytes after a ", l.data_offset,
                "-byte header) needs exactly ", expected,
                "; the file was truncated or resized. Re-create it (directgnn convert or "
                "generate) or restore it from where it came");
  return l;
}

// The same file opened O_DIRECT, replacing (closing) `fd`.
int reopen_direct(const std::string& path, int fd) {
  const int direct = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
  if (direct < 0) {
    fail_io(path, ": cannot open with O_DIRECT: ", std::strerror(errno),
            errno == EINVAL ? " (this file system refuses O_DIRECT; turn disk_direct off)" : "");
  }
  close(fd);
  return direct;
}

// A block-aligned buffer per reading thread, grown as batches need and kept (a fresh one per
// batch would fault in and zero every page again).
uint8_t* thread_buffer(int64_t bytes) {
  struct Buffer {
    void* data = nullptr;
    int64_t size = 0;
    ~Buffer() { std::free(data); }
  };
  thread_local Buffer buffer;
  if (buffer.size < bytes) {
    std::free(buffer.data);
    buffer.data = nullptr;
    buffer.size = 0;
    // aligned_alloc wants a multiple of the alignment; buffered plans need not be whole blocks.
    bytes = (bytes + kBlockBytes - 1) / kBlockBytes * kBlockBytes;
    void* data = std::aligned_alloc(kBlockBytes, static_cast<size_t>(bytes));
    DGNN_CHECK(data != nullptr, "features disk: cannot allocate a read buffer of ", bytes,
               " bytes");
    buffer.data = data;
    buffer.size = bytes;
  }
  return static_cast<uint8_t*>(buffer.data);
}

Backend resolve_backend(Backend asked, bool direct) {
  if (asked != Backend::kAuto) {
    if (asked == Backend::kIoUring) {
      const std::string why = uring_unavailable_reason();
      DGNN_CHECK_ARG(why.empty(), "disk_io", "io_uring is not available here (", why,
                     "); use pread or auto");
    }
    return asked;
  }
  // Measured on big23 (docs/benchmarks.md): buffered io_uring reads ran 3x slower than the
  // pread team (a page-cache miss is handed to the kernel's io-wq workers), so buffered auto is
  // pread. O_DIRECT reads of MAG240M-shaped rows (1.5 KiB) took 1.35x as long with the team
  // as with a ring (and twice the CPU), so direct auto is io_uring where a ring can be made.
  return direct && uring_unavailable_reason().empty() ? Backend::kIoUring : Backend::kPread;
}

}  // namespace

Backend parse_backend(const std::string& name) {
  if (name == "auto") return Backend::kAuto;
  if (name == "io_uring") return Backend::kIoUring;
  if (name == "pread") return Backend::kPread;
  fail_argument("disk_io", "'", name, "' is not a disk reader (use auto, io_uring or pread)");
}

std::string backend_name(Backend backend) {
  switch (backend) {
    case Backend::kAuto:
      return "auto";
    case Backend::kIoUring:
      return "io_uring";
    case Backend::kPread:
      return "pread";
  }
  return "unknown";
}

std::string io_uring_unavailable_reason() { return uring_unavailable_reason(); }

RowFile::RowFile(const std::string& path, const RowFileOptions& options)
    : path_(path), options_(options) {
  DGNN_CHECK_ARG(options.io_threads >= 1 && options.queue_depth >= 1, "disk_io",
                 "io_threads and queue_depth must be positive");
  backend_ = resolve_backend(options.backend, options.direct);
  fd_ = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) fail_io(path, ": cannot open for features disk: ", std::strerror(errno));
  try {
    const Layout layout = read_layout(fd_, path);
    dtype_ = layout.dtype;
    rows_ = layout.rows;
    dim_ = layout.dim;
    row_bytes_ = layout.row_bytes;
    data_offset_ = layout.data_offset;
    file_bytes_ = layout.file_bytes;
    read_seen_ = std::make_unique<SeenRows>(rows_);
    if (options.direct) fd_ = reopen_direct(path, fd_);
  } catch (...) {
    close(fd_);
    throw;
  }
  // Rows are wanted at random: read-ahead around each would read what no batch asked for.
  if (!options.direct) posix_fadvise(fd_, 0, 0, POSIX_FADV_RANDOM);
}

RowFile::~RowFile() { close(fd_); }

std::string RowFile::describe() const {
  return backend_name(backend_) + (options_.direct ? ", O_DIRECT" : ", buffered") +
         ", data at byte " + std::to_string(data_offset_) +
         (data_offset_ % kBlockBytes == 0 ? " (4 KiB-aligned)" : " (not 4 KiB-aligned)");
}

void RowFile::drop_page_cache() const {
  if (!options_.direct) posix_fadvise(fd_, 0, 0, POSIX_FADV_DONTNEED);
}

RowFile::Counters RowFile::counters() const {
  Counters c;
  c.rows_requested = rows_requested_;
  c.bytes_requested = c.rows_requested * row_bytes_;
  c.rows_read = rows_read_;
  c.bytes_read = bytes_read_;
  c.read_s = 1e-9 * static_cast<double>(read_ns_);
  return c;
}

void RowFile::read_extents(const ReadPlan& plan, uint8_t* buffer) const {
  const ExtentTarget target{fd_, &path_, buffer};
  if (backend_ == Backend::kIoUring)
    return read_with_uring(target, plan.extents, options_.queue_depth);
  read_with_pread(target, plan.extents, options_.io_threads);
}

void RowFile::read_rows(const at::Tensor& ids, at::Tensor& out) const {
  DGNN_CHECK(out.dim() == 2 && out.size(0) == ids.numel(), path_,
             ": disk gather output must have one row per id (", ids.numel(), "), got ",
             out.sizes());
  read_rows(ids, out, nullptr);
}

void RowFile::read_rows(const at::Tensor& ids, at::Tensor& out, const int64_t* out_rows) const {
  const int64_t count = ids.numel();
  DGNN_CHECK(out.is_contiguous() && out.device().is_cpu() && out.dim() == 2 &&
                 out.size(1) == dim_ && out.scalar_type() == dtype_,
             path_, ": disk gather output must be a contiguous CPU [rows, ", dim_, "] ", dtype_,
             " tensor");
  if (count == 0) return;
  PlanShape shape{data_offset_, row_bytes_};
  shape.align = options_.direct ? kBlockBytes : 1;
  const ReadPlan plan = ids.scalar_type() == at::kInt
                            ? plan_reads(ids.data_ptr<int32_t>(), count, shape)
                            : plan_reads(ids.data_ptr<int64_t>(), count, shape);
  rows_requested_ += count;
  rows_read_ += plan.unique_rows;
  read_seen_->add(ids);
  bytes_read_ += plan.buffer_bytes;
  uint8_t* buffer = thread_buffer(plan.buffer_bytes);
  const auto start = std::chrono::steady_clock::now();
  read_extents(plan, buffer);
  read_ns_ +=
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count();
  auto* dst = static_cast<uint8_t*>(out.data_ptr());
  const int64_t grain = std::max<int64_t>(1, 65536 / row_bytes_);
  at::parallel_for(0, count, grain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t row = out_rows != nullptr ? out_rows[i] : i;
      std::memcpy(dst + row * row_bytes_, buffer + plan.source[static_cast<size_t>(i)],
                  static_cast<size_t>(row_bytes_));
    }
  });
}

}  // namespace directgnn::disk
