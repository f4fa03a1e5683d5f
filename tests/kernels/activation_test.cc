#include "kernels/activation.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/ref/ops_ref.h"
#include "ops_test_util.h"

namespace cairn::kernels {
namespace {

using test::ForEachTarget;
using test::RandomVector;
using test::UlpDistance;

// Inputs covering the useful range plus edge values; n = 1000 is not a
// multiple of any vector width, so the padded tail path is exercised.
std::vector<float> Inputs() {
  std::vector<float> x = RandomVector(1000, -30.0f, 30.0f, 1);
  const float edges[] = {0.0f, -0.0f, 1e-30f, -1e-30f, 20.0f, 20.0001f, 19.999f, -87.0f, 87.0f, -100.0f, 88.0f};
  for (size_t i = 0; i < std::size(edges); ++i) x[i * 7] = edges[i];
  return x;
}

// Max error: max over elements of ulp distance where |ref| >= 1e-30, and
// absolute error <= 1e-36 for tiny results (the clamped exp argument).
void ExpectClose(const std::vector<float>& got, const std::vector<float>& x, float (*ref)(float),
                 int64_t max_ulp) {
  for (size_t i = 0; i < x.size(); ++i) {
    const float want = ref(x[i]);
    if (std::fabs(want) < 1e-30f) {
      EXPECT_NEAR(got[i], want, 1e-36f) << "x=" << x[i];
    } else {
      EXPECT_LE(UlpDistance(got[i], want), max_ulp) << "x=" << x[i] << " got " << got[i] << " want " << want;
    }
  }
}

// Stated bounds: exp 1 ulp (Highway's documented bound), sigmoid/SiLU 3 ulp
// (exp error amplified by 1/(1+e) plus an add and a divide), softplus 4 ulp
// (exp 1 + Highway Log1p 2 + one rounding).
TEST(ActivationTest, ExpMatchesReference) {
  const std::vector<float> x = Inputs();
  ForEachTarget([&] {
    std::vector<float> y(x.size());
    Exp(x.data(), y.data(), static_cast<int64_t>(x.size()));
    ExpectClose(y, x, ref::Exp, 1);
  });
}

TEST(ActivationTest, SigmoidSiluSoftplusMatchReference) {
  const std::vector<float> x = Inputs();
  ForEachTarget([&] {
    std::vector<float> y(x.size());
    Sigmoid(x.data(), y.data(), static_cast<int64_t>(x.size()));
    ExpectClose(y, x, ref::Sigmoid, 3);
    Silu(x.data(), y.data(), static_cast<int64_t>(x.size()));
    ExpectClose(y, x, ref::Silu, 3);
    Softplus(x.data(), y.data(), static_cast<int64_t>(x.size()));
    ExpectClose(y, x, ref::Softplus, 4);
  });
}

TEST(ActivationTest, SoftplusUsesTorchThreshold) {
  const float x[] = {20.0f, 20.5f, 100.0f, -200.0f};
  float y[4];
  Softplus(x, y, 4);
  EXPECT_EQ(y[1], 20.5f);
  EXPECT_EQ(y[2], 100.0f);
  EXPECT_EQ(y[3], 0.0f);
  EXPECT_NEAR(y[0], 20.0f, 1e-5f);  // log1p(exp(20)) = 20 + 2e-9
}

TEST(ActivationTest, SwiGluAndMulSigmoid) {
  const std::vector<float> g = RandomVector(777, -12.0f, 12.0f, 2);
  const std::vector<float> u = RandomVector(777, -3.0f, 3.0f, 3);
  ForEachTarget([&] {
    std::vector<float> y(g.size());
    std::vector<float> silu(g.size());
    SwiGlu(g.data(), u.data(), y.data(), 777);
    Silu(g.data(), silu.data(), 777);
    // Bit-identical to Silu followed by one multiply (same vector code).
    for (size_t i = 0; i < g.size(); ++i) ASSERT_EQ(y[i], silu[i] * u[i]) << i;
    std::vector<float> x = u;
    std::vector<float> sig(g.size());
    MulSigmoid(g.data(), x.data(), 777);
    Sigmoid(g.data(), sig.data(), 777);
    for (size_t i = 0; i < g.size(); ++i) ASSERT_EQ(x[i], u[i] * sig[i]) << i;
  });
}

// An element's value does not depend on where it sits (vector body or tail).
TEST(ActivationTest, ResultIndependentOfArraySplit) {
  const std::vector<float> x = RandomVector(301, -10.0f, 10.0f, 4);
  ForEachTarget([&] {
    std::vector<float> whole(x.size()), parts(x.size());
    Silu(x.data(), whole.data(), 301);
    for (int64_t i = 0; i < 301;) {
      const int64_t n = std::min<int64_t>(1 + (i * 7) % 13, 301 - i);
      Silu(x.data() + i, parts.data() + i, n);
      i += n;
    }
    EXPECT_TRUE(test::BitEqual(whole.data(), parts.data(), x.size()));
  });
}

}  // namespace
}  // namespace cairn::kernels
