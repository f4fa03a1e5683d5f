#include "kernels/attention.h"

#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "attention_test_util.h"
#include "core/thread_pool.h"
#include "kernels/kv_write.h"
#include "kernels/ref/attention_ref.h"
#include "ops_test_util.h"

namespace cairn::kernels {
namespace {

using test::PagedKv;
using test::Params;

TEST(KvWriteTest, RoundTripsRoundToNearestEven) {
  const std::vector<float> x = {1.0f, 1.0f + 1.0f / 2048, 1.0f + 3.0f / 2048, -2.5f, 65504.0f, 1e-8f};
  std::vector<uint8_t> slab(4 * 6 * 2);
  for (DType dt : {DType::kF16, DType::kBF16}) {
    StoreKvToken(dt, 2, 3, 4, x.data(), slab.data(), 2);
    std::vector<float> y(6);
    LoadKvToken(dt, 2, 3, 4, slab.data(), 2, y.data());
    EXPECT_EQ(y[0], 1.0f);
    EXPECT_EQ(y[3], -2.5f);
    if (dt == DType::kF16) {
      EXPECT_EQ(y[1], 1.0f);                   // tie -> even
      EXPECT_EQ(y[2], 1.0f + 4.0f / 2048);     // tie -> even (up)
      EXPECT_EQ(y[4], 65504.0f);
    }
  }
}

// Tolerance vs the double-precision naive reference: 2e-5 absolute on outputs
// that are convex combinations of V in [-1, 1]. Sources: F32 dot products of
// head_dim <= 128 terms (|score| <= ~12, relative 1e-7 -> 1e-6 absolute on a
// score, i.e. 1e-6 relative on a weight), Highway exp (1 ulp), the F32
// running sums over up to ~2.3k keys in tiles, and one divide.
TEST(AttentionTest, MatchesNaiveReference) {
  struct Case { DType dt; int heads, kv_heads, hd, block; int64_t rows, pos0; };
  const bool big = !test::Sanitized();
  const std::vector<Case> cases = {
      {DType::kF16, 4, 2, 64, 16, 5, 0},      // prefill from 0, partial last block
      {DType::kBF16, 8, 2, 128, 64, 3, 37},   // GQA 4, continuation rows
      {DType::kF16, 2, 2, 40, 16, 1, 100},    // head_dim with a vector tail, decode
      {DType::kBF16, 4, 1, 64, 64, 4, big ? 2200 : 600},  // > 1 partition (2048)
  };
  for (const Case& c : cases) {
    PagedKv kv(c.dt, c.block, c.kv_heads, c.hd, c.pos0 + c.rows, 7);
    const AttentionParams p = Params(c.heads, c.kv_heads, c.hd);
    const std::vector<float> q = test::RandomVector(c.rows * c.heads * c.hd, -1.0f, 1.0f, 8);
    std::vector<float> want(q.size());
    ref::Attention(p, q.data(), c.rows, c.pos0, kv.view, want.data());
    test::ExpectEveryTargetNear(p, q, c.rows, c.pos0, kv.view, want, 2e-5f);
  }
}

// Qwen3.5 layout: q interleaved with its gate per head.
TEST(AttentionTest, StridedQueries) {
  const int heads = 4, kvh = 2, hd = 64;
  PagedKv kv(DType::kF16, 16, kvh, hd, 20, 9);
  AttentionParams p = Params(heads, kvh, hd);
  const std::vector<float> dense = test::RandomVector(3 * heads * hd, -1.0f, 1.0f, 10);
  std::vector<float> inter(3 * heads * 2 * hd, 99.0f);
  for (int r = 0; r < 3; ++r)
    for (int h = 0; h < heads; ++h)
      std::copy_n(dense.data() + (r * heads + h) * hd, hd, inter.data() + (r * heads + h) * 2 * hd);
  ThreadPool pool(1);
  std::vector<float> a(dense.size()), b(dense.size());
  Attention(p, dense.data(), 3, 17, kv.view, a.data(), pool);
  p.q_head_stride = 2 * hd;
  p.q_row_stride = 2 * heads * hd;
  Attention(p, inter.data(), 3, 17, kv.view, b.data(), pool);
  EXPECT_TRUE(test::BitEqual(a.data(), b.data(), a.size()));
}

// EXACTNESS: one-shot prefill (1 thread), random chunking (2 threads),
// token-by-token decode of the tail (2 threads and one KV head: the split-KV
// path, over 2 partitions) and a verification batch give bit-identical rows.
TEST(AttentionTest, BitIdenticalAcrossSplitsAndThreads) {
  const int heads = 2, kvh = 1, hd = 64, block = 32;
  const int64_t n = test::Sanitized() ? 300 : 2100;
  PagedKv kv(DType::kBF16, block, kvh, hd, n, 11);
  const AttentionParams p = Params(heads, kvh, hd);
  const std::vector<float> q = test::RandomVector(n * heads * hd, -1.5f, 1.5f, 12);
  test::ExpectSplitInvariant(p, q, n, kv.view);
}

// Sliding window (gemma3): matches the windowed naive reference, with the
// blocks wholly left of every row's window absent (null); one-shot, chunked
// and token-by-token rows are bit-identical, over more than one partition.
// With an F16 K cache and with a Q8_0 one (its reference: the same class).
TEST(AttentionTest, SlidingWindowMatchesReferenceAndIsSplitInvariant) {
  const int heads = 4, kvh = 1, hd = 64, block = 16;
  const int64_t n = test::Sanitized() ? 300 : 2300;
  for (const bool k_q8 : {false, true})
  for (const int64_t window : {int64_t{24}, int64_t{100}, int64_t{512}}) {
    SCOPED_TRACE(k_q8 ? "q8_0 K" : "f16 K");
    PagedKv kv(DType::kF16, block, kvh, hd, n, 13, k_q8);
    AttentionParams p = Params(heads, kvh, hd);
    p.window = window;
    const std::vector<float> q = test::RandomVector(n * heads * hd, -1.5f, 1.5f, 14);
    const int64_t row = heads * hd;
    std::vector<float> want(q.size());
    ref::Attention(p, q.data(), n, 0, kv.view, want.data());
    test::ForEachTarget([&] {
      ThreadPool pool1(1), pool2(2);
      std::vector<float> one(q.size()), chunked(q.size()), decode(q.size());
      Attention(p, q.data(), n, 0, kv.view, one.data(), pool1);
      for (size_t i = 0; i < one.size(); ++i) ASSERT_NEAR(one[i], want[i], 2e-5f) << i << " window " << window;
      std::mt19937 rng(6);
      for (int64_t i = 0; i < n;) {
        const int64_t len = std::min<int64_t>(1 + rng() % 97, n - i);
        Attention(p, q.data() + i * row, len, i, kv.view, chunked.data() + i * row, pool2);
        i += len;
      }
      EXPECT_TRUE(test::BitEqual(one.data(), chunked.data(), q.size())) << "window " << window;
      // Decode of the tail with the blocks no row of it sees removed.
      const int64_t tail = 40;
      std::vector<const uint8_t*> k(kv.view.k_blocks, kv.view.k_blocks + (n + block - 1) / block);
      std::vector<const uint8_t*> v(kv.view.v_blocks, kv.view.v_blocks + (n + block - 1) / block);
      for (int64_t b = 0; (b + 1) * block <= n - tail - window + 1; ++b) k[b] = v[b] = nullptr;
      KvView sparse = kv.view;
      sparse.k_blocks = k.data();
      sparse.v_blocks = v.data();
      for (int64_t i = n - tail; i < n; ++i) {
        Attention(p, q.data() + i * row, 1, i, sparse, decode.data() + i * row, pool2);
      }
      EXPECT_TRUE(test::BitEqual(one.data() + (n - tail) * row, decode.data() + (n - tail) * row, tail * row))
          << "window " << window;
    });
  }
}

}  // namespace
}  // namespace cairn::kernels
