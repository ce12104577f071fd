#include "core/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "directgnn/error.h"

namespace directgnn {
namespace fs = std::filesystem;
namespace {

std::string parent_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

std::string unique_suffix() {
  static int counter = 0;
  return ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
}

// fsyncs a directory so a rename inside it survives a crash.
void sync_directory(const std::string& dir) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;  // Best effort: some filesystems do not allow opening directories.
  fsync(fd);
  close(fd);
}

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  temp_ = path_ + unique_suffix();
  fd_ = open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    fail_io("cannot write ", path_, ": ", std::strerror(errno),
            " (check that the directory exists and is writable)");
  }
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) close(fd_);
  if (!committed_) unlink(temp_.c_str());
}

void AtomicFile::write(std::string_view data) {
  size_t written = 0;
  while (written < data.size()) {
    // Bounded chunks: some kernels refuse single writes above 2 GiB.
    const size_t chunk = std::min<size_t>(data.size() - written, size_t{1} << 30);
    const ssize_t n = ::write(fd_, data.data() + written, chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int saved = n < 0 ? errno : ENOSPC;
      fail_io("cannot write ", path_, ": ", std::strerror(saved),
              saved == ENOSPC ? " (the disk is full; free space and retry)" : "");
    }
    written += static_cast<size_t>(n);
  }
}

void AtomicFile::commit() {
  const int fd = fd_;
  fd_ = -1;
  if (fsync(fd) != 0 || close(fd) != 0) {
    fail_io("cannot flush ", path_, ": ", std::strerror(errno));
  }
  if (std::rename(temp_.c_str(), path_.c_str()) != 0) {
    fail_io("cannot rename ", temp_, " to ", path_, ": ", std::strerror(errno));
  }
  committed_ = true;
  sync_directory(parent_of(path_));
}

void write_file_atomic(const std::string& path, std::initializer_list<std::string_view> parts) {
  AtomicFile file(path);
  for (std::string_view data : parts) file.write(data);
  file.commit();
}

TempDir::TempDir(const std::string& final_path) : final_path_(final_path) {
  std::string trimmed = final_path;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  final_path_ = trimmed;
  temp_path_ = trimmed + unique_suffix();
  std::error_code ec;
  fs::create_directories(temp_path_, ec);
  if (ec) fail("cannot create directory ", temp_path_, ": ", ec.message());
}

TempDir::~TempDir() {
  if (!committed_) {
    std::error_code ec;
    fs::remove_all(temp_path_, ec);
  }
}

void TempDir::commit() {
  std::error_code ec;
  if (fs::exists(final_path_, ec)) {
    if (!fs::is_directory(final_path_) || !fs::is_empty(final_path_)) {
      fail("output ", final_path_, " already exists; remove it or choose another path");
    }
    fs::remove(final_path_, ec);
  }
  sync_directory(temp_path_);
  if (std::rename(temp_path_.c_str(), final_path_.c_str()) != 0) {
    fail_io("cannot rename ", temp_path_, " to ", final_path_, ": ", std::strerror(errno));
  }
  committed_ = true;
  sync_directory(parent_of(final_path_));
}

}  // namespace directgnn
