// MatMul on every SIMD target this CPU runs, against the scalar reference, and
// the exactness contract: bit-identical outputs for any batch size, thread
// count and row split.
#include "kernels/matmul.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include <hwy/targets.h>

#include "core/half.h"
#include "kernels/cpu_features.h"
#include "kernels/dot_ref.h"
#include "kernels/quant_blocks.h"
#include "kernels/quant.h"
#include "ops_test_util.h"

namespace cairn::kernels {
namespace {

using test::ForEachTarget;
using test::Sanitized;

constexpr DType kAllTypes[] = {DType::kF32,  DType::kF16,  DType::kBF16, DType::kQ8_0,  DType::kQ4_0,
                               DType::kQ4_1, DType::kQ5_0, DType::kQ5_1, DType::kIQ4_NL, DType::kQ4_K,
                               DType::kQ5_K, DType::kQ6_K, DType::kQ2_K, DType::kQ3_K, DType::kIQ4_XS};

bool IsFloat(DType t) { return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16; }

std::vector<float> Gaussian(size_t n, float sigma, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, sigma);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// A rows x cols weight matrix quantized to `type`, with an optional padded stride.
struct Weights {
  std::vector<uint8_t> bytes;
  MatrixView view;
  Weights(DType type, int64_t rows, int64_t cols, uint32_t seed, size_t pad = 0) {
    const std::vector<float> w = Gaussian(static_cast<size_t>(rows * cols), 0.05f, seed);
    const size_t stride = RowBytes(type, cols) + pad;
    bytes.assign(stride * rows, 0xCD);
    for (int64_t r = 0; r < rows; ++r)
      QuantizeRow(type, w.data() + r * cols, cols, bytes.data() + r * stride);
    view = MatrixView{type, bytes.data(), rows, cols, stride};
  }
};

int64_t ColsFor(DType type) { return GetDTypeInfo(type).block_elems == 256 ? 512 : 320; }

// Column counts that reach every loop of the x86 kernels. 32-element blocks:
// 3 blocks (per-block loop only), 8 (one 8-block scale chunk), 10 (chunk +
// tail), 25 (three chunks + tail), 50 (six chunks + tail, rows longer than
// the 1 KB decode prefetch distance). K-quants: 1..5 and 9 super-blocks (the
// decode kernel takes four super-blocks per step: 1..3 are tails only, 4 one
// step, 5 and 9 steps + a tail, 9 also reaches past the prefetch distance).
std::vector<int64_t> ColsSweep(DType type) {
  if (GetDTypeInfo(type).block_elems == 256) return {256, 512, 768, 1024, 1280, 2304};
  // Plus 7, 15, 18, 20, 28 blocks: every min-term tail length (blocks mod 8)
  // and the real row lengths 576, 640, 896 (SmolLM2, Gemma 3, Qwen2.5); 16, 31,
  // 32 and 33 blocks: one, two and three 16-block groups, full or with tails.
  if (GetDTypeInfo(type).block_elems == 32) return {96, 224, 256, 320, 480, 512, 576, 640, 800, 896, 992, 1024, 1056, 1600};
  return {ColsFor(type)};
}

// Quantized types: MatMul must equal MatMulReference bit for bit (same
// activation quantization, exact integer dots, canonical float order). The
// batches cover every register-tile width (32-element blocks: 1 x 1..8 for
// widths up to 16, 2 x 1..4 for prefill; K-quants 1..8; plus tails) and the
// odd row count the 2-row tile's tail row.
// Float types: the SIMD sum order differs from the double reference; the
// classic bound |error| <= n * 2^-24 * sum |w x| holds for any order (n = cols).
TEST(MatMulTest, MatchesReferenceOnEveryTarget) {
  const std::vector<int64_t> batches = Sanitized()
                                           ? std::vector<int64_t>{1, 3, 6, 17}
                                           : std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 16, 17, 64, 130};
  const int64_t rows = Sanitized() ? 13 : 37;
  ThreadPool pool(2);
  for (DType type : kAllTypes) {
    SCOPED_TRACE(GetDTypeInfo(type).name);
    const int64_t cols = ColsFor(type);
    const Weights w(type, rows, cols, 11);
    const int64_t max_batch = batches.back();
    const int64_t ldx = cols + 3, ldy = rows + 5;
    const std::vector<float> x = Gaussian(static_cast<size_t>(max_batch * ldx), 1.0f, 5);
    std::vector<float> ref(max_batch * ldy), bound(max_batch * ldy);
    MatMulReference(w.view, x.data(), ldx, max_batch, ref.data(), ldy);
    if (IsFloat(type)) {
      std::vector<float> wf(cols);
      for (int64_t r = 0; r < rows; ++r) {
        GetRow(w.view, r, wf.data());
        for (int64_t b = 0; b < max_batch; ++b) {
          double s = 0;
          for (int64_t c = 0; c < cols; ++c) s += std::fabs(double(wf[c]) * x[b * ldx + c]);
          bound[b * ldy + r] = static_cast<float>(cols * std::ldexp(1.0, -24) * s);
        }
      }
    }
    ForEachTarget([&] {
      for (int64_t batch : batches) {
        SCOPED_TRACE(batch);
        std::vector<float> y(batch * ldy, -1.0f);
        MatMul(w.view, x.data(), ldx, batch, y.data(), ldy, pool);
        for (int64_t b = 0; b < batch; ++b) {
          for (int64_t r = 0; r < rows; ++r) {
            const float got = y[b * ldy + r], want = ref[b * ldy + r];
            if (IsFloat(type)) {
              ASSERT_NEAR(got, want, bound[b * ldy + r]) << "b=" << b << " r=" << r;
            } else {
              ASSERT_EQ(FloatBits(got), FloatBits(want)) << got << " vs " << want << " b=" << b << " r=" << r;
            }
          }
          for (int64_t r = rows; r < ldy; ++r) ASSERT_EQ(y[b * ldy + r], -1.0f);  // padding untouched
        }
      }
    });
  }
}

// Every quantized type runs a SIMD kernel on every SIMD target this CPU runs
// (x86 AVX2/AVX-512, Arm NEON and SVE); only the portable targets (EMU128,
// SCALAR) use the scalar reference. Together with the bit-exactness tests
// this proves that each target's kernels match the reference.
TEST(MatMulTest, EveryQuantizedTypeHasASimdKernel) {
  RestrictDispatchToCpu();
  std::string checked;
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    const std::string name = hwy::TargetName(target);
    SCOPED_TRACE(name);
    const bool portable = target == HWY_EMU128 || target == HWY_SCALAR;
    for (DType type : kAllTypes) {
      if (IsFloat(type)) continue;
      EXPECT_EQ(MatMulKernelIsSimd(type), !portable) << GetDTypeInfo(type).name;
    }
    checked += " " + name + (portable ? " (reference)" : "");
  }
  hwy::SetSupportedTargetsForTest(0);
  std::printf("quantized MatMul kernels checked on:%s\n", checked.c_str());
}

