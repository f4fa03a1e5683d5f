#include "sampling/fast_exp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace cairn::sampling {
namespace {

TEST(FastExpTest, MatchesStdExpToAFewUlp) {
  EXPECT_EQ(FastExp(0.0f), 1.0f);  // the sampler relies on w_max == 1 exactly
  double worst = 0.0;
  for (float x = -87.0f; x <= 88.0f; x += 0.000731f) {
    const double want = std::exp(static_cast<double>(x));
    const double rel = std::fabs(FastExp(x) - want) / want;
    worst = std::max(worst, rel);
  }
  EXPECT_LT(worst, 3e-7);
}

TEST(FastExpTest, UnderflowsToZero) {
  EXPECT_EQ(FastExp(-88.0f), 0.0f);
  EXPECT_EQ(FastExp(-1000.0f), 0.0f);
  EXPECT_EQ(FastExp(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_GT(FastExp(-87.0f), 0.0f);
}

}  // namespace
}  // namespace cairn::sampling
