// Helpers shared by the attention kernel tests: one layer's KV for a sequence
// in paged blocks filled with random rows, and GQA parameters.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/kv_block.h"
#include "core/thread_pool.h"
#include "kernels/attention.h"
#include "kernels/kv_write.h"
#include "ops_test_util.h"

namespace cairn::kernels::test {

// A sequence's KV for one layer in paged blocks, filled with random rows:
// keys uniform in [-2, 2] (scores up to ~|q||k|), values in [-1, 1]. k_q8:
// K as Q8_0 (core/kv_block.h's KvQ8Geometry), V of `dtype`.
struct PagedKv {
  PagedKv(DType dtype, int block_tokens, int n_kv_heads, int head_dim, int64_t n_tokens, uint32_t seed,
          bool k_q8 = false) {
    view.dtype = dtype;
    view.k_q8 = k_q8;
    view.block_tokens = block_tokens;
    view.n_kv_heads = n_kv_heads;
    view.head_dim = head_dim;
    view.n_tokens = n_tokens;
    KvLayout layout;
    layout.n_kv_heads = n_kv_heads;
    layout.head_dim = head_dim;
    layout.block_tokens = block_tokens;
    layout.dtype = dtype;
    layout.k_q8 = k_q8;
    const int64_t n_blocks = (n_tokens + block_tokens - 1) / block_tokens;
    for (int64_t b = 0; b < 2 * n_blocks; ++b) slabs.emplace_back(layout.SlabBytes(static_cast<int>(b % 2)));
    for (int64_t b = 0; b < n_blocks; ++b) {
      k_ptrs.push_back(slabs[2 * b].data());
      v_ptrs.push_back(slabs[2 * b + 1].data());
    }
    view.k_blocks = k_ptrs.data();
    view.v_blocks = v_ptrs.data();
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> row(static_cast<size_t>(n_kv_heads) * head_dim);
    for (int64_t pos = 0; pos < n_tokens; ++pos) {
      const int t = static_cast<int>(pos % block_tokens);
      for (float& x : row) x = dist(rng) * 2.0f;
      StoreKvToken(layout.KType(), n_kv_heads, head_dim, block_tokens, row.data(),
                   slabs[2 * (pos / block_tokens)].data(), t);
      for (float& x : row) x = dist(rng);
      StoreKvToken(dtype, n_kv_heads, head_dim, block_tokens, row.data(), slabs[2 * (pos / block_tokens) + 1].data(),
                   t);
    }
  }
  std::vector<AlignedBuffer<uint8_t>> slabs;
  std::vector<const uint8_t*> k_ptrs, v_ptrs;
  KvView view;
};

// Attention of q's rows on every target with 1 and 2 threads, each output
// within `tolerance` of want's (a reference's).
inline void ExpectEveryTargetNear(const AttentionParams& p, const std::vector<float>& q, int64_t rows, int64_t pos0,
                                  const KvView& kv, const std::vector<float>& want, float tolerance) {
  ForEachTarget([&] {
    for (int threads : {1, 2}) {
      ThreadPool pool(threads);
      std::vector<float> got(q.size());
      Attention(p, q.data(), rows, pos0, kv, got.data(), pool);
      for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], tolerance) << i << " hd " << p.head_dim;
    }
  });
}

// EXACTNESS, on every target: the n rows of q (positions 0..n-1) computed in
// one call (1 thread), in random chunks (2 threads), with the last 24 rows
// token by token (decode: split-KV) and the last 5 as one verification batch
// (2 threads) give the same bits.
inline void ExpectSplitInvariant(const AttentionParams& p, const std::vector<float>& q, int64_t n,
                                 const KvView& kv) {
  const int64_t row = static_cast<int64_t>(p.n_heads) * p.head_dim;
  ForEachTarget([&] {
    std::vector<float> one(q.size()), chunked(q.size()), decode(q.size());
    ThreadPool pool1(1), pool2(2);
    Attention(p, q.data(), n, 0, kv, one.data(), pool1);
    std::mt19937 rng(5);
    for (int64_t i = 0; i < n;) {
      const int64_t len = std::min<int64_t>(1 + rng() % 97, n - i);
      Attention(p, q.data() + i * row, len, i, kv, chunked.data() + i * row, pool2);
      i += len;
    }
    EXPECT_TRUE(BitEqual(one.data(), chunked.data(), q.size())) << "chunked";
    const int64_t tail = 24;
    Attention(p, q.data(), n - tail, 0, kv, decode.data(), pool2);
    for (int64_t i = n - tail; i < n; ++i) Attention(p, q.data() + i * row, 1, i, kv, decode.data() + i * row, pool2);
    EXPECT_TRUE(BitEqual(one.data(), decode.data(), q.size())) << "decode";
    std::vector<float> verify(5 * row);
    Attention(p, q.data() + (n - 5) * row, 5, n - 5, kv, verify.data(), pool2);
    EXPECT_TRUE(BitEqual(one.data() + (n - 5) * row, verify.data(), verify.size())) << "verification";
  });
}

inline AttentionParams Params(int n_heads, int n_kv_heads, int hd) {
  AttentionParams p;
  p.n_heads = n_heads;
  p.n_kv_heads = n_kv_heads;
  p.head_dim = hd;
  p.scale = 1.0f / std::sqrt(static_cast<float>(hd));
  return p;
}

}  // namespace cairn::kernels::test
