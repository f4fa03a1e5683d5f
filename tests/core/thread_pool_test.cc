#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <thread>
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

// Workers that lag (descheduled, or busy in a long task) must neither lose
// nor repeat tasks, nor run a later section's job with an earlier one's
// bounds: every section's tasks run exactly once, with the right section.
TEST(ThreadPoolTest, LaggingWorkersNeverMixSections) {
  ThreadPool pool(4);  // more threads than this machine may have cores
  const int sections = getenv("CAIRN_SANITIZED") ? 300 : 3000;
  std::vector<std::atomic<int>> hits(64);
  for (int s = 0; s < sections; ++s) {
    const int64_t n = 1 + s % 37;
    for (int64_t t = 0; t < n; ++t) hits[t].store(0);
    std::atomic<int> wrong_section{0};
    pool.Run(n, [&, s, n](int64_t task, int thread) {
      if (task >= n) wrong_section.fetch_add(1);
      hits[task].fetch_add(1);
      if (thread != 0 && (task + s) % 11 == 0) std::this_thread::yield();  // a worker falls behind
    });
    for (int64_t t = 0; t < n; ++t) ASSERT_EQ(hits[t].load(), 1) << "section " << s << " task " << t;
    ASSERT_EQ(wrong_section.load(), 0);
  }
}

// A worker stuck in a task does not stop the others: when a worker holds
// task 0 until the other 49 are done, the caller runs them all meanwhile.
TEST(ThreadPoolTest, CallerTakesOverRemainingTasks) {
  ThreadPool pool(2);
  std::atomic<int> done{0};
  pool.Run(50, [&](int64_t task, int thread) {
    if (task == 0 && thread != 0) {
      while (done.load() < 49) std::this_thread::yield();
    }
    done.fetch_add(1);
  });
  EXPECT_EQ(done.load(), 50);
}

}  // namespace
}  // namespace cairn