// Quantized types over column counts that exercise every kernel loop (scale
// chunks and tails, paired super-blocks and the single tail),
// batches 1..16 (every register-tile width; one and two balanced 1 x NB
// tiles, e.g. 9 = 5 + 4), on every target: bit-equal to the reference.
TEST(MatMulTest, ColumnSweepMatchesReference) {
  const int64_t rows = 19;  // a full 16-row block and a partial one
  ThreadPool pool(2);
  for (DType type : kAllTypes) {
    if (IsFloat(type)) continue;
    for (int64_t cols : ColsSweep(type)) {
      SCOPED_TRACE(std::string(GetDTypeInfo(type).name) + " cols=" + std::to_string(cols));
      const Weights w(type, rows, cols, 31);
      const int64_t batch = 16;
      const std::vector<float> x = Gaussian(static_cast<size_t>(batch * cols), 1.0f, 6);
      std::vector<float> ref(batch * rows);
      MatMulReference(w.view, x.data(), cols, batch, ref.data(), rows);
      ForEachTarget([&] {
        for (int64_t b = 1; b <= batch; ++b) {
          std::vector<float> y(b * rows);
          MatMul(w.view, x.data(), cols, b, y.data(), rows, pool);
          ASSERT_TRUE(test::BitEqual(y.data(), ref.data(), y.size())) << "batch=" << b;
        }
      });
    }
  }
}

