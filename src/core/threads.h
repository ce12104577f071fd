// One thread pool for the whole process. ATen's OpenMP pool runs every parallel loop;
// OpenBLAS is kept single-threaded so its own pthreads never spin against OpenMP's on the
// same cores, and the heavy products split their rows over the OpenMP pool instead
// (see nn/linear.h). glibc is told to keep large freed blocks so per-step batch buffers do
// not page-fault afresh every minibatch.
#pragma once

namespace directgnn {

// Sets the threads used everywhere (0 = all cores). Call once at start-up, before any work.
void configure_threads(int num_threads);
int num_threads();
// Sizes the OpenMP team of parallel loops started from the calling thread (worker threads
// call it first; they do not inherit the main thread's setting).
void set_thread_team(int num_threads);

// Keeps large allocations in the heap and stops returning memory to the OS after each free.
void configure_allocator();

}  // namespace directgnn
