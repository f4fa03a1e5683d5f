#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

namespace cairn {
namespace {

TEST(ThreadPoolTest, RunsEveryTaskExactlyOnce) {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    for (int64_t n : {0, 1, 2, 7, 1000}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      pool.Run(n, [&](int64_t task, int thread_idx) {
        EXPECT_GE(thread_idx, 0);
        EXPECT_LT(thread_idx, threads);
        hits[static_cast<size_t>(task)].fetch_add(1);
      });
      for (auto& h : hits) EXPECT_EQ(h.load(), 1);
    }
  }
}

TEST(ThreadPoolTest, ParallelForCoversRangeInGrainMultiples) {
  ThreadPool pool(3);
  for (int64_t n : {1, 5, 64, 1001}) {
    for (int64_t grain : {1, 4, 32}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      pool.ParallelFor(n, grain, [&](int64_t begin, int64_t end, int) {
        EXPECT_TRUE(begin % grain == 0);
        for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
      }, 4);
      for (auto& h : hits) EXPECT_EQ(h.load(), 1);
    }
  }
}

TEST(ThreadPoolTest, ManySmallSectionsBackToBack) {
  ThreadPool pool(2);
  std::atomic<int64_t> sum{0};
  for (int round = 0; round < 20000; ++round) {
    pool.Run(2, [&](int64_t task, int) { sum.fetch_add(task + 1); });
  }
  EXPECT_EQ(sum.load(), 20000 * 3);
}

}  // namespace
}  // namespace cairn
