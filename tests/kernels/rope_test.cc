#include "kernels/rope.h"

#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "core/half.h"
#include "kernels/ref/ops_ref.h"
#include "ops_test_util.h"
#include "rope_golden.h"

namespace cairn::kernels {
namespace {

// inv_freq vs torch goldens: torch's pow is SLEEF (1-ulp class), ours is
// correctly rounded, so at most 1 ulp apart; in practice almost all equal.
TEST(RopeTest, InvFreqMatchesTorchWithinOneUlp) {
  int total = 0, exact = 0;
  for (const auto& c : rope_golden::kInvFreqCases) {
    const std::vector<float> inv = RopeInvFreq(c.rot, c.theta);
    for (int i = 0; i < c.rot / 2; ++i) {
      const float want = BitsToFloat(c.bits[i]);
      EXPECT_LE(test::UlpDistance(inv[i], want), 1) << c.theta << " " << c.rot << " " << i;
      exact += inv[i] == want;
      ++total;
    }
  }
  EXPECT_GE(exact, total - 2);  // 1 of 176 differs by 1 ulp with torch 2.x
}

// Angles bit-identical to HF; cos/sin within 1 ulp of torch (see rope.h).
TEST(RopeTest, TableMatchesTorch) {
  RopeTable table(64, 1e7f);
  table.Compute(rope_golden::kPositions, std::size(rope_golden::kPositions));
  for (size_t r = 0; r < std::size(rope_golden::kPositions); ++r) {
    for (int i = 0; i < 32; ++i) {
      const float angle = static_cast<float>(rope_golden::kPositions[r]) * table.inv_freq()[i];
      EXPECT_EQ(FloatBits(angle), rope_golden::kAngle[r][i]) << r << " " << i;
      EXPECT_LE(test::UlpDistance(table.cos(r)[i], BitsToFloat(rope_golden::kCos[r][i])), 1);
      EXPECT_LE(test::UlpDistance(table.sin(r)[i], BitsToFloat(rope_golden::kSin[r][i])), 1);
    }
  }
}

// Partial rotary on interleaved heads: bit-identical to the reference formula
// (same F32 products and sums), dims beyond rot_dims untouched.
TEST(RopeTest, PartialRotaryMatchesFormulaExactly) {
  for (int rot : {64, 128, 20}) {   // 20: half = 10, a vector tail on every target
    const int hd = rot == 64 ? 256 : 128, n_heads = 3;
    const int64_t rows = 5, row_stride = n_heads * hd + 3;
    const std::vector<float> x0 = test::RandomVector(rows * row_stride, -2.0f, 2.0f, 20);
    std::vector<int64_t> pos = {0, 1, 4095, 70000, 262143};
    test::ForEachTarget([&] {
      RopeTable table(rot, 1e7f);
      table.Compute(pos.data(), rows);
      std::vector<float> x = x0;
      ApplyRope(table, x.data(), rows, n_heads, row_stride, hd);
      std::vector<float> want = x0;
      for (int64_t r = 0; r < rows; ++r) {
        for (int h = 0; h < n_heads; ++h) ref::RopeHead(want.data() + r * row_stride + h * hd, rot, 1e7f, pos[r]);
      }
      EXPECT_TRUE(test::BitEqual(x.data(), want.data(), x.size())) << rot;
    });
  }
}

}  // namespace
}  // namespace cairn::kernels
