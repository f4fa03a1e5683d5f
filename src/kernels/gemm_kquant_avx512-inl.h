// AVX-512 (AVX3, AVX3_DL) tile kernels for Q4_K, Q5_K and Q6_K weights
// against kQ8KX activations (quant_act.h): verification widths per call
// (Tile) and prefill through matmul.cc's RunRowsPrepared (Prepare,
// PreparedTile). Included by matmul.cc once per Highway target, after
// gemm_kquant-inl.h, whose decode (width 1) streaming kernels and scale
// unpacking these reuse. The AVX2 target keeps gemm_kquant-inl.h's tiles.
//
// The integers and the float operations are those of dot_ref.h (exact
// per-super-block sumi / summ, then the reference's FMAs into lane pair
// i mod 4), so results stay bit-identical to MatMulReference. What changes is
// how the integers are reached. A super-block's levels are rearranged once
// per weight row into four 64-byte vectors W_u whose 64-bit lane j holds
// levels 8u .. 8u + 7 of 32-element sub-block j, the order in which kQ8KX
// stores the activations. Then, per activation row:
//   VNNI (AVX3_DL): four dpbusd into one int32 vector (lanes 2j, 2j + 1 =
//     sub-block j) and one vpmulld by the sub-block scales (Q6_K: two sums
//     of two vectors, 16-element sub-blocks 2j and 2j + 1, two vpmulld);
//   AVX-512BW (AVX3): s = sum_u maddubs(W_u, X_u) (int16: each lane adds
//     eight products of one sub-block, |s| <= 8 * 31 * 127 = 31496, exact)
//     and one madd with the scales (Q6_K: two sums of two, |s| <= 4 * 63 *
//     127 = 32004, two madds);
//   both: one 256-bit madd of the bsums with the mins (Q6_K: the scales, the
//     offset-32 term).
// Against gemm_kquant-inl.h's AVX2 tile (eight maddubs and eight madds of 32
// bytes per 256 levels) the multiply pipes' work drops from 17 to 11 (Q4_K)
// or 13 (Q6_K) 32-byte operations. Eight activation rows' integer vectors
// are reduced together (ReduceRows8, no hadd) and their F32 factors and FMAs
// run on 16 lanes (TileLanes8).
#if defined(CAIRN_KERNELS_GEMM_KQUANT_AVX512_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CAIRN_KERNELS_GEMM_KQUANT_AVX512_INL_H_
#undef CAIRN_KERNELS_GEMM_KQUANT_AVX512_INL_H_
#else
#define CAIRN_KERNELS_GEMM_KQUANT_AVX512_INL_H_
#endif

#include <hwy/highway.h>

#include <algorithm>
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

// Eight activation rows b < 8: dots[b] (16 int32 lanes) and other[b] (8
// int32 lanes) -> 16 int32 lanes, 128-bit lane t = [sum dots[t], sum other[t],
// sum dots[t + 4], sum other[t + 4]] (exact integer sums; "row order 8" of
// PairedScales8 and TileLanes8). Folds 128-bit lanes of row pairs, then of
// row quads, then sums within 128-bit lanes: 37 operations for the eight
// rows, none of them hadd (0.5 per cycle on Zen 4).
HWY_INLINE __m512i ReduceRows8(const __m512i dots[8], const __m256i other[8]) {
  const auto fold_pairs = [](__m512i a, __m512i b) {  // [a folded to 8 lanes | b folded to 8 lanes]
    return _mm512_add_epi32(_mm512_shuffle_i64x2(a, b, _MM_SHUFFLE(1, 0, 1, 0)),
                            _mm512_shuffle_i64x2(a, b, _MM_SHUFFLE(3, 2, 3, 2)));
  };
  const auto fold_rows = [](__m512i r01, __m512i r23) {  // 128-bit lane t: row t folded to 4 lanes
    return _mm512_add_epi32(_mm512_shuffle_i64x2(r01, r23, _MM_SHUFFLE(2, 0, 2, 0)),
                            _mm512_shuffle_i64x2(r01, r23, _MM_SHUFFLE(3, 1, 3, 1)));
  };
  const auto join = [](__m256i a, __m256i b) { return _mm512_inserti64x4(_mm512_castsi256_si512(a), b, 1); };
  // 128-bit lane t: [f0 + f2, h0 + h2, f1 + f3, h1 + h3] of row t (rows q .. q + 3).
  const auto quad = [&](int q) {
    const __m512i f = fold_rows(fold_pairs(dots[q], dots[q + 1]), fold_pairs(dots[q + 2], dots[q + 3]));
    const __m512i h = fold_rows(join(other[q], other[q + 1]), join(other[q + 2], other[q + 3]));
    return _mm512_add_epi32(_mm512_unpacklo_epi32(f, h), _mm512_unpackhi_epi32(f, h));
  };
  const __m512i lo = quad(0), hi = quad(4);
  return _mm512_add_epi32(_mm512_unpacklo_epi64(lo, hi), _mm512_unpackhi_epi64(lo, hi));
}

