#include "core/half.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace cairn {
namespace {

// Every F16 bit pattern converts to F32 and back unchanged (NaNs stay NaN).
TEST(HalfTest, F16RoundTripsEveryBitPattern) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = F16ToF32(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(F16ToF32(F32ToF16(f))));
      continue;
    }
    EXPECT_EQ(F32ToF16(f), h) << "h=" << h;
  }
}

// The compiler's IEEE half type (GCC 12's C++ front end has _Float16 on x86
// only; aarch64 has __fp16, converted with the FCVT instruction).
#if defined(__aarch64__)
using HardwareHalf = __fp16;
#else
using HardwareHalf = _Float16;
#endif

// F32 -> F16 agrees with the compiler's correctly rounded conversion.
TEST(HalfTest, F32ToF16MatchesHardwareRounding) {
  uint32_t state = 12345;
  for (int i = 0; i < 2000000; ++i) {
    state = state * 1664525u + 1013904223u;
    const float f = BitsToFloat(state);
    if (std::isnan(f)) continue;
    const HardwareHalf hw = static_cast<HardwareHalf>(f);
    uint16_t hw_bits;
    std::memcpy(&hw_bits, &hw, 2);
    ASSERT_EQ(F32ToF16(f), hw_bits) << "f=" << f;
  }
}

TEST(HalfTest, Bf16RoundsToNearestEven) {
  EXPECT_EQ(F32ToBf16(1.0f), 0x3f80);
  EXPECT_EQ(F32ToBf16(BitsToFloat(0x3f808000u)), 0x3f80);  // tie -> even
  EXPECT_EQ(F32ToBf16(BitsToFloat(0x3f818000u)), 0x3f82);  // tie -> even (up)
  EXPECT_EQ(F32ToBf16(BitsToFloat(0x3f808001u)), 0x3f81);
  EXPECT_TRUE(std::isnan(Bf16ToF32(F32ToBf16(std::numeric_limits<float>::quiet_NaN()))));
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = Bf16ToF32(static_cast<uint16_t>(h));
    if (!std::isnan(f)) {
      EXPECT_EQ(F32ToBf16(f), h);
    }
  }
}

}  // namespace
}  // namespace cairn
