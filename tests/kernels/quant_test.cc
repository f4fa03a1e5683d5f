// Block formats: dequantization of hand-built blocks (expected values derived
// from the ggml layout, independently of the codec), scale packing, and
// quantize -> dequantize error bounds per type.
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "core/half.h"
#include "kernels/quant.h"
#include "kernels/quant_act.h"
#include "kernels/quant_blocks.h"
#include "ops_test_util.h"

namespace cairn::kernels {
namespace {

// Scales/mins chosen to exercise every packing path (j < 4 and j >= 4, top bits
// set and clear, 0 and 63) and their packed bytes, worked out by hand from the
// layout in llama-cpp-notes.md §4.2.
constexpr int kSc[8] = {3, 17, 63, 0, 40, 5, 33, 62};
constexpr int kMin[8] = {0, 1, 63, 20, 48, 7, 16, 31};
constexpr uint8_t kPackedScales[12] = {131, 17, 191, 192, 192, 1, 127, 84, 8, 117, 1, 254};

void PutHalf(uint8_t* p, uint16_t bits) { std::memcpy(p, &bits, 2); }

TEST(QuantTest, SupportedTypes) {
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kQ8_0, DType::kQ4_0, DType::kQ4_1, DType::kQ5_0,
                  DType::kQ5_1, DType::kIQ4_NL, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K, DType::kQ2_K,
                  DType::kQ3_K, DType::kIQ4_XS}) {
    EXPECT_TRUE(IsSupportedWeightType(t));
    EXPECT_TRUE(GetDTypeInfo(t).supported);
  }
  EXPECT_FALSE(IsSupportedWeightType(DType::kQ8_1));
  EXPECT_FALSE(IsSupportedWeightType(DType::kQ8_K));
  EXPECT_EQ(GetDTypeInfo(DType::kIQ4_NL).block_bytes, 18);
  EXPECT_EQ(ParseDType("iq4_nl"), DType::kIQ4_NL);
  ASSERT_NE(FindDTypeInfo(23), nullptr);
  EXPECT_EQ(FindDTypeInfo(23)->name, "iq4_xs");
  EXPECT_EQ(GetDTypeInfo(DType::kQ2_K).block_bytes, 84);
  EXPECT_EQ(GetDTypeInfo(DType::kQ3_K).block_bytes, 110);
  EXPECT_EQ(GetDTypeInfo(DType::kIQ4_XS).block_bytes, 136);
}

TEST(QuantTest, KScaleMinPackingMatchesLayout) {
  uint8_t packed[12];
  uint8_t sc[8], m[8];
  for (int j = 0; j < 8; ++j) {
    sc[j] = kSc[j];
    m[j] = kMin[j];
  }
  PackKScaleMin(sc, m, packed);
  EXPECT_EQ(0, std::memcmp(packed, kPackedScales, 12));
  for (int j = 0; j < 8; ++j) {
    int s, mn;
    UnpackKScaleMin(kPackedScales, j, &s, &mn);
    EXPECT_EQ(s, kSc[j]) << j;
    EXPECT_EQ(mn, kMin[j]) << j;
  }
}

TEST(QuantTest, DequantizeHalfTypes) {
  const uint16_t f16[] = {0x3C00, 0xC000, 0x7BFF, 0x0001, 0x8000};
  const float f16_expected[] = {1.0f, -2.0f, 65504.0f, std::ldexp(1.0f, -24), -0.0f};
  float out[5];
  DequantizeRow(DType::kF16, f16, 5, out);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(FloatBits(out[i]), FloatBits(f16_expected[i])) << i;
  const uint16_t bf16[] = {0x3F80, 0x4049, 0xC2F7};
  const float bf16_expected[] = {1.0f, 3.140625f, -123.5f};
  DequantizeRow(DType::kBF16, bf16, 3, out);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(out[i], bf16_expected[i]) << i;
}

TEST(QuantTest, DequantizeQ8_0Block) {
  BlockQ8_0 block;
  PutHalf(block.d, 0x3800);  // 0.5
  for (int j = 0; j < 32; ++j) block.qs[j] = static_cast<int8_t>(j * 8 - 128);
  float out[32];
  DequantizeRow(DType::kQ8_0, &block, 32, out);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(out[j], 0.5f * (j * 8 - 128)) << j;
}