// The F32 lane of activation row b (< 8) and its pair partner in "row order 8".
constexpr int RowLane8(int b) { return 4 * (b % 4) + 2 * (b / 4); }

// Super-block i's activation scales of the NB rows at acts, each twice, in
// row order 8 (missing rows: 0).
// Built in registers (see PairedActScales: a stack array read back as one
// vector stalls on store forwarding).
template <int NB>
HWY_INLINE __m512 PairedScales8(const ActRow* acts, int64_t i) {
  const auto at = [&](int b) { return b < NB ? acts[b].d[i] : 0.0f; };
  const __m256 dx = _mm256_setr_ps(at(0), at(1), at(2), at(3), at(4), at(5), at(6), at(7));
  // Lanes RowLane8(b), RowLane8(b) + 1 = dx[b].
  const __m512i index = _mm512_setr_epi32(0, 0, 4, 4, 1, 1, 5, 5, 2, 2, 6, 6, 3, 3, 7, 7);
  return _mm512_permutexvar_ps(index, _mm512_castps256_ps512(dx));
}

// Lane accumulators of up to eight activation rows, one 16-lane vector per
// lane pair k = i mod 4 (row order 8: lanes RowLane8(b), + 1 are row b's
// lanes 2k, 2k + 1 of dot_ref.h), in L1.
struct TileLanes8 {
  alignas(64) float v[4][16] = {};

  HWY_INLINE void Fma(int64_t i, __m512 factors, __m512 sums) {
    float* lanes = v[i % 4];
    _mm512_store_ps(lanes, _mm512_fmadd_ps(factors, sums, _mm512_load_ps(lanes)));
  }

  // out[b] = ReduceLanes8 of row b's eight lanes, with its additions
  // (TileLanes::Store): (v0 + v2) + (v1 + v3) lane by lane, then each lane pair.
  template <int NB>
  HWY_INLINE void Store(float* out) const {
    const __m512 u = _mm512_add_ps(_mm512_add_ps(_mm512_load_ps(v[0]), _mm512_load_ps(v[2])),
                                   _mm512_add_ps(_mm512_load_ps(v[1]), _mm512_load_ps(v[3])));
    alignas(64) float r[16];
    _mm512_store_ps(r, _mm512_add_ps(u, _mm512_permute_ps(u, _MM_SHUFFLE(2, 3, 0, 1))));
    for (int b = 0; b < NB; ++b) out[b] = r[RowLane8(b)];
  }
};

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

// N 64-byte multiplier vectors (Q4_K / Q5_K: 1, Q6_K: 2), built per ISA
// below; stored in a prepared row vector by vector (aligned).
template <int N>
struct Multipliers {
  __m512i v[N];
  static Multipliers Load(const uint8_t* p) {
    Multipliers m;
    for (int k = 0; k < N; ++k) m.v[k] = _mm512_load_si512(p + 64 * k);
    return m;
  }
  void Store(uint8_t* p) const {
    for (int k = 0; k < N; ++k) _mm512_store_si512(p + 64 * k, v[k]);
  }
};
using ScaleMinMultipliers = Multipliers<1>;
using Q6Multipliers = Multipliers<2>;

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

// Q4_K / Q5_K: int32 lanes 2j, 2j + 1 = scale j.
HWY_INLINE ScaleMinMultipliers ScaleMinMultipliersOf(const KScales& sc) {
  return {{SpreadScales32<0, 1>(_mm512_cvtepu16_epi32(sc.sc16))}};
}