// Prefill-sized inputs (batch >= 8 and batch x cols >= 2^16) are quantized on
// the pool's threads, one per-thread interleaving scratch each (kQ8X on x86):
// still bit-equal to the reference, at real row lengths with group tails.
TEST(MatMulTest, PoolQuantizedPrefillMatchesReference) {
  const int64_t rows = 5, batch = Sanitized() ? 120 : 260;
  ThreadPool pool(2);
  for (DType type : {DType::kQ8_0, DType::kQ4_1, DType::kQ5_0, DType::kQ4_K}) {
    const int64_t cols = GetDTypeInfo(type).block_elems == 256 ? 1024 : 576;
    SCOPED_TRACE(GetDTypeInfo(type).name);
    const Weights w(type, rows, cols, 51);
    const std::vector<float> x = Gaussian(static_cast<size_t>(batch * cols), 1.0f, 8);
    std::vector<float> ref(batch * rows);
    MatMulReference(w.view, x.data(), cols, batch, ref.data(), rows);
    ForEachTarget([&] {
      std::vector<float> y(batch * rows);
      MatMul(w.view, x.data(), cols, batch, y.data(), rows, pool);
      ASSERT_TRUE(test::BitEqual(y.data(), ref.data(), y.size()));
    });
  }
}

// A product large enough for the thread pool (>= 2^18 MACs, see matmul.cc)
// equals the same rows computed in small pieces, which MatMul runs inline.
TEST(MatMulTest, PooledAndInlineAgree) {
  const int64_t rows = Sanitized() ? 128 : 256, cols = 1024, batch = 3;
  ThreadPool pool(2);
  for (DType type : {DType::kQ8_0, DType::kQ4_K, DType::kF32, DType::kQ3_K}) {
    SCOPED_TRACE(GetDTypeInfo(type).name);
    const Weights w(type, rows, cols, 41);
    const std::vector<float> x = Gaussian(static_cast<size_t>(batch * cols), 1.0f, 7);
    std::vector<float> full(batch * rows), pieces(batch * rows);
    MatMul(w.view, x.data(), cols, batch, full.data(), rows, pool);  // 3 * 2^18 MACs (full size): pooled
    for (int64_t r0 = 0; r0 < rows; r0 += 16) {
      MatrixView part = w.view;
      part.rows = 16;
      part.data = w.view.Row(r0);
      MatMul(part, x.data(), cols, batch, pieces.data() + r0, rows, pool);  // 3 * 2^14 MACs: inline
    }
    EXPECT_TRUE(test::BitEqual(full.data(), pieces.data(), full.size()));
  }
}

// Within one target, y[b][r] depends only on (row r, activation row b): compare
// a batch-64 two-thread product with batches 1, 3, 8, 17 on one thread and with
// a product over a split row range.
TEST(MatMulTest, BitExactAcrossBatchThreadsAndRowSplits) {
  const int64_t rows = Sanitized() ? 19 : 67, batch = Sanitized() ? 17 : 64;
  ThreadPool pool1(1), pool2(2);
  for (DType type : kAllTypes) {
    SCOPED_TRACE(GetDTypeInfo(type).name);
    const int64_t cols = ColsFor(type);
    const Weights w(type, rows, cols, 21);
    const std::vector<float> x = Gaussian(static_cast<size_t>(batch * cols), 1.0f, 9);
    ForEachTarget([&] {
      std::vector<float> full(batch * rows);
      MatMul(w.view, x.data(), cols, batch, full.data(), rows, pool2);
      for (int64_t sub : {1, 3, 8, 17}) {
        for (int64_t b0 = 0; b0 + sub <= batch; b0 += sub) {
          std::vector<float> part(sub * rows);
          MatMul(w.view, x.data() + b0 * cols, cols, sub, part.data(), rows, pool1);
          ASSERT_TRUE(test::BitEqual(part.data(), full.data() + b0 * rows, part.size()))
              << "sub=" << sub << " b0=" << b0;
        }
      }
      // Rows [0, 29) and [29, rows) as separate matrices.
      const int64_t split = 29 % rows;
      MatrixView top = w.view, bottom = w.view;
      top.rows = split;
      bottom.rows = rows - split;
      bottom.data = w.view.Row(split);
      std::vector<float> y(batch * rows);
      MatMul(top, x.data(), cols, batch, y.data(), rows, pool2);
      MatMul(bottom, x.data(), cols, batch, y.data() + split, rows, pool1);
      ASSERT_TRUE(test::BitEqual(y.data(), full.data(), y.size()));
    });
  }
}

