// AVX-512 tile kernels (widths 2..8 per call: verification and prefill) for
// Q4_K, Q5_K and Q6_K weights against kQ8KX activations (quant_act.h).
// Included by matmul.cc once per Highway target, after gemm_kquant-inl.h,
// whose decode (width 1) streaming kernels and float tail (TileLanes,
// PairedActScales) these reuse. The AVX2 target keeps gemm_kquant-inl.h's
// tiles.
//
// The integers and the float operations are those of dot_ref.h (exact
// per-super-block sumi / summ, then the reference's FMAs into lane pair
// i mod 4), so results stay bit-identical to MatMulReference. What changes is
// how the integers are reached. A super-block's levels are rearranged once
// per weight row into four 64-byte vectors W_u whose 64-bit lane j holds
// levels 8u .. 8u + 7 of 32-element sub-block j, the order in which kQ8KX
// stores the activations. Then, per activation row:
//   Q4_K / Q5_K: s = sum_u maddubs(W_u, X_u) (int16: each lane adds eight
//     products of one sub-block, |s| <= 8 * 31 * 127 = 31496, exact), one
//     madd with the sub-block scales (int16 lanes 4j..4j+3 = scale j), one
//     madd of the bsums with the mins;
//   Q6_K: two such sums of two vectors each (u = 0, 1: 16-element sub-block
//     2j; u = 2, 3: 2j + 1; |s| <= 4 * 63 * 127 = 32004), two madds with the
//     scales, one madd of the bsums with the scales (the offset-32 term).
// Against gemm_kquant-inl.h's AVX2 tile (eight maddubs and eight madds of
// 32 bytes, seven adds) that is four 64-byte maddubs, three 16-bit adds and
// one or two 64-byte madds: the multiply pipes' work per 256 levels drops
// from 17 to 11 (Q4_K) or 13 (Q6_K) 32-byte operations. Four activation
// rows' integer vectors are reduced together (ReduceRows4, no hadd).
#if defined(CAIRN_KERNELS_GEMM_KQUANT_AVX512_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CAIRN_KERNELS_GEMM_KQUANT_AVX512_INL_H_
#undef CAIRN_KERNELS_GEMM_KQUANT_AVX512_INL_H_
#else
#define CAIRN_KERNELS_GEMM_KQUANT_AVX512_INL_H_
#endif

#include <hwy/highway.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/half.h"
#include "kernels/quant_act.h"
#include "kernels/quant_blocks.h"