// Q6_K: int32 lanes 2j, 2j + 1 = scale 2j (v[0]) / 2j + 1 (v[1]).
HWY_INLINE Q6Multipliers Q6MultipliersOf(const BlockQ6K& block) {
  const __m512i s32 = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block.scales)));
  return {{SpreadScales32<0, 2>(s32), SpreadScales32<1, 2>(s32)}};
}

// Per sub-block j (lanes 2j, 2j + 1): scale_j * partial dots (sum: sumi).
HWY_INLINE __m512i ScaleMinDots(const ScaleMinMultipliers& m, const __m512i w[4], const int8_t* x) {
  return _mm512_mullo_epi32(DotLanes(w, 0, 4, x), m.v[0]);
}

HWY_INLINE __m512i Q6ScaledDots(const Q6Multipliers& m, const __m512i w[4], const int8_t* x) {
  return _mm512_add_epi32(_mm512_mullo_epi32(DotLanes(w, 0, 2, x), m.v[0]),
                          _mm512_mullo_epi32(DotLanes(w, 2, 2, x), m.v[1]));
}
#else
// AVX-512BW: maddubs to int16 (each lane adds the products of one sub-block),
// then madd with int16 multipliers.

// Q4_K / Q5_K: int16 lanes 4j .. 4j + 3 = scale j.
HWY_INLINE ScaleMinMultipliers ScaleMinMultipliersOf(const KScales& sc) { return {{SpreadScales<0, 1>(sc.sc16)}}; }

// Q6_K: int16 lanes 4j .. 4j + 3 = scale 2j (v[0]) / 2j + 1 (v[1]).
HWY_INLINE Q6Multipliers Q6MultipliersOf(const BlockQ6K& block) {
  const __m256i scales16 = Q6Scales16(block);
  return {{SpreadScales<0, 2>(scales16), SpreadScales<1, 2>(scales16)}};
}

HWY_INLINE __m512i ScaleMinDots(const ScaleMinMultipliers& m, const __m512i w[4], const int8_t* x) {
  return _mm512_madd_epi16(_mm512_add_epi16(PairProducts(w, 0, x), PairProducts(w, 2, x)), m.v[0]);
}

HWY_INLINE __m512i Q6ScaledDots(const Q6Multipliers& m, const __m512i w[4], const int8_t* x) {
  return _mm512_add_epi32(_mm512_madd_epi16(PairProducts(w, 0, x), m.v[0]),
                          _mm512_madd_epi16(PairProducts(w, 2, x), m.v[1]));
}
#endif

// Calls row(b, dots, other) for the NB activation rows b and returns
// ReduceRows8 of their vectors (missing rows: 0).
template <int NB, class Row>
HWY_INLINE __m512i RowSums8(const Row& row) {
  __m512i dots[8];
  __m256i other[8];
  for (int b = 0; b < 8; ++b) {
    if (b < NB) {
      row(b, &dots[b], &other[b]);
    } else {
      dots[b] = _mm512_setzero_si512();
      other[b] = _mm256_setzero_si256();
    }
  }
  return ReduceRows8(dots, other);
}

// One super-block unpacked for the tile loop (levels in kQ8KX order,
// multipliers, the rest of what the loop needs), in registers or stored in
// kBytes bytes (64-aligned) of a prepared row (Prepare below).
template <class Multipliers, int kExtra>
struct Unpacked {
  static constexpr int kVectors = 4 + static_cast<int>(sizeof(Multipliers) / 64) + kExtra;
  static constexpr size_t kBytes = 64 * kVectors;
  __m512i w[4];
  Multipliers mult;
  __m512i extra[kExtra];  // per type (ScaleMinExtra, Q6Extra)