// Several products of one input in one call (q/k/v, gate/up): each output
// must equal its own MatMul bit for bit, with weight types that need both
// activation formats and the float path at once, outputs whose row ranges
// straddle the pool's chunks, and padded output strides.
TEST(MatMulTest, SameInputMatchesSeparateProductsBitForBit) {
  const int64_t cols = 512;
  const struct {
    DType type;
    int64_t rows;
  } shapes[] = {{DType::kQ8_0, 67}, {DType::kQ4_K, 40}, {DType::kF32, 19}, {DType::kQ6_K, 5}, {DType::kQ4_0, 33},
                {DType::kBF16, 16}, {DType::kQ4_1, 21}, {DType::kQ5_0, 18}, {DType::kQ2_K, 9},
                {DType::kQ3_K, 23}, {DType::kIQ4_XS, 12}};
  std::vector<Weights> weights;
  for (size_t i = 0; i < std::size(shapes); ++i) {
    weights.emplace_back(shapes[i].type, shapes[i].rows, cols, static_cast<uint32_t>(61 + i));
  }
  ThreadPool pool1(1), pool2(2);
  ForEachTarget([&] {
    for (int64_t batch : {1, 3, 17, 64}) {
      SCOPED_TRACE("batch " + std::to_string(batch));
      const std::vector<float> x = Gaussian(static_cast<size_t>(batch * cols), 1.0f, 13);
      for (ThreadPool* pool : {&pool1, &pool2}) {
        std::vector<std::vector<float>> fused(weights.size()), separate(weights.size());
        std::vector<MatMulOutput> outs;
        for (size_t i = 0; i < weights.size(); ++i) {
          const int64_t ldy = weights[i].view.rows + static_cast<int64_t>(i);  // padded strides
          fused[i].assign(static_cast<size_t>(batch * ldy), -1.0f);
          separate[i].assign(static_cast<size_t>(batch * ldy), -1.0f);
          outs.push_back(MatMulOutput{weights[i].view, fused[i].data(), ldy});
          MatMul(weights[i].view, x.data(), cols, batch, separate[i].data(), ldy, *pool);
        }
        MatMulSameInput(outs, x.data(), cols, batch, *pool);
        for (size_t i = 0; i < weights.size(); ++i) {
          ASSERT_TRUE(test::BitEqual(fused[i].data(), separate[i].data(), fused[i].size()))
              << GetDTypeInfo(shapes[i].type).name << ", " << pool->num_threads() << " threads";
        }
      }
    }
  });
}

// Total error of a quantized MatMul against the true product is dominated by
// the weight format; activation quantization adds < 1% relative RMS (8-bit
// rounding of Gaussian activations: step amax / 127 ~ 3.5 sigma / 127, error
// ~ step / sqrt(12) ~ 0.8% of sigma per element, averaging down in the dot).
TEST(MatMulTest, ActivationQuantizationErrorIsSmall) {
  const int64_t rows = 32, batch = 4;
  ThreadPool pool(2);
  for (DType type : {DType::kQ8_0, DType::kQ4_K, DType::kQ6_K, DType::kQ4_1, DType::kQ5_0, DType::kQ5_1,
                     DType::kIQ4_NL, DType::kQ2_K, DType::kQ3_K, DType::kIQ4_XS}) {
    const int64_t cols = 1024;
    const Weights w(type, rows, cols, 3);
    const std::vector<float> x = Gaussian(static_cast<size_t>(batch * cols), 1.0f, 4);
    std::vector<float> y(batch * rows), exact(batch * rows);
    MatMul(w.view, x.data(), cols, batch, y.data(), rows, pool);
    MatMulDequantReference(w.view, x.data(), cols, batch, exact.data(), rows);
    double err = 0, norm = 0;
    for (size_t i = 0; i < y.size(); ++i) {
      err += (double(y[i]) - exact[i]) * (double(y[i]) - exact[i]);
      norm += double(exact[i]) * exact[i];
    }
    EXPECT_LT(std::sqrt(err / norm), 0.01) << GetDTypeInfo(type).name;
  }
}