HWY_BEFORE_NAMESPACE();
namespace cairn::kernels {
namespace HWY_NAMESPACE {

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL

HWY_INLINE __m512i LoadBytes64(const void* p) { return _mm512_loadu_si512(p); }

// The 64-bit word at p, in every 64-bit lane.
HWY_INLINE __m512i BroadcastWord(const uint8_t* p) {
  uint64_t word;
  std::memcpy(&word, p, 8);
  return _mm512_set1_epi64(static_cast<int64_t>(word));
}

// (a & 0x0F per byte) after shifting each 64-bit lane of a right by the
// lane's count (0 or 4: low or high nibbles).
HWY_INLINE __m512i Nibbles(__m512i a, __m512i counts) {
  return _mm512_and_si512(_mm512_srlv_epi64(a, counts), _mm512_set1_epi8(0x0F));
}

// a | (b & mask), one ternary-logic operation (A | (B & C): 0xF8).
HWY_INLINE __m512i OrMasked(__m512i a, __m512i b, __m512i mask) {
  return _mm512_ternarylogic_epi64(a, b, mask, 0xF8);
}

// Four activation rows t < 4: dots[t] (16 int32 lanes) and other[t] (8 int32
// lanes) -> [sum dots[0], sum other[0], sum dots[1], sum other[1], ..,
// sum other[3]] (exact; the layout of ReducePairs4). Folds 128-bit lanes of
// row pairs, then sums within 128-bit lanes; 21 operations for the four rows,
// none of them hadd (0.5 per cycle on Zen 4).
HWY_INLINE __m256i ReduceRows4(const __m512i dots[4], const __m256i other[4]) {
  const auto fold_pairs = [](__m512i a, __m512i b) {  // [a folded to 8 lanes | b folded to 8 lanes]
    return _mm512_add_epi32(_mm512_shuffle_i64x2(a, b, _MM_SHUFFLE(1, 0, 1, 0)),
                            _mm512_shuffle_i64x2(a, b, _MM_SHUFFLE(3, 2, 3, 2)));
  };
  const auto fold_rows = [](__m512i r01, __m512i r23) {  // 128-bit lane t: row t folded to 4 lanes
    return _mm512_add_epi32(_mm512_shuffle_i64x2(r01, r23, _MM_SHUFFLE(2, 0, 2, 0)),
                            _mm512_shuffle_i64x2(r01, r23, _MM_SHUFFLE(3, 1, 3, 1)));
  };
  const auto join = [](__m256i a, __m256i b) { return _mm512_inserti64x4(_mm512_castsi256_si512(a), b, 1); };
  const __m512i f = fold_rows(fold_pairs(dots[0], dots[1]), fold_pairs(dots[2], dots[3]));
  const __m512i h = fold_rows(join(other[0], other[1]), join(other[2], other[3]));
  // Per 128-bit lane: [f0 + f2, h0 + h2, f1 + f3, h1 + h3], then its two halves added.
  const __m512i s = _mm512_add_epi32(_mm512_unpacklo_epi32(f, h), _mm512_unpackhi_epi32(f, h));
  const __m512i r = _mm512_add_epi32(s, _mm512_shuffle_epi32(s, _MM_PERM_BADC));
  const __m512i take = _mm512_setr_epi32(0, 1, 4, 5, 8, 9, 12, 13, 0, 0, 0, 0, 0, 0, 0, 0);
  return _mm512_castsi512_si256(_mm512_permutexvar_epi32(take, r));
}

// Q4_K / Q5_K: the levels of one super-block in kQ8KX order: w[u] lane j =
// levels 8u .. 8u + 7 of sub-block j, i.e. the low (j even) or high (j odd)
// nibbles of qs word 4 (j / 2) + u, plus Q5_K's fifth bit: bit j of qh word u
// rotated to bit 4 of each byte.
template <bool kFiveBit, class Block>
HWY_INLINE void ScaleMinLevels(const Block& block, __m512i w[4]) {
  const __m512i q0 = LoadBytes64(block.qs), q1 = LoadBytes64(block.qs + 64);
  const __m512i nibble = _mm512_setr_epi64(0, 4, 0, 4, 0, 4, 0, 4);
  for (int u = 0; u < 4; ++u) {
    const __m512i words = _mm512_setr_epi64(u, u, 4 + u, 4 + u, 8 + u, 8 + u, 12 + u, 12 + u);
    w[u] = Nibbles(_mm512_permutex2var_epi64(q0, words, q1), nibble);
    if constexpr (kFiveBit) {
      const __m512i to_bit4 = _mm512_setr_epi64(4, 3, 2, 1, 0, 63, 62, 61);
      w[u] = OrMasked(w[u], _mm512_rolv_epi64(BroadcastWord(block.qh + 8 * u), to_bit4), _mm512_set1_epi8(0x10));
    }
  }
}

// Q6_K: w[u] lane j = levels 8u .. 8u + 7 of 32-element group j = 4h + t
// (h = j / 4): the low (t < 2) or high nibbles of ql word 8h + 4 (t % 2) + u,
// with bits 2t, 2t + 1 of qh word 4h + u rotated to bits 4, 5.
HWY_INLINE void Q6Levels(const BlockQ6K& block, __m512i w[4]) {
  const __m512i ql0 = LoadBytes64(block.ql), ql1 = LoadBytes64(block.ql + 64), qh = LoadBytes64(block.qh);
  const __m512i nibble = _mm512_setr_epi64(0, 0, 4, 4, 0, 0, 4, 4);
  const __m512i to_bits45 = _mm512_setr_epi64(4, 2, 0, 62, 4, 2, 0, 62);
  for (int u = 0; u < 4; ++u) {
    const __m512i low = _mm512_setr_epi64(u, 4 + u, u, 4 + u, 8 + u, 12 + u, 8 + u, 12 + u);
    const __m512i high = _mm512_setr_epi64(u, u, u, u, 4 + u, 4 + u, 4 + u, 4 + u);
    w[u] = OrMasked(Nibbles(_mm512_permutex2var_epi64(ql0, low, ql1), nibble),
                    _mm512_rolv_epi64(_mm512_permutexvar_epi64(high, qh), to_bits45), _mm512_set1_epi8(0x30));
  }
}

// maddubs(w[u], X_u) + maddubs(w[u + 1], X_u+1) for the activation super-block x.
HWY_INLINE __m512i PairProducts(const __m512i w[4], int u, const int8_t* x) {
  return _mm512_add_epi16(_mm512_maddubs_epi16(w[u], LoadBytes64(x + 64 * u)),
                          _mm512_maddubs_epi16(w[u + 1], LoadBytes64(x + 64 * (u + 1))));
}

// int16 lanes 4j .. 4j + 3 = int16 lane kFirst + kStep * j of v (j < 8).
template <int kFirst, int kStep>
HWY_INLINE __m512i SpreadScales(__m256i v) {
  static constexpr std::array<int16_t, 32> kIndex = [] {
    std::array<int16_t, 32> index{};
    for (int k = 0; k < 32; ++k) index[k] = static_cast<int16_t>(kFirst + kStep * (k / 4));
    return index;
  }();
  return _mm512_permutexvar_epi16(_mm512_loadu_si512(kIndex.data()), _mm512_castsi256_si512(v));
}

// int32 lanes 2j, 2j + 1 = int32 lane kFirst + kStep * j of v (j < 8).
template <int kFirst, int kStep>
HWY_INLINE __m512i SpreadScales32(__m512i v) {
  static constexpr std::array<int32_t, 16> kIndex = [] {
    std::array<int32_t, 16> index{};
    for (int m = 0; m < 16; ++m) index[m] = kFirst + kStep * (m / 2);
    return index;
  }();
  return _mm512_permutexvar_epi32(_mm512_loadu_si512(kIndex.data()), v);
}

#if HWY_TARGET == HWY_AVX3_DL
// VNNI: dpbusd accumulates the four products of each 32-bit lane straight
// into int32 (no int16 step), so the levels of a sub-block need no 16-bit
// adds; the sub-block scale is one 32-bit multiply. Per 256 levels and
// activation row: four dpbusd and one (Q6_K: two) vpmulld of 64 bytes
// instead of four maddubs, three 16-bit adds and one (two) madd.

// sum_u dpbusd over w[u0], w[u0 + 1], .. (n vectors) for the activation super-block x.
HWY_INLINE __m512i DotLanes(const __m512i w[4], int u0, int n, const int8_t* x) {
  __m512i acc = _mm512_setzero_si512();
  for (int u = u0; u < u0 + n; ++u) acc = _mm512_dpbusd_epi32(acc, w[u], LoadBytes64(x + 64 * u));
  return acc;
}

// Q4_K / Q5_K multipliers: int32 lanes 2j, 2j + 1 = scale j.
struct ScaleMinMultipliers {
  __m512i scales;
  explicit ScaleMinMultipliers(const KScales& sc) : scales(SpreadScales32<0, 1>(_mm512_cvtepu16_epi32(sc.sc16))) {}
  HWY_INLINE __m512i Dots(const __m512i w[4], const int8_t* x) const {
    return _mm512_mullo_epi32(DotLanes(w, 0, 4, x), scales);
  }
};

// Q6_K multipliers: int32 lanes 2j, 2j + 1 = scale 2j (first) / 2j + 1 (second).
struct Q6Multipliers {
  __m512i first, second;
  explicit Q6Multipliers(const BlockQ6K& block) {
    const __m512i s32 = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block.scales)));
    first = SpreadScales32<0, 2>(s32);
    second = SpreadScales32<1, 2>(s32);
  }
  HWY_INLINE __m512i Dots(const __m512i w[4], const int8_t* x) const {
    return _mm512_add_epi32(_mm512_mullo_epi32(DotLanes(w, 0, 2, x), first),
                            _mm512_mullo_epi32(DotLanes(w, 2, 2, x), second));
  }
};
#else
// AVX-512BW: maddubs to int16 (each lane adds the products of one sub-block),
// then madd with int16 multipliers.