  // Vector by vector (aligned): a whole-struct copy went through the stack.
  void Store(uint8_t* p) const {
    for (int k = 0; k < 4; ++k) _mm512_store_si512(p + 64 * k, w[k]);
    mult.Store(p + 256);
    for (int k = 0; k < kExtra; ++k) _mm512_store_si512(p + 256 + sizeof(Multipliers) + 64 * k, extra[k]);
  }
  static Unpacked Load(const uint8_t* p) {
    Unpacked u;
    for (int k = 0; k < 4; ++k) u.w[k] = _mm512_load_si512(p + 64 * k);
    u.mult = Multipliers::Load(p + 256);
    for (int k = 0; k < kExtra; ++k) u.extra[k] = _mm512_load_si512(p + 256 + sizeof(Multipliers) + 64 * k);
    return u;
  }
};

// Q4_K / Q5_K: extra[0] = [mins16 (8 mins, each twice, int16) | d, dmin, d, dmin, .. (F32)].
using ScaleMinUnpacked = Unpacked<ScaleMinMultipliers, 1>;
static_assert(sizeof(ScaleMinUnpacked) == ScaleMinUnpacked::kBytes);

template <bool kFiveBit, class Block>
HWY_INLINE ScaleMinUnpacked UnpackScaleMin(const Block& block) {
  ScaleMinUnpacked u;
  ScaleMinLevels<kFiveBit>(block, u.w);
  KScales sc;
  const __m256i mins16 = UnpackKScales(block.scales, &sc);
  u.mult = ScaleMinMultipliersOf(sc);
  const float d = _cvtsh_ss(LoadHalfBits(block.d));
  const float dmin = _cvtsh_ss(LoadHalfBits(block.dmin));
  const __m256 d_dmin = _mm256_setr_ps(d, dmin, d, dmin, d, dmin, d, dmin);
  u.extra[0] = _mm512_inserti64x4(_mm512_castsi256_si512(mins16), _mm256_castps_si256(d_dmin), 1);
  return u;
}

// Q6_K: extra[0] = [scales16 (int16) | d (F32) in every lane].
using Q6Unpacked = Unpacked<Q6Multipliers, 1>;
static_assert(sizeof(Q6Unpacked) == Q6Unpacked::kBytes);

HWY_INLINE Q6Unpacked UnpackQ6(const BlockQ6K& block) {
  Q6Unpacked u;
  Q6Levels(block, u.w);
  u.mult = Q6MultipliersOf(block);
  const __m256 d = _mm256_set1_ps(_cvtsh_ss(LoadHalfBits(block.d)));
  u.extra[0] = _mm512_inserti64x4(_mm512_castsi256_si512(Q6Scales16(block)), _mm256_castps_si256(d), 1);
  return u;
}

// The tile loop over super-blocks [i0, i1) for NB activation rows into
// acc; unpacked(i) gives super-block i (unpacked now, or loaded from a
// prepared row), scales(i) PairedScales8 (computed now, or prepared per
// activation tile). A row's super-blocks may come in several ranges (in
// order): the accumulators carry over, so the operations are the same.
template <int NB, class GetUnpacked, class GetScales>
HWY_INLINE void ScaleMinTileLoop(int64_t i0, int64_t i1, const ActRow* acts, TileLanes8& acc,
                                 const GetUnpacked& unpacked, const GetScales& scales) {
  static_assert(NB >= 1 && NB <= kKQuantMaxActs);
  const __m512 negate_odd = _mm512_castsi512_ps(_mm512_set1_epi64(static_cast<int64_t>(0x8000000000000000ull)));
  for (int64_t i = i0; i < i1; ++i) {
    const ScaleMinUnpacked u = unpacked(i);
    const __m256i mins16 = _mm512_castsi512_si256(u.extra[0]);
    // [d, dmin, d, dmin, ..] in all 16 lanes.
    const __m512 d_dmin = _mm512_castsi512_ps(_mm512_shuffle_i64x2(u.extra[0], u.extra[0], _MM_SHUFFLE(3, 2, 3, 2)));
    // Row order 8: sumi, summ of each row (exact).
    const __m512i sums = RowSums8<NB>([&](int b, __m512i* dots, __m256i* min_dots) {
      *dots = ScaleMinDots(u.mult, u.w, acts[b].qs + i * kQKK);
      *min_dots = _mm256_madd_epi16(LoadBytes32(acts[b].bsums + i * 16), mins16);
    });
    // dx * d, -(dx * dmin) (one rounding each, as the reference).
    const __m512 factors = _mm512_xor_ps(_mm512_mul_ps(scales(i), d_dmin), negate_odd);
    acc.Fma(i, factors, _mm512_cvtepi32_ps(sums));
  }
}

