// How many cores other processes leave free. An OpenMP team splits each parallel loop into
// equal shares, so one thread that shares its core with a busy process holds up the whole
// team: on a 2-core machine beside one busy thread, a 2-thread epoch took 2.5x as long as
// alone, a 1-thread epoch 1.4x (docs/benchmarks.md). A run whose thread count is left to
// directgnn sizes its team with this before each epoch.
#pragma once

#include <chrono>

namespace directgnn {

class FreeCores {
 public:
  // At most `limit` cores are ever reported (the team a run would use on an idle machine).
  explicit FreeCores(int limit);

  // The cores free since the last call (since construction the first time): the machine's
  // cores minus those other processes kept busy, rounded to whole cores, at least 1 and at
  // most `limit`. `limit` where /proc/stat cannot be read.
  int sample();

  // The rule sample() applies: `cores` minus the cores that `others_busy_s` of CPU time over
  // `wall_s` seconds kept busy, rounded to whole cores, clamped to [1, limit].
  static int free_of(int cores, int limit, double others_busy_s, double wall_s);

 private:
  struct Snapshot {
    double busy_s = 0;  // all processes, from /proc/stat
    double own_s = 0;   // this process, all threads
    std::chrono::steady_clock::time_point when;
    bool valid = false;
  };
  static Snapshot take();

  int limit_;
  Snapshot last_;
};

}  // namespace directgnn
