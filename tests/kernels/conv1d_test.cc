#include "kernels/conv1d.h"

#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "core/thread_pool.h"
#include "kernels/ref/gated_delta_ref.h"
#include "ops_test_util.h"

namespace cairn::kernels {
namespace {

// Tolerance vs the double-accumulating reference: 4 products of |w| <= 0.5
// and |u| <= 2 summed in F32 with FMA: <= 3 roundings of values <= 4, i.e.
// 1e-6 absolute; SiLU adds <= 3 ulp. Asserted: 2e-6 absolute + 1e-6 relative.
TEST(Conv1dTest, MatchesReferenceWithState) {
  for (int64_t channels : {6144, 37}) {   // Qwen3.5-0.8B conv dim; odd width (tail)
    for (int kernel : {4, 3}) {
      const int64_t n = 9;
      const std::vector<float> x = test::RandomVector(n * channels, -2.0f, 2.0f, 1);
      const std::vector<float> w = test::RandomVector(channels * kernel, -0.5f, 0.5f, 2);
      const std::vector<float> st0 = test::RandomVector((kernel - 1) * channels, -2.0f, 2.0f, 3);
      for (bool silu : {false, true}) {
        std::vector<float> want(x.size()), want_state = st0;
        ref::CausalConv1d(x.data(), channels, n, channels, kernel, w.data(), want_state.data(), silu,
                          want.data(), channels);
        test::ForEachTarget([&] {
          std::vector<float> got(x.size()), state = st0;
          CausalConv1d(x.data(), channels, n, channels, kernel, w.data(), state.data(), silu, got.data(),
                       channels);
          for (size_t i = 0; i < got.size(); ++i) {
            ASSERT_NEAR(got[i], want[i], 2e-6f + 1e-6f * std::fabs(want[i])) << channels << " " << kernel << " " << i;
          }
          EXPECT_TRUE(test::BitEqual(state.data(), want_state.data(), state.size()));
        });
      }
    }
  }
}

// One call over n tokens == random splits (including runs of 1 and 2 tokens,
// shorter than the 3-input history), bit for bit, outputs and state; also in place.
TEST(Conv1dTest, BitExactAcrossSplits) {
  const int64_t channels = 203, n = 50;
  const std::vector<float> x = test::RandomVector(n * channels, -3.0f, 3.0f, 4);
  const std::vector<float> w = test::RandomVector(channels * 4, -1.0f, 1.0f, 5);
  test::ForEachTarget([&] {
    std::vector<float> whole(x.size()), state_whole(3 * channels, 0.0f);
    CausalConv1d(x.data(), channels, n, channels, 4, w.data(), state_whole.data(), true, whole.data(), channels);
    std::mt19937 rng(6);
    std::vector<float> parts = x, state(3 * channels, 0.0f);   // in place
    for (int64_t t = 0; t < n;) {
      const int64_t len = std::min<int64_t>(1 + rng() % 5, n - t);
      CausalConv1d(parts.data() + t * channels, channels, len, channels, 4, w.data(), state.data(), true,
                   parts.data() + t * channels, channels);
      t += len;
    }
    EXPECT_TRUE(test::BitEqual(whole.data(), parts.data(), whole.size()));
    EXPECT_TRUE(test::BitEqual(state_whole.data(), state.data(), state.size()));
  });
}

// The pool overload: row order (out apart from x) and channel ranges on 1 or
// 2 threads give the channel-order call's bits, outputs and state, for runs
// shorter and longer than the history; in place it keeps the channel order.
TEST(Conv1dTest, RowOrderOnThePoolMatchesChannelOrderBitForBit) {
  ThreadPool one(1), two(2);
  for (int64_t channels : {6144, 203, 37}) {
    for (int64_t n : {1, 2, 3, 4, 9, 16, 17, 50}) {
      const std::vector<float> x = test::RandomVector(n * channels, -3.0f, 3.0f, 7);
      const std::vector<float> w = test::RandomVector(channels * 4, -1.0f, 1.0f, 8);
      const std::vector<float> st0 = test::RandomVector(3 * channels, -3.0f, 3.0f, 9);
      for (bool silu : {false, true}) {
        test::ForEachTarget([&] {
          std::vector<float> want(x.size()), want_state = st0;
          CausalConv1d(x.data(), channels, n, channels, 4, w.data(), want_state.data(), silu, want.data(), channels);
          for (ThreadPool* pool : {&one, &two}) {
            std::vector<float> got(x.size()), state = st0;
            CausalConv1d(x.data(), channels, n, channels, 4, w.data(), state.data(), silu, got.data(), channels,
                         *pool);
            ASSERT_TRUE(test::BitEqual(got.data(), want.data(), got.size())) << channels << " x " << n;
            ASSERT_TRUE(test::BitEqual(state.data(), want_state.data(), state.size())) << channels << " x " << n;
            std::vector<float> in_place = x;
            state = st0;
            CausalConv1d(in_place.data(), channels, n, channels, 4, w.data(), state.data(), silu, in_place.data(),
                         channels, *pool);
            ASSERT_TRUE(test::BitEqual(in_place.data(), want.data(), want.size())) << "in place " << channels;
          }
        });
      }
    }
  }
}

// Split runs through the pool overload (row order, a separate output) equal
// one whole call: the window crosses calls through the state.
TEST(Conv1dTest, RowOrderBitExactAcrossSplits) {
  ThreadPool pool(2);
  const int64_t channels = 203, n = 120;
  const std::vector<float> x = test::RandomVector(n * channels, -3.0f, 3.0f, 10);
  const std::vector<float> w = test::RandomVector(channels * 4, -1.0f, 1.0f, 11);
  test::ForEachTarget([&] {
    std::vector<float> whole(x.size()), state_whole(3 * channels, 0.0f);
    CausalConv1d(x.data(), channels, n, channels, 4, w.data(), state_whole.data(), true, whole.data(), channels);
    std::mt19937 rng(12);
    std::vector<float> parts(x.size()), state(3 * channels, 0.0f);
    for (int64_t t = 0; t < n;) {
      const int64_t len = std::min<int64_t>(1 + rng() % 20, n - t);
      CausalConv1d(x.data() + t * channels, channels, len, channels, 4, w.data(), state.data(), true,
                   parts.data() + t * channels, channels, pool);
      t += len;
    }
    EXPECT_TRUE(test::BitEqual(whole.data(), parts.data(), whole.size()));
    EXPECT_TRUE(test::BitEqual(state_whole.data(), state.data(), state.size()));
  });
}

}  // namespace
}  // namespace cairn::kernels
