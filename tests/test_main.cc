#include <gtest/gtest.h>

#include "core/threads.h"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  directgnn::configure_allocator();
  directgnn::configure_threads(2);
  return RUN_ALL_TESTS();
}