TEST(QuantTest, DequantizeQ4_0Block) {
  BlockQ4_0 block;
  PutHalf(block.d, 0x4000);  // 2.0
  for (int j = 0; j < 16; ++j) block.qs[j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  float out[32];
  DequantizeRow(DType::kQ4_0, &block, 32, out);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(out[j], 2.0f * (j - 8)) << j;             // low nibble of byte j
    EXPECT_EQ(out[j + 16], 2.0f * (15 - j - 8)) << j;   // high nibble of byte j
  }
}

TEST(QuantTest, DequantizeQ4KBlock) {
  BlockQ4K block;
  PutHalf(block.d, 0x3C00);     // 1.0
  PutHalf(block.dmin, 0x3800);  // 0.5
  std::memcpy(block.scales, kPackedScales, 12);
  for (int g = 0; g < 4; ++g) {
    for (int l = 0; l < 32; ++l) block.qs[32 * g + l] = static_cast<uint8_t>((l % 16) | ((15 - l % 16) << 4));
  }
  float out[256];
  DequantizeRow(DType::kQ4_K, &block, 256, out);
  for (int g = 0; g < 4; ++g) {
    for (int l = 0; l < 32; ++l) {
      // 64-element group g: first 32 from low nibbles (sub-block 2g), next 32 from high (2g + 1).
      const int lo = l % 16, hi = 15 - l % 16;
      EXPECT_EQ(out[64 * g + l], 1.0f * kSc[2 * g] * lo - 0.5f * kMin[2 * g]);
      EXPECT_EQ(out[64 * g + 32 + l], 1.0f * kSc[2 * g + 1] * hi - 0.5f * kMin[2 * g + 1]);
    }
  }
}

TEST(QuantTest, DequantizeQ5KBlock) {
  BlockQ5K block;
  PutHalf(block.d, 0x3400);     // 0.25
  PutHalf(block.dmin, 0x4000);  // 2.0
  std::memcpy(block.scales, kPackedScales, 12);
  for (int l = 0; l < 32; ++l) block.qh[l] = static_cast<uint8_t>(l * 7 + 3);
  for (int g = 0; g < 4; ++g) {
    for (int l = 0; l < 32; ++l) block.qs[32 * g + l] = static_cast<uint8_t>(((l + g) % 16) | ((l / 2) << 4));
  }
  float out[256];
  DequantizeRow(DType::kQ5_K, &block, 256, out);
  for (int g = 0; g < 4; ++g) {
    for (int l = 0; l < 32; ++l) {
      const int qh = l * 7 + 3;
      const int lo = ((l + g) % 16) + 16 * ((qh >> (2 * g)) & 1);
      const int hi = (l / 2) + 16 * ((qh >> (2 * g + 1)) & 1);
      EXPECT_EQ(out[64 * g + l], 0.25f * kSc[2 * g] * lo - 2.0f * kMin[2 * g]) << g << " " << l;
      EXPECT_EQ(out[64 * g + 32 + l], 0.25f * kSc[2 * g + 1] * hi - 2.0f * kMin[2 * g + 1]) << g << " " << l;
    }
  }
}

TEST(QuantTest, DequantizeQ6KBlock) {
  BlockQ6K block;
  PutHalf(block.d, 0x3400);  // 0.25
  const int8_t scales[16] = {-128, -1, 0, 1, 127, 5, -7, 64, 2, 3, -3, 100, -100, 9, 11, 13};
  std::memcpy(block.scales, scales, 16);
  for (int i = 0; i < 128; ++i) block.ql[i] = static_cast<uint8_t>(i * 37 + 11);
  for (int i = 0; i < 64; ++i) block.qh[i] = static_cast<uint8_t>(i * 53 + 5);
  float out[256];
  DequantizeRow(DType::kQ6_K, &block, 256, out);
  for (int h = 0; h < 2; ++h) {
    for (int l = 0; l < 32; ++l) {
      const int ql0 = (64 * h + l) * 37 + 11, ql1 = (64 * h + l + 32) * 37 + 11;
      const int qh = ((32 * h + l) * 53 + 5) & 0xFF;
      const int q[4] = {(ql0 & 0xF) | ((qh & 3) << 4), (ql1 & 0xF) | (((qh >> 2) & 3) << 4),
                        ((ql0 >> 4) & 0xF) | (((qh >> 4) & 3) << 4), ((ql1 >> 4) & 0xF) | (((qh >> 6) & 3) << 4)};
      for (int t = 0; t < 4; ++t) {
        const int e = 128 * h + 32 * t + l;
        EXPECT_EQ(out[e], 0.25f * scales[e / 16] * (q[t] - 32)) << e;
      }
    }
  }
}

