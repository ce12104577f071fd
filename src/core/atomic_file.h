// Crash-safe writes: data goes to a temporary name in the destination's directory, is
// flushed to disk, and only then renamed over the destination, so a reader sees the old
// complete file or the new complete one, never a torn one.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

namespace directgnn {

// A file written piece by piece under a temporary name beside `path`; commit() flushes it to
// disk and renames it onto `path`. Destroyed uncommitted (an error, a crash unwinding), the
// temporary is removed and any previous file at `path` is untouched.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Throws naming the path (and the full disk, when it is full).
  void write(std::string_view data);
  void commit();

 private:
  std::string path_;
  std::string temp_;
  int fd_ = -1;
  bool committed_ = false;
};

// Writes the concatenation of `parts` to `path` atomically. Throws directgnn::Error naming
// the path on failure (disk full, unwritable directory), leaving any previous file intact.
void write_file_atomic(const std::string& path, std::initializer_list<std::string_view> parts);
inline void write_file_atomic(const std::string& path, std::string_view data) {
  write_file_atomic(path, {data});
}

// A temporary directory beside `final_path`; `commit()` renames it onto `final_path`
// (which must not exist, or be an empty directory). Removed recursively if never committed.
class TempDir {
 public:
  explicit TempDir(const std::string& final_path);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return temp_path_; }
  void commit();

 private:
  std::string final_path_;
  std::string temp_path_;
  bool committed_ = false;
};

}  // namespace directgnn
