// What the process has used so far, for the figures commands report.
#pragma once

#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>

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

}  // namespace directgnn