// 32 fifth bits chosen so that bits 0..31 differ between neighbours and halves.
constexpr uint32_t kQh = 0xA5C3F00Fu;

TEST(QuantTest, DequantizeQ4_1Block) {
  BlockQ4_1 block;
  PutHalf(block.d, 0x3800);  // 0.5
  PutHalf(block.m, 0xC000);  // -2.0
  for (int j = 0; j < 16; ++j) block.qs[j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  float out[32];
  DequantizeRow(DType::kQ4_1, &block, 32, out);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(out[j], 0.5f * j - 2.0f) << j;
    EXPECT_EQ(out[j + 16], 0.5f * (15 - j) - 2.0f) << j;
  }
}

TEST(QuantTest, DequantizeQ5_0Block) {
  BlockQ5_0 block;
  PutHalf(block.d, 0x4000);  // 2.0
  std::memcpy(block.qh, &kQh, 4);
  for (int j = 0; j < 16; ++j) block.qs[j] = static_cast<uint8_t>(((3 * j) % 16) | ((15 - j) << 4));
  float out[32];
  DequantizeRow(DType::kQ5_0, &block, 32, out);
  for (int j = 0; j < 16; ++j) {
    const int lo = ((3 * j) % 16) | (((kQh >> j) & 1) << 4);
    const int hi = (15 - j) | (((kQh >> (j + 16)) & 1) << 4);
    EXPECT_EQ(out[j], 2.0f * (lo - 16)) << j;
    EXPECT_EQ(out[j + 16], 2.0f * (hi - 16)) << j;
  }
}

TEST(QuantTest, DequantizeQ5_1Block) {
  BlockQ5_1 block;
  PutHalf(block.d, 0x3400);  // 0.25
  PutHalf(block.m, 0x3C00);  // 1.0
  std::memcpy(block.qh, &kQh, 4);
  for (int j = 0; j < 16; ++j) block.qs[j] = static_cast<uint8_t>(((5 * j) % 16) | (j << 4));
  float out[32];
  DequantizeRow(DType::kQ5_1, &block, 32, out);
  for (int j = 0; j < 16; ++j) {
    const int lo = ((5 * j) % 16) | (((kQh >> j) & 1) << 4);
    const int hi = j | (((kQh >> (j + 16)) & 1) << 4);
    EXPECT_EQ(out[j], 0.25f * lo + 1.0f) << j;
    EXPECT_EQ(out[j + 16], 0.25f * hi + 1.0f) << j;
  }
}

TEST(QuantTest, DequantizeIQ4NLBlock) {
  // The codebook, written out independently of kIQ4NLValues.
  const int kv[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
  BlockIQ4NL block;
  PutHalf(block.d, 0xB800);  // -0.5
  for (int j = 0; j < 16; ++j) block.qs[j] = static_cast<uint8_t>(j | (((j + 7) % 16) << 4));
  float out[32];
  DequantizeRow(DType::kIQ4_NL, &block, 32, out);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(out[j], -0.5f * kv[j]) << j;
    EXPECT_EQ(out[j + 16], -0.5f * kv[(j + 7) % 16]) << j;
  }
}

