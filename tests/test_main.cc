#include <gtest/gtest.h>

#include <cstdlib>

#include "core/threads.h"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  // torch's TCPStore names each socket's peer by a reverse DNS lookup (getnameinfo) as it
  // connects and accepts; 127.0.0.1's mapped IPv6 form is in no hosts file, so each lookup goes
  // to the resolver. Where that resolver drops a query (this sandbox's does, about 5% of them),
  // glibc waits 5 s, longer than the store's 2 s connect attempt, and a rank fails to join.
  // One second and one try bound the wait; the lookup then falls back to the number. The ranks
  // the end-to-end tests start inherit it.
  setenv("RES_OPTIONS", "timeout:1 attempts:1", /*overwrite=*/0);
  // What ProcessGroup::create sets (dist/process_group.cc), set here before the tests' rank
  // threads read the environment.
  setenv("TORCH_FR_BUFFER_SIZE", "0", /*overwrite=*/0);
  directgnn::configure_allocator();
  directgnn::configure_threads(2);
  return RUN_ALL_TESTS();
}
