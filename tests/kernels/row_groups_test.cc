// The row-group weight layout (row_groups.h): exact round trip, and MatMul /
// GetRow on row-group matrices bit-identical to the natural layout on every
// SIMD target (the row-group kernels where a target has them, natural rows
// rebuilt on the fly elsewhere), for every width, thread count and row split.
#include "kernels/row_groups.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/half.h"
#include "kernels/dot_ref.h"
#include "kernels/matmul.h"
#include "kernels/quant.h"
#include "kernels/quant_blocks.h"
#include "ops_test_util.h"

namespace cairn::kernels {
namespace {

using test::ForEachTarget;
using test::Sanitized;

constexpr DType kTypes[] = {DType::kQ4_K,  DType::kQ6_K, DType::kQ5_K, DType::kQ8_0, DType::kQ5_0, DType::kQ4_0,
                             DType::kIQ4_NL, DType::kQ4_1, DType::kQ5_1, DType::kQ2_K, DType::kQ3_K, DType::kIQ4_XS};

// Byte offsets of a block's F16 fields (set to sane scales so sums stay finite).
std::vector<size_t> HalfFields(DType type) {
  if (type == DType::kQ6_K) return {208};
  if (type == DType::kQ2_K) return {80, 82};  // d, dmin
  if (type == DType::kQ3_K) return {108};
  if (type == DType::kIQ4_XS) return {0};
  if (type == DType::kQ4_1 || type == DType::kQ5_1) return {0, 2};  // d, m
  if (GetDTypeInfo(type).block_elems == 32) return {0};
  return {0, 2};
}

// A natural matrix and its row-group copy. random_bytes: every level and
// 6-bit scale at random (extremes included); else Gaussian weights quantized.
struct Pair {
  std::vector<uint8_t> natural, groups;
  MatrixView natural_view, group_view;
  Pair(DType type, int64_t rows, int64_t cols, uint32_t seed, bool random_bytes) {
    const size_t stride = RowBytes(type, cols);
    natural.resize(stride * rows);
    std::mt19937 rng(seed);
    if (random_bytes) {
      for (uint8_t& b : natural) b = static_cast<uint8_t>(rng());
      std::uniform_real_distribution<float> scale(1e-3f, 1e-2f);
      const size_t block_bytes = static_cast<size_t>(GetDTypeInfo(type).block_bytes);
      for (size_t block = 0; block < natural.size() / block_bytes; ++block) {
        for (size_t off : HalfFields(type)) StoreHalfBits(F32ToF16(scale(rng)), &natural[block * block_bytes + off]);
      }
    } else {
      std::normal_distribution<float> dist(0.0f, 0.05f);
      std::vector<float> row(cols);
      for (int64_t r = 0; r < rows; ++r) {
        for (float& v : row) v = dist(rng);
        QuantizeRow(type, row.data(), cols, natural.data() + r * stride);
      }
    }
    groups.assign(natural.size(), 0xCD);
    ToRowGroups(type, natural.data(), stride, cols, 0, rows / kGroupRows, groups.data());
    natural_view = MakeMatrixView(type, natural.data(), rows, cols);
    group_view = natural_view;
    group_view.data = groups.data();
    group_view.row_groups = true;
  }
};

std::vector<float> Activations(int64_t n, uint32_t seed, bool extreme) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = extreme ? ((rng() & 1) ? 1.0f : -1.0f) : dist(rng);
  return x;
}

TEST(RowGroupsTest, RoundTripRebuildsEveryRow) {
  for (DType type : kTypes) {
    SCOPED_TRACE(GetDTypeInfo(type).name);
    const int64_t rows = 32, cols = 768;
    const Pair p(type, rows, cols, 3, true);
    const size_t stride = RowBytes(type, cols);
    std::vector<uint8_t> row(stride);
    for (int64_t r = 0; r < rows; ++r) {
      RowFromGroups(type, p.groups.data(), cols, r, row.data());
      ASSERT_EQ(0, std::memcmp(row.data(), p.natural.data() + r * stride, stride)) << "row " << r;
    }
    // Same bytes, moved: the multiset of bytes is unchanged.
    std::vector<uint8_t> a = p.natural, b = p.groups;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    EXPECT_EQ(a, b);
  }
}

TEST(RowGroupsTest, MatMulMatchesNaturalLayoutOnEveryTarget) {
  const int64_t rows = 48;
  ThreadPool pool1(1), pool2(2);
  const std::vector<int64_t> widths =
      Sanitized() ? std::vector<int64_t>{1, 2, 8, 9} : std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 33};
  for (DType type : kTypes) {
    // K-quants: 1..9 super-blocks; 32-element types: 3..56 blocks (one and several 16-block activation groups, tails).
    const std::vector<int64_t> cols_sweep =
        GetDTypeInfo(type).block_elems == 32
            ? (Sanitized() ? std::vector<int64_t>{96, 896} : std::vector<int64_t>{96, 512, 544, 896, 1024, 1792})
            : (Sanitized() ? std::vector<int64_t>{256, 1280} : std::vector<int64_t>{256, 512, 768, 1024, 1280, 2304});
    for (int64_t cols : cols_sweep) {
      for (bool random_bytes : {false, true}) {
        SCOPED_TRACE(std::string(GetDTypeInfo(type).name) + " cols " + std::to_string(cols) +
                     (random_bytes ? " random bytes" : " gaussian"));
        const Pair p(type, rows, cols, static_cast<uint32_t>(cols + random_bytes), random_bytes);
        const int64_t max_width = widths.back();
        const std::vector<float> x = Activations(max_width * cols, 5, random_bytes);
        std::vector<float> ref(max_width * rows);
        MatMulReference(p.natural_view, x.data(), cols, max_width, ref.data(), rows);
        ForEachTarget([&] {
          for (int64_t width : widths) {
            for (ThreadPool* pool : {&pool1, &pool2}) {
              std::vector<float> natural(width * rows, -1.0f), groups(width * rows, -2.0f);
              MatMul(p.natural_view, x.data(), cols, width, natural.data(), rows, *pool);
              MatMul(p.group_view, x.data(), cols, width, groups.data(), rows, *pool);
              ASSERT_TRUE(test::BitEqual(groups.data(), natural.data(), groups.size()))
                  << "width " << width << ", " << pool->num_threads() << " threads";
              ASSERT_TRUE(test::BitEqual(groups.data(), ref.data(), groups.size())) << "width " << width;
            }
          }
        });
      }
    }
  }
}

