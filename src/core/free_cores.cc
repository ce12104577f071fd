#include "core/free_cores.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <thread>

#include "core/resources.h"

namespace directgnn {

FreeCores::FreeCores(int limit) : limit_(std::max(1, limit)), last_(take()) {}

FreeCores::Snapshot FreeCores::take() {
  Snapshot s;
  s.when = std::chrono::steady_clock::now();
  s.own_s = process_cpu_seconds();
  std::ifstream stat("/proc/stat");
  std::string label;
  // cpu  user nice system idle iowait irq softirq steal ...
  unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0,
                     steal = 0;
  if (!(stat >> label >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) ||
      label != "cpu") {
    return s;
  }
  const double ticks = static_cast<double>(std::max(1L, sysconf(_SC_CLK_TCK)));
  s.busy_s = static_cast<double>(user + nice + system + irq + softirq) / ticks;
  s.valid = true;
  return s;
}

int FreeCores::sample() {
  const Snapshot now = take();
  const Snapshot before = last_;
  last_ = now;
  const double wall = std::chrono::duration<double>(now.when - before.when).count();
  if (!now.valid || !before.valid || wall < 0.05) return limit_;
  const double others = std::max(0.0, (now.busy_s - before.busy_s) - (now.own_s - before.own_s));
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return free_of(cores, limit_, others, wall);
}

int FreeCores::free_of(int cores, int limit, double others_busy_s, double wall_s) {
  const int busy = static_cast<int>(std::floor(std::max(0.0, others_busy_s) / wall_s + 0.5));
  return std::clamp(cores - busy, 1, std::max(1, limit));
}

}  // namespace directgnn