// Q2_K / Q3_K / IQ4_XS: patterned blocks against the per-element formulas of
// ../shared/reference/real-models.md §1.4, 1.5, 1.7, written out here
// element by element (h = e / 128, j = (e % 128) / 32, l = e % 32).
TEST(QuantTest, DequantizeQ2KQ3KIQ4XSBlocks) {
  float out[256];
  BlockQ2K q2;
  for (int k = 0; k < 16; ++k) q2.scales[k] = static_cast<uint8_t>((k * 7 + 3) & 0xFF);
  for (int k = 0; k < 64; ++k) q2.qs[k] = static_cast<uint8_t>(k * 29 + 11);
  PutHalf(q2.d, 0x3800);     // 0.5
  PutHalf(q2.dmin, 0x3400);  // 0.25
  DequantizeRow(DType::kQ2_K, &q2, 256, out);
  for (int e = 0; e < 256; ++e) {
    const int h = e / 128, j = (e % 128) / 32, l = e % 32, is = 8 * h + 2 * j + (l >= 16);
    const int q = (q2.qs[32 * h + l] >> (2 * j)) & 3;
    ASSERT_EQ(out[e], 0.5f * (q2.scales[is] & 0xF) * q - 0.25f * (q2.scales[is] >> 4)) << e;
  }
  BlockQ3K q3;
  for (int k = 0; k < 32; ++k) q3.hmask[k] = static_cast<uint8_t>(k * 53 + 5);
  for (int k = 0; k < 64; ++k) q3.qs[k] = static_cast<uint8_t>(k * 31 + 17);
  for (int k = 0; k < 12; ++k) q3.scales[k] = static_cast<uint8_t>(k * 83 + 41);
  PutHalf(q3.d, 0xB800);  // -0.5
  DequantizeRow(DType::kQ3_K, &q3, 256, out);
  for (int e = 0; e < 256; ++e) {
    const int h = e / 128, j = (e % 128) / 32, l = e % 32, is = 8 * h + 2 * j + (l >= 16);
    const int q2v = (q3.qs[32 * h + l] >> (2 * j)) & 3;
    const int v = q2v - ((q3.hmask[l] & (1 << (4 * h + j))) ? 0 : 4);
    const int low4 = is < 8 ? q3.scales[is] & 0xF : q3.scales[is - 8] >> 4;
    const int high2 = (q3.scales[8 + is % 4] >> (2 * (is / 4))) & 3;
    const int sc = (low4 | high2 << 4) - 32;
    ASSERT_EQ(out[e], -0.5f * sc * v) << e;
  }
  const int kv[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
  BlockIQ4XS x4;
  PutHalf(x4.d, 0x3400);  // 0.25
  PutHalf(x4.scales_h, 0xB4E1);
  for (int k = 0; k < 4; ++k) x4.scales_l[k] = static_cast<uint8_t>(k * 97 + 13);
  for (int k = 0; k < 128; ++k) x4.qs[k] = static_cast<uint8_t>(k * 37 + 9);
  DequantizeRow(DType::kIQ4_XS, &x4, 256, out);
  for (int ib = 0; ib < 8; ++ib) {
    const int ls = ((x4.scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF) | (((0xB4E1 >> (2 * ib)) & 3) << 4);
    for (int t = 0; t < 16; ++t) {
      ASSERT_EQ(out[32 * ib + t], 0.25f * (ls - 32) * kv[x4.qs[16 * ib + t] & 0xF]) << ib << " " << t;
      ASSERT_EQ(out[32 * ib + t + 16], 0.25f * (ls - 32) * kv[x4.qs[16 * ib + t] >> 4]) << ib << " " << t;
    }
  }
}

double RelativeRmsError(DType type, const std::vector<float>& x) {
  std::vector<uint8_t> q(RowBytes(type, static_cast<int64_t>(x.size())));
  std::vector<float> y(x.size());
  QuantizeRow(type, x.data(), static_cast<int64_t>(x.size()), q.data());
  DequantizeRow(type, q.data(), static_cast<int64_t>(x.size()), y.data());
  double err = 0, ref = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    err += (double(y[i]) - x[i]) * (double(y[i]) - x[i]);
    ref += double(x[i]) * x[i];
  }
  return std::sqrt(err / ref);
}

// Gaussian weights with a few outliers, like real projection matrices.
std::vector<float> WeightLikeData(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 0.02f);
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = dist(rng) * ((i % 97 == 0) ? 8.0f : 1.0f);
  return x;
}

