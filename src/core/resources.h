// What the process has used so far, for the figures commands report.
#pragma once

#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace directgnn {

// Peak resident memory of this process, in bytes.
inline int64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

// CPU time (user + system, all threads) this process has used, in seconds, from
// /proc/self/stat (getrusage where /proc is absent).
inline double process_cpu_seconds() {
  if (FILE* f = std::fopen("/proc/self/stat", "r")) {
    char buffer[1024];
    const size_t n = std::fread(buffer, 1, sizeof buffer - 1, f);
    std::fclose(f);
    buffer[n] = '\0';
    // Fields after the command name, which is in parentheses and may hold spaces.
    const char* p = nullptr;
    for (size_t i = n; i-- > 0;) {
      if (buffer[i] == ')') {
        p = buffer + i + 1;
        break;
      }
    }
    unsigned long utime = 0, stime = 0;
    // state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
    if (p != nullptr && std::sscanf(p, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
                                    &utime, &stime) == 2) {
      return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
    }
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

// Bytes this process has had read from storage (/proc/self/io read_bytes: what the disk
// delivered, page-cache hits not counted); -1 where unknown.
inline int64_t process_read_bytes() {
  std::ifstream in("/proc/self/io");
  std::string key;
  int64_t value = 0;
  while (in >> key >> value) {
    if (key == "read_bytes:") return value;
  }
  return -1;
}

// Memory of the machine from /proc/meminfo, in bytes (0 where unknown).
struct HostMemory {
  int64_t total = 0, available = 0;
};
inline HostMemory host_memory() {
  HostMemory m;
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemTotal:") m.total = kib * 1024;
    if (key == "MemAvailable:") m.available = kib * 1024;
  }
  return m;
}

// Free space for an unprivileged writer on the filesystem holding `path` (or its nearest
// existing parent), in bytes; -1 where unknown.
inline int64_t disk_free_bytes(const std::string& path) {
  std::filesystem::path p = std::filesystem::absolute(path);
  std::error_code ec;
  while (!p.empty() && !std::filesystem::exists(p, ec)) p = p.parent_path();
  struct statvfs fs {};
  if (p.empty() || statvfs(p.c_str(), &fs) != 0) return -1;
  return static_cast<int64_t>(fs.f_bavail) * static_cast<int64_t>(fs.f_frsize);
}

// "12.34 GiB"
inline std::string gib_text(int64_t bytes) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(2);
  out << static_cast<double>(bytes) / (1 << 30) << " GiB";
  return out.str();
}

// "12.00 GiB", or "3.25 MiB" below a GiB.
inline std::string size_text(int64_t bytes) {
  if (bytes >= (int64_t{1} << 30)) return gib_text(bytes);
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(2);
  out << static_cast<double>(bytes) / (1 << 20) << " MiB";
  return out.str();
}

}  // namespace directgnn