// Q4_K / Q5_K multipliers: int16 lanes 4j .. 4j + 3 = scale j.
struct ScaleMinMultipliers {
  __m512i scales;
  explicit ScaleMinMultipliers(const KScales& sc) : scales(SpreadScales<0, 1>(sc.sc16)) {}
  HWY_INLINE __m512i Dots(const __m512i w[4], const int8_t* x) const {
    return _mm512_madd_epi16(_mm512_add_epi16(PairProducts(w, 0, x), PairProducts(w, 2, x)), scales);
  }
};

// Q6_K multipliers: int16 lanes 4j .. 4j + 3 = scale 2j (first) / 2j + 1 (second).
struct Q6Multipliers {
  __m512i first, second;
  explicit Q6Multipliers(const BlockQ6K& block) {
    const __m256i scales16 = Q6Scales16(block);
    first = SpreadScales<0, 2>(scales16);
    second = SpreadScales<1, 2>(scales16);
  }
  HWY_INLINE __m512i Dots(const __m512i w[4], const int8_t* x) const {
    return _mm512_add_epi32(_mm512_madd_epi16(PairProducts(w, 0, x), first),
                            _mm512_madd_epi16(PairProducts(w, 2, x), second));
  }
};
#endif

// Calls row(t, dots, other) for the n (<= 4) activation rows t of a group
// and returns ReduceRows4 of their vectors (missing rows: 0).
template <class Row>
HWY_INLINE __m256i GroupSums(int n, const Row& row) {
  __m512i dots[4];
  __m256i other[4];
  for (int t = 0; t < 4; ++t) {
    if (t < n) {
      row(t, &dots[t], &other[t]);
    } else {
      dots[t] = _mm512_setzero_si512();
      other[t] = _mm256_setzero_si256();
    }
  }
  return ReduceRows4(dots, other);
}