// Bounds: relative RMS error on Gaussian data with 1% outliers (x8), which
// inflate the block ranges. Theory for plain Gaussian data: rounding error
// ~ step / sqrt(12) with step ~ block range / levels, i.e. q8_0 0.5%, q6_K 1.8%,
// q5_K 3.6%, q4_K 7%, q4_0 8.6% (measured on pure Gaussian data exactly so).
// With the outliers this data measures q8_0 0.0093, q6_K 0.027, q5_K 0.046,
// q4_K 0.091, q4_0 0.142, q4_1 0.097, q5_0 0.073, q5_1 0.048, iq4_nl 0.113
// (its simple quantizer: max to -127, nearest codebook value), q2_K 0.309,
// q3_K 0.193, iq4_xs 0.114 (simple quantizers, quant_kquants2.cc); the bounds
// leave ~30% headroom. F16 / BF16 round to
// nearest (relative 2^-11 / 2^-8 per element at worst).
TEST(QuantTest, RoundTripErrorBounds) {
  const std::vector<float> x = WeightLikeData(8192, 7);
  const struct {
    DType type;
    double bound;
  } cases[] = {{DType::kF32, 0.0},     {DType::kF16, 3e-4},    {DType::kBF16, 2.5e-3},
               {DType::kQ8_0, 0.012},  {DType::kQ6_K, 0.036},  {DType::kQ5_K, 0.06},
               {DType::kQ4_K, 0.12},   {DType::kQ4_0, 0.185},  {DType::kQ4_1, 0.125},
               {DType::kQ5_0, 0.095},  {DType::kQ5_1, 0.063},  {DType::kIQ4_NL, 0.147},
               {DType::kQ2_K, 0.40},   {DType::kQ3_K, 0.25},   {DType::kIQ4_XS, 0.147}};
  for (const auto& c : cases) {
    const double err = RelativeRmsError(c.type, x);
    EXPECT_LE(err, c.bound) << GetDTypeInfo(c.type).name;
  }
  // A fifth bit beats four at equal layout, and min/max (Q4_1) beats the
  // signed-max scale (Q4_0).
  EXPECT_LT(RelativeRmsError(DType::kQ5_0, x), RelativeRmsError(DType::kQ4_0, x));
  EXPECT_LT(RelativeRmsError(DType::kQ5_1, x), RelativeRmsError(DType::kQ4_1, x));
  EXPECT_LT(RelativeRmsError(DType::kQ4_1, x), RelativeRmsError(DType::kQ4_0, x));
  // The K-quant scale search must beat plain min/max rounding at equal bits:
  // Q4_K (4.5 bits/weight) has lower error than Q4_0 (4.5 bits/weight).
  EXPECT_LT(RelativeRmsError(DType::kQ4_K, x), RelativeRmsError(DType::kQ4_0, x));
  // More bits, less error: 2.625 < 3.4375 < 4.25 bits/weight.
  EXPECT_LT(RelativeRmsError(DType::kQ3_K, x), RelativeRmsError(DType::kQ2_K, x));
  EXPECT_LT(RelativeRmsError(DType::kIQ4_XS, x), RelativeRmsError(DType::kQ3_K, x));
}

TEST(QuantTest, ZeroAndConstantRows) {
  for (DType type : {DType::kQ8_0, DType::kQ4_0, DType::kQ4_1, DType::kQ5_0, DType::kQ5_1, DType::kIQ4_NL,
                     DType::kQ4_K, DType::kQ5_K, DType::kQ6_K, DType::kQ2_K, DType::kQ3_K, DType::kIQ4_XS}) {
    SCOPED_TRACE(GetDTypeInfo(type).name);
    std::vector<float> zeros(512, 0.0f), out(512, 1.0f);
    std::vector<uint8_t> q(RowBytes(type, 512));
    QuantizeRow(type, zeros.data(), 512, q.data());
    DequantizeRow(type, q.data(), 512, out.data());
    for (float v : out) EXPECT_EQ(v, 0.0f);
    std::vector<float> constant(512, 0.75f);
    QuantizeRow(type, constant.data(), 512, q.data());
    DequantizeRow(type, q.data(), 512, out.data());
    for (float v : out) EXPECT_NEAR(v, 0.75f, 0.75f * 0.01f);
  }
}

TEST(QuantTest, QuantizeIsDeterministicAndRowLocal) {
  // Quantizing two rows at once equals quantizing them one by one.
  const std::vector<float> x = WeightLikeData(1024, 3);
  for (DType type : {DType::kQ8_0, DType::kQ4_0, DType::kQ4_1, DType::kQ5_0, DType::kQ5_1, DType::kIQ4_NL,
                     DType::kQ4_K, DType::kQ5_K, DType::kQ6_K, DType::kQ2_K, DType::kQ3_K, DType::kIQ4_XS}) {
    std::vector<uint8_t> both(RowBytes(type, 1024)), halves(RowBytes(type, 1024));
    QuantizeRow(type, x.data(), 1024, both.data());
    QuantizeRow(type, x.data(), 512, halves.data());
    QuantizeRow(type, x.data() + 512, 512, halves.data() + RowBytes(type, 512));
    EXPECT_EQ(both, halves) << GetDTypeInfo(type).name;
  }
}

