#include "core/free_cores.h"

#include <gtest/gtest.h>

#include <thread>

namespace directgnn {
namespace {

TEST(FreeCores, OtherProcessesBusyTimeIsTakenFromTheCores) {
  // 2 cores; another process busy 1 s over 1 s: one core left.
  EXPECT_EQ(FreeCores::free_of(2, 2, 1.0, 1.0), 1);
  // Nothing else running: the limit.
  EXPECT_EQ(FreeCores::free_of(2, 2, 0.0, 1.0), 2);
  EXPECT_EQ(FreeCores::free_of(16, 8, 0.0, 1.0), 8);
  // Rounded to whole cores: 0.4 of a core is noise, 0.6 a busy core.
  EXPECT_EQ(FreeCores::free_of(2, 2, 0.4, 1.0), 2);
  EXPECT_EQ(FreeCores::free_of(2, 2, 0.6, 1.0), 1);
  // 3 busy of 16 over 2 s.
  EXPECT_EQ(FreeCores::free_of(16, 16, 6.0, 2.0), 13);
}

TEST(FreeCores, NeverFewerThanOneNorMoreThanTheLimit) {
  EXPECT_EQ(FreeCores::free_of(2, 2, 5.0, 1.0), 1);   // every core busy: still one thread
  EXPECT_EQ(FreeCores::free_of(2, 2, -1.0, 1.0), 2);  // clock skew does not add cores
  EXPECT_EQ(FreeCores::free_of(4, 0, 0.0, 1.0), 1);
}

TEST(FreeCores, SampleStaysWithinOneAndTheLimit) {
  const int limit = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  FreeCores free(limit);
  EXPECT_EQ(free.sample(), limit);  // too soon after construction to judge
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const int n = free.sample();
  EXPECT_GE(n, 1);
  EXPECT_LE(n, limit);
}

}  // namespace
}  // namespace directgnn