// Q6_K: sumi = sum_k s_k dot(q_k, x_k) - 32 sum_k s_k bsum_k, then
// acc = fma(dx * d, sumi, acc) in lane 2k (odd lanes +0), as Q6KKernelAvx2.
template <int NB, class GetUnpacked, class GetScales>
HWY_INLINE void Q6TileLoop(int64_t i0, int64_t i1, const ActRow* acts, TileLanes8& acc, const GetUnpacked& unpacked,
                           const GetScales& scales) {
  static_assert(NB >= 1 && NB <= kKQuantMaxActs);
  // Odd lanes: +0 * (the offset sums) keeps them +0, as in the reference.
  const __m512 even = _mm512_castsi512_ps(_mm512_set1_epi64(0xFFFFFFFF));
  for (int64_t i = i0; i < i1; ++i) {
    const Q6Unpacked u = unpacked(i);
    const __m256i scales16 = _mm512_castsi512_si256(u.extra[0]);
    const __m512 d = _mm512_castsi512_ps(_mm512_shuffle_i64x2(u.extra[0], u.extra[0], _MM_SHUFFLE(3, 2, 3, 2)));
    // Row order 8: sum s_k dot_k, sum s_k bsum_k of each row.
    const __m512i sums = RowSums8<NB>([&](int b, __m512i* dots, __m256i* offset_dots) {
      *dots = Q6ScaledDots(u.mult, u.w, acts[b].qs + i * kQKK);
      *offset_dots = _mm256_madd_epi16(LoadBytes32(acts[b].bsums + i * 16), scales16);
    });
    // Even lanes: sumi = sum_dots - 32 * sum_offset (exact).
    const __m512i sumi = _mm512_sub_epi32(sums, _mm512_slli_epi32(_mm512_srli_epi64(sums, 32), 5));
    const __m512 factors = _mm512_and_ps(_mm512_mul_ps(scales(i), d), even);
    acc.Fma(i, factors, _mm512_cvtepi32_ps(sumi));
  }
}

// Per type: the block, its unpacked form, the decode kernel and the tile loop.
template <bool kFiveBit>
struct ScaleMinTraits {
  using Block = std::conditional_t<kFiveBit, BlockQ5K, BlockQ4K>;
  using Unpacked = ScaleMinUnpacked;
  using Decode = ScaleMinKernel<kFiveBit>;
  static Unpacked Unpack(const Block& block) { return UnpackScaleMin<kFiveBit>(block); }
  template <int NB, class Get, class Scales>
  static void Loop(int64_t i0, int64_t i1, const ActRow* acts, TileLanes8& acc, const Get& get,
                   const Scales& scales) {
    ScaleMinTileLoop<NB>(i0, i1, acts, acc, get, scales);
  }
};

struct Q6Traits {
  using Block = BlockQ6K;
  using Unpacked = Q6Unpacked;
  using Decode = Q6KKernelAvx2;
  static Unpacked Unpack(const Block& block) { return UnpackQ6(block); }
  template <int NB, class Get, class Scales>
  static void Loop(int64_t i0, int64_t i1, const ActRow* acts, TileLanes8& acc, const Get& get,
                   const Scales& scales) {
    Q6TileLoop<NB>(i0, i1, acts, acc, get, scales);
  }
};

// The kernel interface of matmul.cc: decode (width 1) is gemm_kquant-inl.h's
// streaming kernel on natural Q8K activations (matmul.cc picks the format by
// width); Tile unpacks each super-block per call (verification widths);
// Prepare + PreparedTile unpack a weight row once for all the activation
// tiles of a prefill (matmul.cc's RunRowsPrepared): the unpacking then costs
// 1/64 of what it did per tile at 512 tokens.
template <class Traits>
struct KQuant512Kernel {
  using Block = typename Traits::Block;
  using Unpacked = typename Traits::Unpacked;
  static constexpr int kTileRows = 1;
  static constexpr int kMaxActs = kKQuantMaxActs;

