// Attention kernel: every micro-tile remainder against the scalar reference,
// and bit-exact split invariance at the shapes of the shipped model presets.
//
// The kernel computes scores for micro-tiles of (4, 2 or 1 queries) x keys
// and P.V for micro-tiles of (4, 2 or 1 queries) x value columns; which
// micro-tile a (query, key) pair lands in depends on the row count of the
// call, the GQA group and where the row block starts. Each test below runs the
// same query rows through calls of different shapes and requires the same
// bits (src/kernels/attention.h, EXACTNESS), on every SIMD target this CPU
// runs, with 1 to 4 threads (4 > the KV heads here: the split-KV path).
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "attention_test_util.h"
#include "core/thread_pool.h"
#include "kernels/attention.h"
#include "kernels/ref/attention_ref.h"
#include "ops_test_util.h"

namespace cairn::kernels {
namespace {

using test::PagedKv;
using test::Params;

// Tolerance vs the double-precision reference: 2e-6 absolute on outputs that
// are convex combinations of V in [-1, 1]. Scores are F32 dot products of up
// to 256 terms (q in [-1.5, 1.5], k in [-2, 2], scaled: |s| of order 1,
// rounding ~1e-7 each), then the F32 running sums of the weights and of
// p * v over up to ~4.1k keys in 16-64-key tiles, partition merges and one
// divide. Measured maximum over these tests: 2.7e-7 (printed as "max |err|").
constexpr float kTolerance = 2e-6f;

struct Shape {
  int heads, kv_heads, hd;
};

// Runs rows [pos0, pos0 + n) in one call.
std::vector<float> RunRows(const AttentionParams& p, const std::vector<float>& q, int64_t q_row, int64_t first_row,
                       int64_t n, int64_t pos0, const KvView& kv, ThreadPool& pool) {
  std::vector<float> out(static_cast<size_t>(n) * p.n_heads * p.head_dim);
  Attention(p, q.data() + first_row * q_row, n, pos0, kv, out.data(), pool);
  return out;
}

float MaxAbsError(const float* got, const float* want, size_t n) {
  float e = 0.0f;
  for (size_t i = 0; i < n; ++i) e = std::max(e, std::fabs(got[i] - want[i]));
  return e;
}

// All `rows` rows in one call on one thread, checked against the reference
// `want` (first mismatch reported); updates *max_err and returns the rows.
std::vector<float> RunAllChecked(const AttentionParams& p, const std::vector<float>& q, int64_t q_row, int64_t rows,
                                 int64_t pos0, const KvView& kv, const std::vector<float>& want, float* max_err) {
  ThreadPool pool1(1);
  std::vector<float> all = RunRows(p, q, q_row, 0, rows, pos0, kv, pool1);
  *max_err = std::max(*max_err, MaxAbsError(all.data(), want.data(), all.size()));
  for (size_t i = 0; i < all.size(); ++i) {
    if (!(std::fabs(all[i] - want[i]) <= kTolerance)) {
      ADD_FAILURE() << "output " << i << ": " << all[i] << " vs reference " << want[i];
      break;
    }
  }
  return all;
}

// Rows 1..17 at positions that cross a 16-token block boundary, for head
// dims 64/128/256 and 40/36 (vector and scalar tails of the P.V and score
// loops), groups 1/2/4/8, F16 and BF16, 1/2 threads: every call matches the
// reference, and row i has the same bits whatever the row count of the call.
TEST(AttentionTilesTest, EveryRowCountGroupAndHeadDim) {
  const int block = 16;
  const int64_t max_rows = 17;
  const int64_t pos0 = 3 * block - 7;   // rows 41..57 cross the block boundary at 48
  const bool big = !test::Sanitized();
  const std::vector<int> head_dims = big ? std::vector<int>{64, 128, 256, 40, 36} : std::vector<int>{64, 36};
  const std::vector<int> groups = big ? std::vector<int>{1, 2, 4, 8} : std::vector<int>{1, 4};
  float max_err = 0.0f;
  for (DType dt : {DType::kF16, DType::kBF16}) {
    for (int hd : head_dims) {
      for (int group : groups) {
        const int kv_heads = group == 2 ? 1 : 2;
        const AttentionParams p = Params(group * kv_heads, kv_heads, hd);
        PagedKv kv(dt, block, kv_heads, hd, pos0 + max_rows, 100 + hd + group);
        const int64_t q_row = static_cast<int64_t>(p.n_heads) * hd;
        const std::vector<float> q = test::RandomVector(max_rows * q_row, -1.0f, 1.0f, 200 + hd + group);
        std::vector<float> want(q.size());
        ref::Attention(p, q.data(), max_rows, pos0, kv.view, want.data());
        test::ForEachTarget([&] {
          SCOPED_TRACE(testing::Message() << "hd " << hd << " group " << group);
          const std::vector<float> all = RunAllChecked(p, q, q_row, max_rows, pos0, kv.view, want, &max_err);
          if (testing::Test::HasFailure()) return;
          for (int threads : {1, 2}) {
            ThreadPool pool(threads);
            for (int64_t first = 0; first < max_rows; first += 5) {
              for (int64_t n = 1; first + n <= max_rows; ++n) {
                const std::vector<float> got = RunRows(p, q, q_row, first, n, pos0 + first, kv.view, pool);
                ASSERT_TRUE(test::BitEqual(got.data(), all.data() + first * q_row, got.size()))
                    << "hd " << hd << " group " << group << " rows [" << first << ", " << first + n << ") threads "
                    << threads;
              }
            }
          }
        });
      }
    }
  }
  std::printf("EveryRowCountGroupAndHeadDim: max |err| vs reference %.3g (tolerance %.3g)\n", max_err,
              kTolerance);
}

// Rows crossing the first partition boundary (2048) and, for a small shape,
// the second (4096): 1..17 rows per call against the reference, bit-equal
// across row counts and thread counts (1 thread: one pass over partitions;
// 4 threads and fewer KV heads: split-KV tasks and the merge pass).
TEST(AttentionTilesTest, RowsCrossingPartitions) {
  struct Case {
    DType dt;
    Shape shape;
    int block;
    int64_t boundary;
  };
  const bool big = !test::Sanitized();
  std::vector<Case> cases = {
      {DType::kF16, {16, 8, 128}, 64, kAttentionPartitionTokens},   // Qwen3-0.6B attention
      {DType::kBF16, {8, 2, 256}, 64, kAttentionPartitionTokens},   // Qwen3.5-0.8B attention
      {DType::kBF16, {8, 1, 64}, 16, kAttentionPartitionTokens},    // group 8, one KV head
      {DType::kF16, {2, 1, 64}, 32, 2 * kAttentionPartitionTokens},
  };
  if (!big) cases.resize(1);
  const int64_t max_rows = 17;
  float max_err = 0.0f;
  for (const Case& c : cases) {
    const AttentionParams p = Params(c.shape.heads, c.shape.kv_heads, c.shape.hd);
    const int64_t pos0 = c.boundary - 9;
    PagedKv kv(c.dt, c.block, c.shape.kv_heads, c.shape.hd, pos0 + max_rows, 31);
    const int64_t q_row = static_cast<int64_t>(p.n_heads) * p.head_dim;
    const std::vector<float> q = test::RandomVector(max_rows * q_row, -1.0f, 1.0f, 32);
    std::vector<float> want(q.size());
    ref::Attention(p, q.data(), max_rows, pos0, kv.view, want.data());
    test::ForEachTarget([&] {
      const std::vector<float> all = RunAllChecked(p, q, q_row, max_rows, pos0, kv.view, want, &max_err);
      if (testing::Test::HasFailure()) return;
      for (int threads : {2, 4}) {
        ThreadPool pool(threads);
        for (int64_t first : {int64_t{0}, int64_t{8}, int64_t{9}}) {
          for (int64_t n = 1; first + n <= max_rows; ++n) {
            const std::vector<float> got = RunRows(p, q, q_row, first, n, pos0 + first, kv.view, pool);
            ASSERT_TRUE(test::BitEqual(got.data(), all.data() + first * q_row, got.size()))
                << "heads " << c.shape.heads << " rows [" << first << ", " << first + n << ") threads " << threads;
          }
        }
      }
    });
  }
  std::printf("RowsCrossingPartitions: max |err| vs reference %.3g (tolerance %.3g)\n", max_err, kTolerance);
}

// The model presets' shapes over 64 rows around the partition boundary:
// one call (1 thread; several row blocks: the per-KV-head prefill tasks) ==
// random chunks (2 threads) == chunks of 8 (4 threads; one row block across
// the boundary: split-KV tasks and the merge pass) == token by token (2 and
// 4 threads) == speculative verification batches of 2-8 rows (3 threads),
// bit for bit. The Qwen3.5 case uses its interleaved q|gate layout.
// (Verification widths 2, 3, 4, 5, 8 cover the row-block remainders.)
TEST(AttentionTilesTest, BitIdenticalAcrossSplitsAtModelShapes) {
  struct Case {
    DType dt;
    Shape shape;
    bool gated_q;
  };
  const std::vector<Case> cases = {
      {DType::kF16, {8, 2, 256}, true},     // Qwen3.5-0.8B
      {DType::kBF16, {16, 8, 128}, false},  // Qwen3-0.6B
  };
  const int64_t rows = test::Sanitized() ? 24 : 64;
  const int64_t pos0 = kAttentionPartitionTokens - rows / 2 + 3;
  for (const Case& c : cases) {
    AttentionParams p = Params(c.shape.heads, c.shape.kv_heads, c.shape.hd);
    const int64_t q_head = c.gated_q ? 2 * c.shape.hd : c.shape.hd;
    p.q_head_stride = q_head;
    p.q_row_stride = q_head * c.shape.heads;
    PagedKv kv(c.dt, 64, c.shape.kv_heads, c.shape.hd, pos0 + rows, 41);
    const std::vector<float> q = test::RandomVector(rows * p.q_row_stride, -1.5f, 1.5f, 42);
    const int64_t out_row = static_cast<int64_t>(c.shape.heads) * c.shape.hd;
    auto call = [&](int64_t first, int64_t n, ThreadPool& pool, float* out) {
      Attention(p, q.data() + first * p.q_row_stride, n, pos0 + first, kv.view, out + first * out_row, pool);
    };
    test::ForEachTarget([&] {
      ThreadPool pool1(1), pool2(2), pool3(3), pool4(4);
      std::vector<float> one(rows * out_row), got(rows * out_row);
      call(0, rows, pool1, one.data());
      std::mt19937 rng(7);
      for (int64_t i = 0; i < rows;) {
        const int64_t len = std::min<int64_t>(1 + rng() % 23, rows - i);
        call(i, len, pool2, got.data());
        i += len;
      }
      EXPECT_TRUE(test::BitEqual(one.data(), got.data(), got.size())) << "random chunks";
      for (int64_t i = 0; i < rows; i += 8) call(i, std::min<int64_t>(8, rows - i), pool4, got.data());
      EXPECT_TRUE(test::BitEqual(one.data(), got.data(), got.size())) << "chunks of 8";
      for (int64_t i = 0; i < rows; ++i) call(i, 1, i % 2 ? pool4 : pool2, got.data());
      EXPECT_TRUE(test::BitEqual(one.data(), got.data(), got.size())) << "token by token";
      for (int64_t width : {2, 3, 4, 5, 8}) {
        std::fill(got.begin(), got.end(), 0.0f);
        for (int64_t i = 0; i + width <= rows; i += width) call(i, width, pool3, got.data());
        const int64_t covered = rows / width * width;
        EXPECT_TRUE(test::BitEqual(one.data(), got.data(), covered * out_row)) << "verify width " << width;
      }
    });
  }
}

// Split-KV tasks over groups of KV heads (decode, verification): every
// divisor of the KV heads, forced through AttentionParams, gives the bits of
// the one-shot call (the per-KV-head prefill tasks), and so does the
// kernel's own choice; rows end in the third partition (three partitions
// per task group, the last one partial), 1 to 4 threads.
TEST(AttentionTilesTest, SplitHeadGroupsAreBitIdentical) {
  const std::vector<std::pair<DType, Shape>> cases = {
      {DType::kF16, {16, 8, 128}},   // Qwen3-0.6B: groups of 1, 2, 4, 8 KV heads
      {DType::kBF16, {8, 2, 256}},   // Qwen3.5-0.8B: 1, 2
      {DType::kF16, {12, 6, 64}},    // 1, 2, 3, 6
  };
  const int64_t rows = 8;
  const int64_t pos0 = 2 * kAttentionPartitionTokens + 37;
  for (const auto& [dt, shape] : cases) {
    AttentionParams p = Params(shape.heads, shape.kv_heads, shape.hd);
    PagedKv kv(dt, 64, shape.kv_heads, shape.hd, pos0 + rows, 51);
    const int64_t q_row = static_cast<int64_t>(p.n_heads) * p.head_dim;
    const std::vector<float> q = test::RandomVector(rows * q_row, -1.5f, 1.5f, 52);
    test::ForEachTarget([&] {
      ThreadPool pool1(1);
      const std::vector<float> all = RunRows(p, q, q_row, 0, rows, pos0, kv.view, pool1);
      for (int threads : {1, 2, 3, 4}) {
        ThreadPool pool(threads);
        for (int heads = 0; heads <= shape.kv_heads; ++heads) {
          if (heads > 0 && shape.kv_heads % heads != 0) continue;
          p.split_heads_per_task = heads;
          for (int64_t width : {1, 3}) {
            for (int64_t i = 0; i + width <= rows; i += width) {
              const std::vector<float> got = RunRows(p, q, q_row, i, width, pos0 + i, kv.view, pool);
              ASSERT_TRUE(test::BitEqual(got.data(), all.data() + i * q_row, got.size()))
                  << "kv heads " << shape.kv_heads << " per task " << heads << " threads " << threads << " rows ["
                  << i << ", " << i + width << ")";
            }
          }
        }
        p.split_heads_per_task = 0;
      }
    });
  }
}

}  // namespace
}  // namespace cairn::kernels