// Q8_1 activations: Q8's qs and d, plus s[k] = d[k] * (sum of block k's q),
// and the same qs/d as the Q8 format (the two formats differ only by s).
TEST(QuantTest, Q8_1ActivationsCarryScaledSums) {
  const std::vector<float> x = WeightLikeData(640, 5);
  const int64_t cols = 640;
  std::vector<uint8_t> q8(ActRowBytes(ActFormat::kQ8, cols) + 64), q81(ActRowBytes(ActFormat::kQ8_1, cols) + 64);
  uint8_t* r8 = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(q8.data()) + 63) / 64 * 64);
  uint8_t* r81 = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(q81.data()) + 63) / 64 * 64);
  QuantizeActivationRow(ActFormat::kQ8, x.data(), cols, r8);
  QuantizeActivationRow(ActFormat::kQ8_1, x.data(), cols, r81);
  const ActRow a = ActRowAt(ActFormat::kQ8, r8, cols), b = ActRowAt(ActFormat::kQ8_1, r81, cols);
  ASSERT_EQ(a.s, nullptr);
  ASSERT_NE(b.s, nullptr);
  EXPECT_EQ(b.bsums, nullptr);
  EXPECT_EQ(0, std::memcmp(a.qs, b.qs, cols));
  for (int64_t k = 0; k < cols / 32; ++k) {
    EXPECT_EQ(FloatBits(a.d[k]), FloatBits(b.d[k]));
    int sum = 0;
    for (int j = 0; j < 32; ++j) sum += b.qs[32 * k + j];
    EXPECT_EQ(FloatBits(b.s[k]), FloatBits(b.d[k] * static_cast<float>(sum))) << k;
    // s approximates the block's sum of x (the Q4_1 / Q5_1 min term's factor).
    double xs = 0;
    for (int j = 0; j < 32; ++j) xs += x[32 * k + j];
    EXPECT_NEAR(b.s[k], xs, 32 * 0.5 * b.d[k] + 1e-6) << k;
  }
}

// Pseudo-random blocks (every bit pattern of levels, fifth / high bits and
// sub-block scales; F16 d, m, dmin kept finite) dequantized here and by
// gguf-py's gguf.quants.dequantize (the llama.cpp reference; recompute with
// tools/dequant_sums_with_gguf_py.py), compared by checksums of the F32 bit patterns: s1 =
// sum of bits, s2 = sum of bits * (i + 1), mod 2^64. Bytes: an LCG, state =
// state * 1664525 + 1013904223 from 12345 + ggml type id, byte = state >> 24.
TEST(QuantTest, DequantizeMatchesGgufPyOnRandomBlocks) {
  const struct {
    DType type;
    uint64_t s1, s2;
  } cases[] = {{DType::kQ4_1, 17270788422906u, 71026667691607183u},
               {DType::kQ5_0, 16932582361088u, 69492694450227712u},
               {DType::kQ5_1, 16968260892331u, 67616258916138761u},
               {DType::kIQ4_NL, 17368301201856u, 70850753829935808u},
               {DType::kQ2_K, 17549397493458u, 73377561883924913u},
               {DType::kQ3_K, 16043991231168u, 65733067744118784u},
               {DType::kIQ4_XS, 17476824457586u, 71752777542957200u}};
  // Byte offsets of each block's F16 scale fields (d, and m / dmin).
  const auto halves = [](DType t) -> std::vector<int> {
    switch (t) {
      case DType::kQ4_1:
      case DType::kQ5_1: return {0, 2};
      case DType::kQ2_K: return {80, 82};
      case DType::kQ3_K: return {108};
      default: return {0};
    }
  };
  for (const auto& c : cases) {
    const int64_t n = 8192;
    const int bb = GetDTypeInfo(c.type).block_bytes;
    std::vector<uint8_t> raw(static_cast<size_t>(n / GetDTypeInfo(c.type).block_elems * bb));
    uint32_t state = 12345u + static_cast<uint32_t>(c.type);
    for (uint8_t& b : raw) {
      state = state * 1664525u + 1013904223u;
      b = static_cast<uint8_t>(state >> 24);
    }
    for (size_t k = 0; k < raw.size(); k += bb) {
      for (int h : halves(c.type)) raw[k + h + 1] &= 0xBF;  // exponent < 31: finite
    }
    std::vector<float> y(n);
    DequantizeRow(c.type, raw.data(), n, y.data());
    uint64_t s1 = 0, s2 = 0;
    for (int64_t i = 0; i < n; ++i) {
      s1 += FloatBits(y[i]);
      s2 += uint64_t{FloatBits(y[i])} * static_cast<uint64_t>(i + 1);
    }
    EXPECT_EQ(s1, c.s1) << GetDTypeInfo(c.type).name;
    EXPECT_EQ(s2, c.s2) << GetDTypeInfo(c.type).name;
  }
}

}  // namespace
}  // namespace cairn::kernels
