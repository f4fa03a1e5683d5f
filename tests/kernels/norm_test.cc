#include "kernels/norm.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/activation.h"
#include "kernels/ref/ops_ref.h"
#include "ops_test_util.h"

namespace cairn::kernels {
namespace {

// Tolerance: the kernel sums squares in F32 (lanes, then tail), the reference
// in double. For dim <= 1024 positive terms the F32 sum's relative error is
// <= dim/lanes * 2^-24 ~ 1e-5 worst case (1e-7 typical); the scale then adds
// ~2 roundings. Asserted: |got - want| <= 1e-5 * |want| + 1e-6 (values ~O(1)).
void ExpectRowsNear(const float* got, const float* want, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-5f * std::fabs(want[i]) + 1e-6f) << i;
  }
}

TEST(NormTest, RmsNormMatchesReference) {
  for (int64_t dim : {1, 7, 64, 100, 1024}) {
    const int64_t rows = 3, stride = dim + 5;
    const std::vector<float> x = test::RandomVector(rows * stride, -4.0f, 4.0f, 10);
    const std::vector<float> w = test::RandomVector(dim, 0.5f, 1.5f, 11);
    std::vector<float> want(rows * dim);
    for (int64_t r = 0; r < rows; ++r) ref::RmsNormRow(x.data() + r * stride, w.data(), 1e-6f, dim, want.data() + r * dim);
    test::ForEachTarget([&] {
      std::vector<float> got(rows * dim);
      RmsNorm(x.data(), stride, w.data(), 1e-6f, rows, dim, got.data(), dim);
      ExpectRowsNear(got.data(), want.data(), got.size());
      // Per-row result is independent of how many rows a call processes.
      std::vector<float> one(dim);
      RmsNorm(x.data() + 2 * stride, stride, w.data(), 1e-6f, 1, dim, one.data(), dim);
      EXPECT_TRUE(test::BitEqual(one.data(), got.data() + 2 * dim, dim));
    });
  }
}

TEST(NormTest, RmsNormHeadsStridedInPlace) {
  // Qwen3.5 q layout: [q_0 | gate_0 | q_1 | gate_1] per row, head_dim 256.
  const int n_heads = 2, hd = 256;
  const int64_t rows = 3, row_stride = 2 * n_heads * hd;
  const std::vector<float> x0 = test::RandomVector(rows * row_stride, -3.0f, 3.0f, 12);
  const std::vector<float> w = test::RandomVector(hd, 0.0f, 2.0f, 13);
  test::ForEachTarget([&] {
    std::vector<float> x = x0;
    RmsNormHeads(x.data(), rows, n_heads, hd, row_stride, 2 * hd, w.data(), 1e-6f);
    for (int64_t r = 0; r < rows; ++r) {
      for (int h = 0; h < n_heads; ++h) {
        const size_t q = r * row_stride + h * 2 * hd;
        std::vector<float> want(hd);
        ref::RmsNormRow(x0.data() + q, w.data(), 1e-6f, hd, want.data());
        ExpectRowsNear(x.data() + q, want.data(), hd);
        // The gate half is untouched.
        EXPECT_TRUE(test::BitEqual(x.data() + q + hd, x0.data() + q + hd, hd));
      }
    }
  });
}

TEST(NormTest, L2NormHeads) {
  const int n_heads = 3, hd = 128;
  const std::vector<float> x0 = test::RandomVector(2 * n_heads * hd, -1.0f, 1.0f, 14);
  test::ForEachTarget([&] {
    std::vector<float> x = x0;
    L2NormHeads(x.data(), 2, n_heads, hd, n_heads * hd, hd, 1e-6f);
    for (int s = 0; s < 2 * n_heads; ++s) {
      std::vector<float> want(hd);
      ref::L2NormRow(x0.data() + s * hd, 1e-6f, hd, want.data());
      ExpectRowsNear(x.data() + s * hd, want.data(), hd);
    }
  });
  // eps sits inside the root: a zero vector stays zero, a tiny one is damped.
  std::vector<float> z(128, 0.0f);
  L2NormHeads(z.data(), 1, 1, 128, 128, 128, 1e-6f);
  EXPECT_EQ(z[5], 0.0f);
}

TEST(NormTest, RmsNormGated) {
  const int64_t rows = 4, dim = 128;
  const std::vector<float> x = test::RandomVector(rows * dim, -2.0f, 2.0f, 15);
  const std::vector<float> z = test::RandomVector(rows * dim, -6.0f, 6.0f, 16);
  const std::vector<float> w = test::RandomVector(dim, 0.5f, 1.5f, 17);
  test::ForEachTarget([&] {
    std::vector<float> got(rows * dim);
    RmsNormGated(x.data(), z.data(), w.data(), 1e-6f, rows, dim, got.data());
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<float> want(dim);
      ref::RmsNormRow(x.data() + r * dim, w.data(), 1e-6f, dim, want.data());
      for (int64_t i = 0; i < dim; ++i) want[i] *= ref::Silu(z[r * dim + i]);
      ExpectRowsNear(got.data() + r * dim, want.data(), dim);
    }
  });
}

}  // namespace
}  // namespace cairn::kernels
