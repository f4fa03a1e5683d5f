#include "kernels/softmax.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/ref/ops_ref.h"
#include "ops_test_util.h"

namespace cairn::kernels {
namespace {

// Tolerance per element, relative: 1e-6 + |x - max| * 2^-24.
//  * x - max is rounded to F32 (as in torch): an absolute argument error of
//    half an ulp of |x - max|, i.e. that much relative error after exp;
//  * exp 1 ulp, the divide 0.5 ulp, and the F32 sum of positive terms
//    (n/lanes sequential adds, ~1e-7 here).
// Plus 1e-30 absolute for underflowed entries.
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
        const float row_max = *std::max_element(x.begin() + i / cols * cols, x.begin() + (i / cols + 1) * cols);
        const float rel = 1e-6f + std::fabs(x[i] - row_max) * 6e-8f;
        ASSERT_NEAR(got[i], want[i], rel * want[i] + 1e-30f) << cols << " " << i;
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
