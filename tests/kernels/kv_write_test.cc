// The vectorised F32 -> F16 row conversion of the KV writer gives
// core/half.h's F32ToF16 bits on every target: random bit patterns (NaNs,
// infinities, subnormals and overflow included), exact halfway cases, and
// row lengths off the vector width.
#include "kernels/kv_write.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/half.h"
#include "ops_test_util.h"

namespace cairn::kernels {
namespace {

float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

TEST(KvWriteRowTest, MatchesScalarF32ToF16OnEveryTarget) {
  std::mt19937 rng(17);
  std::vector<float> values;
  for (int i = 0; i < 20000; ++i) values.push_back(FromBits(static_cast<uint32_t>(rng())));  // any pattern
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (int i = 0; i < 20000; ++i) values.push_back(normal(rng));
  // Halfway between two F16 values (normal and subnormal ranges), both parities.
  for (uint32_t m = 0; m < 64; ++m) {
    values.push_back(FromBits(0x3f800000u | (m << 13) | 0x1000u));  // 1.x, low 13 bits exactly half
    values.push_back(FromBits(0x33800000u | (m << 13) | 0x1000u));  // subnormal F16 range
  }
  values.push_back(65504.0f);
  values.push_back(65520.0f);  // rounds to inf
  values.push_back(-0.0f);
  test::ForEachTarget([&] {
    for (const size_t n : {values.size(), size_t{1}, size_t{7}, size_t{17}, size_t{255}}) {
      std::vector<uint16_t> got(n), want(n);
      F32RowToF16(values.data(), static_cast<int64_t>(n), got.data());
      for (size_t i = 0; i < n; ++i) want[i] = F32ToF16(values[i]);
      for (size_t i = 0; i < n; ++i) {
        ASSERT_EQ(got[i], want[i]) << "value bits " << std::hex << *reinterpret_cast<const uint32_t*>(&values[i]);
      }
    }
  });
}

}  // namespace
}  // namespace cairn::kernels