// MatMulSameInput splits the global rows of all outputs across threads in
// blocks of 16, so a row-group matrix after a natural one of 24 rows is cut
// inside its groups: each part must still be exact.
TEST(RowGroupsTest, SameInputWithSplitGroupsMatchesSeparateProducts) {
  const int64_t cols = 512;
  const Pair a(DType::kQ4_K, 32, cols, 11, false), b(DType::kQ6_K, 64, cols, 12, false);
  std::vector<uint8_t> q8(RowBytes(DType::kQ8_0, cols) * 24);
  {
    const std::vector<float> w = Activations(24 * cols, 13, false);
    for (int64_t r = 0; r < 24; ++r) QuantizeRow(DType::kQ8_0, w.data() + r * cols, cols, q8.data() + r * RowBytes(DType::kQ8_0, cols));
  }
  const MatrixView c = MakeMatrixView(DType::kQ8_0, q8.data(), 24, cols);
  ThreadPool pool2(2);
  ForEachTarget([&] {
    for (int64_t batch : {1, 4, 8, 17}) {
      const std::vector<float> x = Activations(batch * cols, 14, false);
      std::vector<float> y0(batch * 24), y1(batch * 32), y2(batch * 64), s1(batch * 32), s2(batch * 64);
      const MatMulOutput outs[] = {{c, y0.data(), 24}, {a.group_view, y1.data(), 32}, {b.group_view, y2.data(), 64}};
      MatMulSameInput(outs, x.data(), cols, batch, pool2);
      MatMul(a.natural_view, x.data(), cols, batch, s1.data(), 32, pool2);
      MatMul(b.natural_view, x.data(), cols, batch, s2.data(), 64, pool2);
      ASSERT_TRUE(test::BitEqual(y1.data(), s1.data(), y1.size())) << "batch " << batch;
      ASSERT_TRUE(test::BitEqual(y2.data(), s2.data(), y2.size())) << "batch " << batch;
    }
  });
}

TEST(RowGroupsTest, GetRowMatchesNaturalLayout) {
  for (DType type : kTypes) {
    const int64_t rows = 32, cols = 512;
    const Pair p(type, rows, cols, 21, false);
    std::vector<float> a(cols), b(cols);
    for (int64_t r : {0, 1, 15, 16, 31}) {
      GetRow(p.natural_view, r, a.data());
      GetRow(p.group_view, r, b.data());
      ASSERT_TRUE(test::BitEqual(a.data(), b.data(), a.size())) << GetDTypeInfo(type).name << " row " << r;
    }
  }
}

TEST(RowGroupsTest, OnlyTypesWithAKernelArePreferred) {
  for (DType type : {DType::kF32, DType::kF16, DType::kBF16}) {
    EXPECT_FALSE(MatMulPrefersRowGroups(type)) << GetDTypeInfo(type).name;
  }
  for (DType type : kTypes) {
    if (MatMulPrefersRowGroups(type)) {
      EXPECT_TRUE(HasRowGroupLayout(type));
    }
  }
}

}  // namespace
}  // namespace cairn::kernels
