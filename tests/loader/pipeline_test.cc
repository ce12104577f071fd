#include "loader/pipeline.h"

#include <dirent.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

namespace directgnn {
namespace {

int thread_count() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
  }
  return n;
}

void jitter(int64_t i) {
  // Uneven production times, so workers finish out of order.
  std::this_thread::sleep_for(std::chrono::microseconds((i * 7919) % 5 * 200));
}

TEST(Pipeline, YieldsEveryItemOnceInOrderForDepths0To4) {
  for (int depth = 0; depth <= 4; ++depth) {
    for (int workers : {1, 2, 3}) {
      std::atomic<int> produced{0};
      Pipeline<int64_t> p(5, 45, depth, workers, [&](int64_t i) {
        jitter(i);
        ++produced;
        return i * i;
      });
      for (int64_t i = 5; i < 45; ++i) ASSERT_EQ(p.next(), i * i) << depth << "/" << workers;
      EXPECT_TRUE(p.done());
      EXPECT_EQ(produced.load(), 40);
      EXPECT_THROW(p.next(), Error);
    }
  }
}

TEST(Pipeline, NeverHoldsMoreThanDepthItemsAhead) {
  for (int depth = 1; depth <= 4; ++depth) {
    std::atomic<int64_t> taken{0};
    std::atomic<int64_t> worst{0};
    Pipeline<int64_t> p(0, 30, depth, 3, [&](int64_t i) {
      const int64_t ahead = i - taken.load();
      int64_t w = worst.load();
      while (ahead > w && !worst.compare_exchange_weak(w, ahead)) {
      }
      return i;
    });
    for (int64_t i = 0; i < 30; ++i) {
      std::this_thread::sleep_for(std::chrono::microseconds(300));
      EXPECT_EQ(p.next(), i);
      taken = i + 1;
    }
    // Item i may start once fewer than `depth` items are claimed beyond those taken.
    EXPECT_LE(worst.load(), depth) << "depth " << depth;
  }
}

TEST(Pipeline, AWorkersExceptionReachesTheCallerAtItsItem) {
  for (int depth = 1; depth <= 4; ++depth) {
    Pipeline<int64_t> p(0, 100, depth, 2, [](int64_t i) {
      jitter(i);
      if (i == 7) throw std::runtime_error("bad minibatch 7");
      return i;
    });
    for (int64_t i = 0; i < 7; ++i) EXPECT_EQ(p.next(), i);
    try {
      p.next();
      ADD_FAILURE() << "expected the worker's exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "bad minibatch 7");
    }
  }
}

TEST(Pipeline, StoppingEarlyJoinsEveryWorkerAndLeaksNoThread) {
  const int before = thread_count();
  for (int depth = 1; depth <= 4; ++depth) {
    std::atomic<int> produced{0};
    {
      Pipeline<std::vector<float>> p(0, 1000, depth, 3, [&](int64_t i) {
        ++produced;
        return std::vector<float>(1000, static_cast<float>(i));
      });
      EXPECT_EQ(p.next()[0], 0.f);
      EXPECT_EQ(p.next()[0], 1.f);
    }  // destroyed with workers blocked on a full buffer
    EXPECT_LE(produced.load(), 2 + depth + 3);
    {
      // Destroyed before anything was taken, and with a producer that throws.
      Pipeline<int64_t> p(0, 50, depth, 2, [](int64_t i) -> int64_t {
        if (i % 3 == 2) throw std::runtime_error("x");
        return i;
      });
    }
  }
  EXPECT_EQ(thread_count(), before);
}

// A draining pipeline stopped after item k has produced exactly items 0 .. k + depth, however
// slowly its worker runs: processes whose producers meet in collectives stop together.
TEST(Pipeline, DrainingStopFinishesExactlyTheItemsWithinDepth) {
  for (int depth = 1; depth <= 3; ++depth) {
    std::atomic<int64_t> last{-1};
    {
      Pipeline<int64_t> p(
          0, 100, depth, 1,
          [&](int64_t i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
            last = i;
            return i;
          },
          {}, /*drain=*/true);
      EXPECT_EQ(p.next(), 0);
      EXPECT_EQ(p.next(), 1);
    }
    EXPECT_EQ(last.load(), 1 + depth) << "depth " << depth;
  }
}

TEST(Pipeline, EmptyRangesAndBadSettings) {
  Pipeline<int> empty(3, 3, 2, 2, [](int64_t) { return 1; });
  EXPECT_TRUE(empty.done());
  EXPECT_THROW(Pipeline<int>(0, 1, -1, 1, [](int64_t) { return 1; }), Error);
  EXPECT_THROW(Pipeline<int>(0, 1, 1, 0, [](int64_t) { return 1; }), Error);
}

}  // namespace
}  // namespace directgnn