// Activations whose scaled values x * 127 / amax fall exactly on .5 ties (amax
// = 127, so the scale is 1): every target's SIMD activation quantizer must round
// them to even like the scalar reference, or the bit-exact comparison fails.
TEST(MatMulTest, ActivationTiesMatchReference) {
  ThreadPool pool(1);
  for (DType type : {DType::kQ8_0, DType::kQ4_0, DType::kQ4_1, DType::kQ5_0, DType::kQ4_K, DType::kQ6_K,
                     DType::kQ2_K, DType::kQ3_K, DType::kIQ4_XS}) {
    const int64_t cols = 512;
    const Weights w(type, 7, cols, 8);
    std::vector<float> x(cols);
    for (int64_t c = 0; c < cols; ++c) x[c] = (c % 32 == 0) ? 127.0f : static_cast<float>(c % 17) - 8.5f;
    std::vector<float> ref(7), y(7);
    MatMulReference(w.view, x.data(), cols, 1, ref.data(), 7);
    ForEachTarget([&] {
      MatMul(w.view, x.data(), cols, 1, y.data(), 7, pool);
      ASSERT_TRUE(test::BitEqual(y.data(), ref.data(), 7)) << GetDTypeInfo(type).name;
    });
  }
}

TEST(MatMulTest, GetRowDequantizes) {
  for (DType type : kAllTypes) {
    const int64_t cols = ColsFor(type);
    const Weights w(type, 5, cols, 2, /*pad=*/7);
    std::vector<float> got(cols), want(cols);
    GetRow(w.view, 3, got.data());
    DequantizeRow(type, w.view.Row(3), cols, want.data());
    EXPECT_TRUE(test::BitEqual(got.data(), want.data(), cols)) << GetDTypeInfo(type).name;
  }
}

TEST(MatMulTest, ZeroActivationsGiveZero) {
  ThreadPool pool(2);
  for (DType type : kAllTypes) {
    const int64_t cols = ColsFor(type);
    const Weights w(type, 9, cols, 2);
    std::vector<float> x(2 * cols, 0.0f), y(2 * 9, 1.0f);
    ForEachTarget([&] {
      MatMul(w.view, x.data(), cols, 2, y.data(), 9, pool);
      for (float v : y) ASSERT_EQ(v, 0.0f) << GetDTypeInfo(type).name;
    });
  }
}

// Each quantized type with the byte offsets of the F16 fields in its block.
struct HalfFields {
  DType type;
  std::vector<size_t> halves;
};
const std::vector<HalfFields>& QuantizedTypesWithHalves() {
  static const std::vector<HalfFields> types = {
      {DType::kQ8_0, {0}},     {DType::kQ4_0, {0}},     {DType::kQ4_1, {0, 2}},  {DType::kQ5_0, {0}},
      {DType::kQ5_1, {0, 2}},  {DType::kIQ4_NL, {0}},   {DType::kQ4_K, {0, 2}},  {DType::kQ5_K, {0, 2}},
      {DType::kQ6_K, {208}},   {DType::kQ2_K, {80, 82}}, {DType::kQ3_K, {108}}, {DType::kIQ4_XS, {0}},
  };
  return types;
}

// `rows` x `cols` blocks of f's type: every byte from byte(), then the F16
// fields of every block set to small finite values.
template <class Byte>
std::vector<uint8_t> TestBlockBytes(const HalfFields& f, int64_t rows, int64_t cols, std::mt19937& rng,
                                    const Byte& byte) {
  std::vector<uint8_t> bytes(RowBytes(f.type, cols) * rows);
  for (uint8_t& b : bytes) b = byte();
  const size_t block_bytes = static_cast<size_t>(GetDTypeInfo(f.type).block_bytes);
  std::uniform_real_distribution<float> scale(1e-3f, 1e-2f);
  for (size_t block = 0; block < bytes.size() / block_bytes; ++block) {
    for (size_t off : f.halves) StoreHalfBits(F32ToF16(scale(rng)), &bytes[block * block_bytes + off]);
  }
  return bytes;
}