// Q4_K and Q5_K. Decode (width 1) is gemm_kquant-inl.h's streaming kernel on
// natural Q8K activations (matmul.cc picks the format by width).
template <bool kFiveBit>
struct ScaleMinKernel512 {
  using Block = std::conditional_t<kFiveBit, BlockQ5K, BlockQ4K>;
  static constexpr int kTileRows = 1;
  static constexpr int kMaxActs = kKQuantMaxActs;
  static constexpr bool kReadsQ8KX = true;

  static void StreamRows(const uint8_t* w, size_t stride, int64_t cols, const ActRow& act, int64_t rows,
                         float* y) {
    ScaleMinKernel<kFiveBit>::StreamRows(w, stride, cols, act, rows, y);
  }

  template <int R, int NB>
  static void Tile(const uint8_t* wrow, size_t /*stride*/, int64_t cols, const ActRow* acts, float* out) {
    static_assert(R == 1 && NB >= 1 && NB <= kMaxActs);
    constexpr int kGroups = TileLanes<NB>::kGroups;
    const auto* blocks = reinterpret_cast<const Block*>(wrow);
    const __m256 negate_odd =
        _mm256_castsi256_ps(_mm256_set_epi32(INT32_MIN, 0, INT32_MIN, 0, INT32_MIN, 0, INT32_MIN, 0));
    TileLanes<NB> acc;
    for (int64_t i = 0; i < cols / kQKK; ++i) {
      const Block& block = blocks[i];
      __m512i w[4];
      ScaleMinLevels<kFiveBit>(block, w);
      KScales sc;
      const __m256i mins16 = UnpackKScales(block.scales, &sc);
      const ScaleMinMultipliers scales(sc);
      const float d = _cvtsh_ss(LoadHalfBits(block.d));
      const float dmin = _cvtsh_ss(LoadHalfBits(block.dmin));
      const __m256 d_dmin = _mm256_setr_ps(d, dmin, d, dmin, d, dmin, d, dmin);
      for (int g = 0; g < kGroups; ++g) {
        const int n = (g + 1 < kGroups) ? 4 : NB - 4 * g;
        const ActRow* a = acts + 4 * g;
        // Lanes 2t, 2t + 1: sumi, summ of activation row t (exact).
        const __m256i sums = GroupSums(n, [&](int t, __m512i* dots, __m256i* min_dots) {
          const int8_t* x = a[t].qs + i * kQKK;
          *dots = scales.Dots(w, x);
          *min_dots = _mm256_madd_epi16(LoadBytes32(a[t].bsums + i * 16), mins16);
        });
        // Lanes 2t, 2t + 1: dx * d, -(dx * dmin) (one rounding each, as the reference).
        const __m256 factors = _mm256_xor_ps(_mm256_mul_ps(PairedActScales(a, n, i), d_dmin), negate_odd);
        acc.Fma(g, i, factors, _mm256_cvtepi32_ps(sums));
      }
    }
    acc.Store(out);
  }
};

