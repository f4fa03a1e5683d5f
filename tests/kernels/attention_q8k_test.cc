// The Q8_0 K cache (`--cache-type-k q8_0`): the writer stores ggml's Q8_0
// blocks in core/kv_block.h's KvQ8Geometry; attention over it matches the
// double-precision reference of its numeric class (kernels/attention_q8k-inl.h)
// and is exact: one-shot, chunked, token-by-token and verification-shaped
// calls give the same bits on each SIMD target.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "attention_test_util.h"
#include "core/half.h"
#include "core/kv_block.h"
#include "core/thread_pool.h"
#include "kernels/attention.h"
#include "kernels/kv_write.h"
#include "kernels/quant_blocks.h"
#include "kernels/quant_kquants.h"
#include "kernels/ref/attention_ref.h"
#include "ops_test_util.h"

namespace cairn::kernels {
namespace {

using test::PagedKv;
using test::Params;

// The rotation (KvQ8Geometry::Rotation, RotateForQ8K) is the Sylvester
// Walsh-Hadamard matrix times a power of two, per run of `size` elements, and
// a rotated query and key keep their dot product.
TEST(KvQ8Test, RotationIsScaledWalshHadamard) {
  EXPECT_EQ((KvQ8Geometry{64, 32}.Rotation()), 0);    // head dim not a multiple of 64: none
  EXPECT_EQ((KvQ8Geometry{64, 64}.Rotation()), 64);
  EXPECT_EQ((KvQ8Geometry{64, 128}.Rotation()), 128);
  EXPECT_EQ((KvQ8Geometry{64, 192}.Rotation()), 64);  // three runs of 64
  EXPECT_EQ((KvQ8Geometry{64, 256}.Rotation()), 256);
  for (const int hd : {32, 64, 128, 192, 256}) {
    const int size = KvQ8Geometry{64, hd}.Rotation();
    const std::vector<float> q = test::RandomVector(hd, -2.0f, 2.0f, 31);
    const std::vector<float> k = test::RandomVector(hd, -2.0f, 2.0f, 32);
    std::vector<float> rq = q, rk = k;
    RotateForQ8K(rq.data(), hd, /*query=*/true);
    RotateForQ8K(rk.data(), hd, /*query=*/false);
    double dot = 0, rdot = 0;
    for (int i = 0; i < hd; ++i) {
      dot += static_cast<double>(q[i]) * k[i];
      rdot += static_cast<double>(rq[i]) * rk[i];
    }
    EXPECT_NEAR(rdot, dot, 1e-4) << hd;
    if (size == 0) {
      EXPECT_EQ(rk, k);
      continue;
    }
    int log2_size = 0;
    while ((1 << log2_size) < size) ++log2_size;
    const double key_scale = std::ldexp(1.0, -(log2_size / 2));
    for (int run = 0; run < hd; run += size) {
      for (int i = 0; i < size; ++i) {
        double want = 0;   // row i of Sylvester's W: (-1)^popcount(i & j)
        for (int j = 0; j < size; ++j) want += (__builtin_popcount(i & j) % 2 ? -1.0 : 1.0) * k[run + j];
        ASSERT_NEAR(rk[run + i], want * key_scale, 1e-5) << "hd " << hd << " element " << run + i;
      }
    }
  }
}

// Token 7 of a 20-token block (T = 32: padded), two heads of 64: the region's
// bytes are ggml's quantize_row_q8_0 blocks of the rotated row (levels + 128,
// d as F16), and LoadKvToken gives level * d back.
TEST(KvQ8Test, RowsAreGgmlQ8_0BlocksOfTheRotatedRow) {
  const int heads = 2, hd = 64, bt = 20, token = 7;
  const KvQ8Geometry g{bt, hd};
  ASSERT_EQ(g.Tokens(), 32);
  std::vector<float> x = test::RandomVector(heads * hd, -3.0f, 3.0f, 21);
  for (int i = 0; i < 64; ++i) x[i] = 0.0f;   // an all-zero head: d = 0, levels 0
  std::vector<uint8_t> slab(static_cast<size_t>(heads * g.RegionBytes()), 0xAB);
  StoreKvToken(DType::kQ8_0, heads, hd, bt, x.data(), slab.data(), token);
  std::vector<float> back(x.size());
  LoadKvToken(DType::kQ8_0, heads, hd, bt, slab.data(), token, back.data());
  std::vector<float> rotated = x;
  for (int h = 0; h < heads; ++h) RotateForQ8K(rotated.data() + h * hd, hd, /*query=*/false);
  for (int h = 0; h < heads; ++h) {
    std::vector<BlockQ8_0> want(hd / 32);
    QuantizeRowQ8_0(rotated.data() + h * hd, hd, want.data());
    const uint8_t* region = slab.data() + h * g.RegionBytes();
    for (int b = 0; b < hd / 32; ++b) {
      uint16_t d;
      std::memcpy(&d, region + g.ScaleOffset(b, token), sizeof d);
      EXPECT_EQ(d, LoadHalfBits(want[b].d)) << "head " << h << " block " << b;
      for (int i = 0; i < 32; ++i) {
        const int quad = b * 8 + i / 4;
        EXPECT_EQ(region[g.QuadOffset(quad, token) + i % 4], static_cast<uint8_t>(want[b].qs[i] + 128));
        EXPECT_EQ(back[h * hd + b * 32 + i], static_cast<float>(want[b].qs[i]) * F16ToF32(d));
      }
    }
  }
}

TEST(KvQ8Test, NonFiniteBlockGetsNaNScaleAndZeroLevels) {
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    std::vector<float> x(32, 1.0f);
    x[5] = bad;
    int8_t levels[32];
    EXPECT_TRUE(std::isnan(QuantizeQ8Block(x.data(), levels)));
    for (int8_t l : levels) EXPECT_EQ(l, 0);
  }
}

// Tolerance 2e-5 against the reference of the same class (same quantized
// integers; the kernel rounds dq * dk and its F32 chain per pair, the reference
// works in double), as for the F16 cache. Against the F16 cache's exact
// scores the class differs by the quantization of q and k: bounded here by
// 0.05 on outputs in [-1, 1] for these random rows (scores up to ~10).
TEST(AttentionQ8KTest, MatchesReference) {
  struct Case { DType v; int heads, kv_heads, hd, block; int64_t rows, pos0; };
  const bool big = !test::Sanitized();
  const std::vector<Case> cases = {
      {DType::kF16, 4, 2, 64, 16, 5, 0},         // prefill from 0, partial last block
      {DType::kBF16, 8, 2, 128, 64, 3, 37},      // GQA 4, continuation rows
      {DType::kF16, 8, 2, 256, 20, 1, 100},      // Qwen3.5 shape, T padded to 32, decode
      {DType::kF16, 4, 1, 64, 64, 40, big ? 2200 : 600},   // > 1 partition (2048)
      {DType::kF16, 14, 2, 64, 64, 37, 90},      // GQA 7 (Qwen2.5-0.5B), 3 x 7 queries of remainder
      {DType::kF16, 9, 3, 64, 64, 29, 0},        // GQA 3 (SmolLM2-135M)
  };
  for (const Case& c : cases) {
    PagedKv kv(c.v, c.block, c.kv_heads, c.hd, c.pos0 + c.rows, 7, /*k_q8=*/true);
    PagedKv f16(c.v, c.block, c.kv_heads, c.hd, c.pos0 + c.rows, 7);
    const AttentionParams p = Params(c.heads, c.kv_heads, c.hd);
    const std::vector<float> q = test::RandomVector(c.rows * c.heads * c.hd, -1.0f, 1.0f, 8);
    std::vector<float> want(q.size()), exact(q.size());
    ref::Attention(p, q.data(), c.rows, c.pos0, kv.view, want.data());
    ref::Attention(p, q.data(), c.rows, c.pos0, f16.view, exact.data());
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(want[i], exact[i], 0.05f) << i;
    test::ExpectEveryTargetNear(p, q, c.rows, c.pos0, kv.view, want, 2e-5f);
  }
}

// EXACTNESS at the Qwen3.5 shape (GQA 4, head dim 256) over two partitions:
// one-shot prefill (1 thread), random chunks (2 threads), token-by-token
// decode of the tail (split-KV) and a 5-row verification batch give the same
// bits, on every target (the scores are the same on all targets; the softmax
// sums, as with the F16 cache, follow the target's vector width). Blocks of
// 64 and of 20 tokens (T padded).
TEST(AttentionQ8KTest, BitIdenticalAcrossSplitsAndThreads) {
  const int heads = 8, kvh = 2, hd = 256;
  for (const int block : {64, 20}) {
    // Two partitions with 64-token blocks; the padded blocks in one.
    const int64_t n = test::Sanitized() ? 300 : block == 64 ? 2100 : 600;
    PagedKv kv(DType::kF16, block, kvh, hd, n, 11, /*k_q8=*/true);
    const AttentionParams p = Params(heads, kvh, hd);
    const std::vector<float> q = test::RandomVector(n * heads * hd, -1.5f, 1.5f, 12);
    SCOPED_TRACE(block);
    test::ExpectSplitInvariant(p, q, n, kv.view);
  }
}

}  // namespace
}  // namespace cairn::kernels
