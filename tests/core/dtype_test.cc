#include "core/dtype.h"

#include <gtest/gtest.h>

namespace cairn {
namespace {

TEST(DTypeTest, BlockGeometryMatchesGgml) {
  EXPECT_EQ(RowBytes(DType::kF32, 64), 256u);
  EXPECT_EQ(RowBytes(DType::kQ8_0, 64), 68u);
  EXPECT_EQ(RowBytes(DType::kQ4_0, 64), 36u);
  EXPECT_EQ(RowBytes(DType::kQ4_K, 512), 288u);
  EXPECT_EQ(RowBytes(DType::kQ5_K, 256), 176u);
  EXPECT_EQ(RowBytes(DType::kQ6_K, 256), 210u);
  EXPECT_EQ(RowBytes(DType::kBF16, 3), 6u);
}

TEST(DTypeTest, ParseAndLookup) {
  EXPECT_EQ(ParseDType("Q4_K"), DType::kQ4_K);
  EXPECT_EQ(ParseDType("bf16"), DType::kBF16);
  EXPECT_FALSE(ParseDType("q9_9").has_value());
  EXPECT_EQ(FindDTypeInfo(4), nullptr);  // ids 4/5 were removed from ggml
  ASSERT_NE(FindDTypeInfo(14), nullptr);
  EXPECT_EQ(FindDTypeInfo(14)->name, "q6_K");
}

}  // namespace
}  // namespace cairn
