// One thread pool for the whole process: the OpenMP runtime pip's torch bundles (libgomp)
// runs ATen's parallel loops, ours, and MKL's products (MKL's GNU-OpenMP threading layer), so
// no second pool spins against it. glibc is told to keep large freed blocks so per-step batch
// buffers do not page-fault afresh every minibatch.
#pragma once

namespace directgnn {

// Sets the threads used everywhere (0 = all cores). Call once at start-up, before any work.
void configure_threads(int num_threads);
// The configured count; in a process that never called configure_threads (Python), torch's.
int num_threads();
// Sizes the OpenMP team of parallel loops started from the calling thread (worker threads
// call it first; they do not inherit the main thread's setting).
void set_thread_team(int num_threads);

// Keeps large allocations in the heap and stops returning memory to the OS after each free.
void configure_allocator();

}  // namespace directgnn
