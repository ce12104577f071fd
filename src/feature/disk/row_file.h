// A feature table read from its .npy file with explicit positional reads (the `disk`
// placement, docs/disk-features.md), never through page faults of a memory mapping.
//
// Opening parses the header and checks the file holds every row, so a truncated or resized
// file fails there with its expected and actual size, not with SIGBUS mid-epoch. read_rows
// plans the reads (read_plan.h: sorted, deduplicated, merged by 4 KiB block), reads the
// extents into one buffer and copies each row to its place in the output, in request order.
// A read error or a short read (the file shrank after opening) throws naming file and offset.
//
// Backends: io_uring (liburing, when the build found it and the kernel allows a ring) keeps up
// to `queue_depth` reads in flight from the calling thread; pread runs `io_threads` threads
// each issuing one read at a time. `direct` opens the file O_DIRECT (block-aligned reads into
// a block-aligned buffer, no page cache); otherwise reads go through the page cache with
// read-ahead turned off (POSIX_FADV_RANDOM). read_rows may be called from several threads.
#pragma once

#include <ATen/Tensor.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "feature/disk/read_plan.h"
#include "feature/disk/seen_rows.h"

namespace directgnn::disk {

enum class Backend { kAuto, kIoUring, kPread };

Backend parse_backend(const std::string& name);
std::string backend_name(Backend backend);

struct RowFileOptions {
  Backend backend = Backend::kAuto;  // auto: pread (measured faster; docs/benchmarks.md)
  bool direct = false;               // O_DIRECT reads
  int io_threads = 8;                // pread backend
  int queue_depth = 64;              // io_uring backend
};

// Whether this build has io_uring, and whether this kernel lets the process make a ring; if
// not, why (empty when it works).
std::string io_uring_unavailable_reason();

class RowFile {
 public:
  RowFile(const std::string& path, const RowFileOptions& options);
  ~RowFile();
  RowFile(const RowFile&) = delete;
  RowFile& operator=(const RowFile&) = delete;

  // Rows `ids` (int32 or int64, CPU, contiguous, already range-checked) into `out`
  // (contiguous CPU [len(ids), dim], the table's dtype; pinned memory works the same).
  void read_rows(const at::Tensor& ids, at::Tensor& out) const;
  // The same into chosen rows of a larger `out`: request i lands in row out_rows[i] (each
  // below out.size(0); a cache reads its misses straight into the batch this way).
  void read_rows(const at::Tensor& ids, at::Tensor& out, const int64_t* out_rows) const;

  const std::string& path() const { return path_; }
  int64_t num_rows() const { return rows_; }
  int64_t dim() const { return dim_; }
  int64_t row_bytes() const { return row_bytes_; }
  int64_t data_offset() const { return data_offset_; }
  at::ScalarType dtype() const { return dtype_; }
  Backend backend() const { return backend_; }  // resolved, never kAuto
  // Asks the kernel to drop the file's pages from the page cache (buffered reads only): once a
  // cache holds rows in RAM, their page-cache copies would only crowd out the graph and the
  // misses.
  void drop_page_cache() const;
  // e.g. "io_uring, buffered, data at byte 4096" for the run's header.
  std::string describe() const;

  // Totals since the file was opened: rows asked for (repeats counted) and their bytes, rows
  // read (each once per call) and the bytes of the extents read for them. A cache in front
  // of the reads would count its misses here.
  // read_s is the wall time spent waiting for reads, summed over the calling threads.
  struct Counters {
    int64_t rows_requested = 0, bytes_requested = 0, rows_read = 0, bytes_read = 0;
    double read_s = 0;
  };
  Counters counters() const;
  // The distinct rows read since the last clear (a cache's misses, each counted once).
  int64_t distinct_rows_read() const { return read_seen_->count(); }
  void clear_distinct_rows() const { read_seen_->clear(); }

 private:
  void read_extents(const ReadPlan& plan, uint8_t* buffer) const;

  std::string path_;
  RowFileOptions options_;
  Backend backend_ = Backend::kPread;
  int fd_ = -1;
  int64_t rows_ = 0, dim_ = 0, row_bytes_ = 0, data_offset_ = 0, file_bytes_ = 0;
  at::ScalarType dtype_ = at::kFloat;
  mutable std::atomic<int64_t> rows_requested_{0}, rows_read_{0}, bytes_read_{0}, read_ns_{0};
  std::unique_ptr<SeenRows> read_seen_;
};

}  // namespace directgnn::disk
