#include "core/threads.h"

#include <ATen/Parallel.h>
#include <malloc.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include <thread>

#include "directgnn/error.h"

namespace directgnn {
namespace {

int g_num_threads = 0;  // 0: never configured (a library user's process)

}  // namespace

void configure_threads(int num_threads) {
  DGNN_CHECK_ARG(num_threads >= 0, "threads", "must be 0 (all cores) or positive, got ",
                 num_threads);
  if (num_threads == 0)
    num_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  g_num_threads = num_threads;
  at::set_num_threads(num_threads);  // OpenMP's team and MKL's thread count
}

// Unconfigured (the Python package), the count follows torch's (torch.set_num_threads).
int num_threads() { return g_num_threads > 0 ? g_num_threads : at::get_num_threads(); }

void set_thread_team(int n) {
#ifdef _OPENMP
  // The OpenMP team size is a per-thread setting: a new thread starts from the runtime's
  // default (all cores), not from what configure_threads() set on the main thread.
  omp_set_num_threads(std::max(1, n));
#else
  (void)n;
#endif
}

void configure_allocator() {
  // Serve large blocks from the heap (mmap'd chunks are unmapped on every free) and never
  // trim: the next minibatch reuses the same pages.
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, -1);
  mallopt(M_TOP_PAD, 64 << 20);
}

}  // namespace directgnn