// Q6_K: sumi = sum_k s_k dot(q_k, x_k) - 32 sum_k s_k bsum_k, then
// acc = fma(dx * d, sumi, acc) in lane 2k (odd lanes +0), as Q6KKernelAvx2.
struct Q6KKernel512 {
  static constexpr int kTileRows = 1;
  static constexpr int kMaxActs = kKQuantMaxActs;
  static constexpr bool kReadsQ8KX = true;

  static void StreamRows(const uint8_t* w, size_t stride, int64_t cols, const ActRow& act, int64_t rows,
                         float* y) {
    Q6KKernelAvx2::StreamRows(w, stride, cols, act, rows, y);
  }

  template <int R, int NB>
  static void Tile(const uint8_t* wrow, size_t /*stride*/, int64_t cols, const ActRow* acts, float* out) {
    static_assert(R == 1 && NB >= 1 && NB <= kMaxActs);
    constexpr int kGroups = TileLanes<NB>::kGroups;
    const auto* blocks = reinterpret_cast<const BlockQ6K*>(wrow);
    // Odd lanes: +0 * (the offset sums) keeps them +0, as in the reference.
    const __m256 even = _mm256_castsi256_ps(_mm256_set_epi32(0, -1, 0, -1, 0, -1, 0, -1));
    TileLanes<NB> acc;
    for (int64_t i = 0; i < cols / kQKK; ++i) {
      const BlockQ6K& block = blocks[i];
      __m512i w[4];
      Q6Levels(block, w);
      const __m256i scales16 = Q6Scales16(block);
      // Sub-blocks 2j (first 16 levels of group j) and 2j + 1.
      const Q6Multipliers multipliers(block);
      const __m256 d = _mm256_set1_ps(_cvtsh_ss(LoadHalfBits(block.d)));
      for (int g = 0; g < kGroups; ++g) {
        const int n = (g + 1 < kGroups) ? 4 : NB - 4 * g;
        const ActRow* a = acts + 4 * g;
        // Lanes 2t, 2t + 1: sum s_k dot_k, sum s_k bsum_k of activation row t.
        const __m256i sums = GroupSums(n, [&](int t, __m512i* dots, __m256i* offset_dots) {
          const int8_t* x = a[t].qs + i * kQKK;
          *dots = multipliers.Dots(w, x);
          *offset_dots = _mm256_madd_epi16(LoadBytes32(a[t].bsums + i * 16), scales16);
        });
        const __m256 factors = _mm256_and_ps(_mm256_mul_ps(PairedActScales(a, n, i), d), even);
        acc.Fma(g, i, factors, _mm256_cvtepi32_ps(Q6SumI(sums)));
      }
    }
    acc.Store(out);
  }
};

using Q4KKernel = ScaleMinKernel512<false>;
using Q5KKernel = ScaleMinKernel512<true>;
using Q6KKernel = Q6KKernel512;

#endif  // AVX3 / AVX3_DL

}  // namespace HWY_NAMESPACE
}  // namespace cairn::kernels
HWY_AFTER_NAMESPACE();

#endif  // toggle guard