// body(w, rng) for a rows x cols matrix of each quantized type (cols:
// k_cols for the 256-element types, 320 otherwise) whose bytes come from
// byte(rng), F16 fields small and finite.
template <class Byte, class Body>
void ForEachTestMatrix(int64_t rows, int64_t k_cols, uint32_t seed, const Byte& byte, const Body& body) {
  std::mt19937 rng(seed);
  for (const HalfFields& f : QuantizedTypesWithHalves()) {
    SCOPED_TRACE(GetDTypeInfo(f.type).name);
    const int64_t cols = GetDTypeInfo(f.type).block_elems == 256 ? k_cols : 320;
    const std::vector<uint8_t> bytes = TestBlockBytes(f, rows, cols, rng, [&] { return byte(rng); });
    body(MatrixView{f.type, bytes.data(), rows, cols, RowBytes(f.type, cols)}, rng);
  }
}

// MatMul of the first `width` rows of x (each width in `widths`) equals `ref`
// bit for bit on every target.
void ExpectReferenceBitsOnEveryTarget(const MatrixView& w, const std::vector<float>& x,
                                      const std::vector<float>& ref, std::initializer_list<int64_t> widths,
                                      ThreadPool& pool) {
  ForEachTarget([&] {
    for (int64_t width : widths) {
      std::vector<float> y(width * w.rows, -1.0f);
      MatMul(w, x.data(), w.cols, width, y.data(), w.rows, pool);
      for (int64_t i = 0; i < width * w.rows; ++i) {
        ASSERT_EQ(FloatBits(y[i]), FloatBits(ref[i])) << "width " << width << " element " << i;
      }
    }
  });
}

// Raw random block bytes (every level and sub-block scale pattern, including
// the extremes: Q6_K/Q3_K scales -128..127 / -32..31, 6-bit scales and mins
// of 63, IQ4 codebook -127) against activations that all quantize to +-127:
// the largest integer sums any kernel meets (e.g. two products of 127 * 127
// in one int16 lane of the NEON widening dot). The F16 scale fields are set
// to small finite values. Bit-equal to the reference on every target.
TEST(MatMulTest, RandomBlockBytesAndExtremeActivationsMatchReference) {
  ThreadPool pool(2);
  const auto random_byte = [](std::mt19937& rng) { return static_cast<uint8_t>(rng()); };
  ForEachTestMatrix(11, 1280, 77, random_byte, [&](const MatrixView& w, std::mt19937& rng) {
    const int64_t batch = 9;
    std::vector<float> x(batch * w.cols);
    for (float& v : x) v = (rng() & 1) ? 1.0f : -1.0f;
    std::vector<float> ref(batch * w.rows);
    MatMulReference(w, x.data(), w.cols, batch, ref.data(), w.rows);
    for (float v : ref) ASSERT_TRUE(std::isfinite(v) && v != 0.0f);
    ExpectReferenceBitsOnEveryTarget(w, x, ref, {1, 4, batch}, pool);
  });
}

// Every level byte 0xFF (the largest level of each type, all bits of Q5_K's
// and Q6_K's high bits set) against activations that are all +1 or all -1
// (levels +-127): the largest partial sums the kernels' narrow (int16)
// accumulators must hold. Random scales and minimum factors.
TEST(MatMulTest, SaturatedLevelsMatchReference) {
  ThreadPool pool(2);
  const auto all_ones = [](std::mt19937&) { return uint8_t{0xFF}; };
  ForEachTestMatrix(6, 768, 78, all_ones, [&](const MatrixView& w, std::mt19937&) {
    const int64_t batch = 17;
    for (float sign : {1.0f, -1.0f}) {
      SCOPED_TRACE(sign);
      const std::vector<float> x(batch * w.cols, sign);
      std::vector<float> ref(batch * w.rows);
      MatMulReference(w, x.data(), w.cols, batch, ref.data(), w.rows);
      ExpectReferenceBitsOnEveryTarget(w, x, ref, {1, 5, batch}, pool);
    }
  });
}

}  // namespace
}  // namespace cairn::kernels
