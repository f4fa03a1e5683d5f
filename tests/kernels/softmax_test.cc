#include "kernels/softmax.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/ref/ops_ref.h"
#include "ops_test_util.h"

namespace cairn::kernels {
namespace {

// Tolerance: relative 1e-6 per element. The F32 sum of <= 1000 terms in lanes
// has relative error <= ~n/lanes * 2^-24 (~1e-5 worst case, ~1e-7 typical
// for positive terms); exp adds 1 ulp, the divide 0.5 ulp. We assert 2e-6
// relative, plus 1e-30 absolute for underflowed entries.
TEST(SoftmaxTest, MatchesReference) {
  for (int64_t cols : {1, 3, 8, 17, 100, 1000}) {
    const int64_t rows = 5;
    std::vector<float> x = test::RandomVector(rows * cols, -20.0f, 20.0f, static_cast<uint32_t>(cols));
    x[0] = 1e4f;  // large logits are fine (max-subtracted)
    std::vector<float> want(x.size());
    ref::Softmax(x.data(), want.data(), rows, cols);
    test::ForEachTarget([&] {
      std::vector<float> got(x.size());
      Softmax(x.data(), got.data(), rows, cols);
      for (size_t i = 0; i < x.size(); ++i) {
        ASSERT_NEAR(got[i], want[i], 2e-6f * want[i] + 1e-30f) << cols << " " << i;
      }
      // In place gives the same bits.
      std::vector<float> inplace = x;
      Softmax(inplace.data(), inplace.data(), rows, cols);
      EXPECT_TRUE(test::BitEqual(inplace.data(), got.data(), x.size()));
    });
  }
}

TEST(SoftmaxTest, MaskedEntriesGetZero) {
  const float inf = INFINITY;
  std::vector<float> x = {1.0f, -inf, 2.0f, -inf, -inf};
  std::vector<float> y(5);
  Softmax(x.data(), y.data(), 1, 5);
  EXPECT_EQ(y[1], 0.0f);
  EXPECT_EQ(y[3], 0.0f);
  EXPECT_NEAR(y[0] + y[2], 1.0f, 1e-7f);
}

}  // namespace
}  // namespace cairn::kernels