  static void StreamRows(const uint8_t* w, size_t stride, int64_t cols, const ActRow& act, int64_t rows,
                         float* y) {
    Traits::Decode::StreamRows(w, stride, cols, act, rows, y);
  }

  template <int R, int NB>
  static void Tile(const uint8_t* wrow, size_t /*stride*/, int64_t cols, const ActRow* acts, float* out) {
    static_assert(R == 1);
    const auto* blocks = reinterpret_cast<const Block*>(wrow);
    TileLanes8 acc;
    Traits::template Loop<NB>(
        0, cols / kQKK, acts, acc, [&](int64_t i) { return Traits::Unpack(blocks[i]); },
        [&](int64_t i) { return PairedScales8<NB>(acts, i); });
    acc.Store<NB>(out);
  }

  // Prefill (matmul.cc's RunRowsPrepared): kPreparedRows weight rows are
  // unpacked once (Prepare) for every activation tile, whose scales are
  // arranged once (PrepareActs); the tiles then walk the columns in chunks
  // of kPreparedChunk super-blocks, all the rows per chunk, so that the
  // rows' unpacked chunks (4 x 6 x 384 bytes) and the tile's activations
  // (8 x 1536 bytes) stay in L1 together. With 16 rows and whole rows the
  // two together overflowed L1 (8 x 1536 columns: 36 KB + 12 KB), and a
  // load-bound kernel measured 20-30% slower.
  static constexpr bool kPreparable = true;
  static constexpr int kPreparedRows = 4;
  static constexpr int64_t kPreparedChunk = 6;
  using Accumulators = TileLanes8;

  static int64_t Blocks(int64_t cols) { return cols / kQKK; }

  // Bytes of one prepared row of `cols` columns (a multiple of 64).
  static size_t PreparedRowBytes(int64_t cols) { return static_cast<size_t>(cols / kQKK) * Unpacked::kBytes; }

  // The unpacked super-blocks of one weight row into dst (64-aligned).
  static void Prepare(const uint8_t* wrow, int64_t cols, uint8_t* dst) {
    const auto* blocks = reinterpret_cast<const Block*>(wrow);
    for (int64_t i = 0; i < cols / kQKK; ++i) Traits::Unpack(blocks[i]).Store(dst + i * Unpacked::kBytes);
  }

  // Bytes of one activation tile's prepared scales (a multiple of 64).
  static size_t PreparedActBytes(int64_t cols) { return static_cast<size_t>(cols / kQKK) * 64; }

  // PairedScales8 of every super-block of the nb activation rows at acts into dst (64-aligned).
  static void PrepareActs(const ActRow* acts, int nb, int64_t cols, uint8_t* dst) {
    auto* dx = reinterpret_cast<float*>(dst);
    for (int64_t i = 0; i < cols / kQKK; ++i, dx += 16) {
      std::fill(dx, dx + 16, 0.0f);
      for (int b = 0; b < nb; ++b) dx[RowLane8(b)] = dx[RowLane8(b) + 1] = acts[b].d[i];
    }
  }

  // Super-blocks [i0, i1) of a prepared row against the tile's NB activation rows, into acc.
  template <int NB>
  static void PreparedTile(const uint8_t* prepared, const uint8_t* prepared_acts, int64_t i0, int64_t i1,
                           int64_t /*cols*/, const ActRow* acts, Accumulators& acc) {
    Traits::template Loop<NB>(
        i0, i1, acts, acc, [&](int64_t i) { return Unpacked::Load(prepared + i * Unpacked::kBytes); },
        [&](int64_t i) { return _mm512_load_ps(prepared_acts + 64 * i); });
  }

  template <int NB>
  static void StoreTile(const Accumulators& acc, float* out) {
    acc.Store<NB>(out);
  }
};

using Q4KKernel = KQuant512Kernel<ScaleMinTraits<false>>;
using Q5KKernel = KQuant512Kernel<ScaleMinTraits<true>>;
using Q6KKernel = KQuant512Kernel<Q6Traits>;

#endif  // AVX3 / AVX3_DL

}  // namespace HWY_NAMESPACE
}  // namespace cairn::kernels
HWY_AFTER_NAMESPACE();

#endif  // toggle guard
