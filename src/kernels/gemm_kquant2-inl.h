// Per-target integer dot kernels for Q2_K, Q3_K and IQ4_XS weights against
// Q8K activations. Included by matmul.cc once per Highway target, after
// gemm_kquant-inl.h (reuses its tiles, reductions and streaming loop).
//
// The canonical order is dot_ref.h's: per super-block exact integers
// (Q2_K sumi and summ as Q4_K; Q3_K and IQ4_XS one sumi), then Q2_K the two
// FMAs of Q4_K in lanes 2k, 2k + 1, Q3_K / IQ4_XS the one FMA of Q6_K in
// lane 2k (k = super-block mod 4). x86 targets use the Q4_K kernel shapes:
// width 1 streams the levels through two registers, four super-blocks per
// step (one hadd tree, one vector multiply and one FMA); widths 2..8 unpack a
// super-block once into eight registers for every activation row. Per type
// only the level / scale unpacking differs (a Traits struct):
// * Q2_K: levels (qs >> 2j) & 3, unsigned; the 16 scales (low nibbles) as
//   int16 pairs [s0, s2, .. | s1, s3, ..] (one shuffle per 32 levels, as
//   Q6_K), the 16 mins multiply the activation bsums.
// * Q3_K: u = q2 | hbit << 2 (0..7, unsigned for maddubs) = v + 4, so
//   sumi = sum_k s_k * (dot(u_k, x_k) - 4 * bsum_k) (as Q6_K's offset 32);
//   the 6-bit scales unpacked with 64-bit scalar operations.
// * IQ4_XS: codebook levels by one byte shuffle, signed (|kv| <= 127 keeps
//   maddubs exact). Tiles: maddubs(|kv|, sign(x, kv)), |kv| in registers,
//   kv in L1; the nibble layout puts sub-block 2g in [low | high] nibbles of
//   qs[32g .. 32g + 15], fixed by one 128-bit lane permute per 32 levels.
//   Decode instead rearranges the activation row once per call into the
//   weights' nibble order (|x| and x) and takes maddubs(|x|, sign(kv, x)):
//   no permute, no abs (0.55 -> 0.77 of Q4_K's GMAC/s in BM_WidthCompute/1).
// Other targets use the scalar reference.
#if defined(CAIRN_KERNELS_GEMM_KQUANT2_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CAIRN_KERNELS_GEMM_KQUANT2_INL_H_
#undef CAIRN_KERNELS_GEMM_KQUANT2_INL_H_
#else
#define CAIRN_KERNELS_GEMM_KQUANT2_INL_H_
#endif

#include <hwy/highway.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/half.h"
#include "kernels/quant_act.h"
#include "kernels/quant_blocks.h"

HWY_BEFORE_NAMESPACE();
namespace cairn::kernels {
namespace HWY_NAMESPACE {

#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL

// The IQ4_NL codebook in both 128-bit halves (a pshufb table).
HWY_INLINE __m256i CodebookTable() {
  return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIQ4NLValues)));
}

// Int16 [v0, v2, .., v14 | v1, v3, .., v15] of 16 int8 (signed) or uint8 values.
template <bool kSignedBytes>
HWY_INLINE __m256i DeinterleavedPairs16(__m128i v8) {
  const __m128i order = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
  const __m128i v = _mm_shuffle_epi8(v8, order);
  return kSignedBytes ? _mm256_cvtepi8_epi16(v) : _mm256_cvtepu8_epi16(v);
}

// sum_j scale(j) * dot(q_j, x_j) as ScaledDots, for signed levels: maddubs
// of |q| with x's sign flipped where q < 0 (|q| <= 127: exact pair sums).
// levels(g, &lo, &hi) gives the signed levels, magnitudes(g, &lo, &hi) their
// absolute values (tiles keep them in registers, the signs in L1).
template <class Levels, class Magnitudes, class Scale>
HWY_INLINE __m256i SignedScaledDots(Levels levels, Magnitudes magnitudes, Scale scale, const int8_t* x) {
  __m256i part[4];
  for (int g = 0; g < 4; ++g) {
    __m256i lo, hi, abs_lo, abs_hi;
    levels(g, &lo, &hi);
    magnitudes(g, &abs_lo, &abs_hi);
    const __m256i p_lo = _mm256_maddubs_epi16(abs_lo, _mm256_sign_epi8(LoadBytes32(x + 64 * g), lo));
    const __m256i p_hi = _mm256_maddubs_epi16(abs_hi, _mm256_sign_epi8(LoadBytes32(x + 64 * g + 32), hi));
    part[g] =
        _mm256_add_epi32(_mm256_madd_epi16(p_lo, scale(2 * g)), _mm256_madd_epi16(p_hi, scale(2 * g + 1)));
  }
  return AddTree4(part);
}

// Q2_K: 16 sub-blocks of 16 with 4-bit scales and mins (d, dmin at byte 80).
struct Q2KTraits {
  using Block = BlockQ2K;
  static constexpr bool kHasMin = true;   // two FMAs per super-block (Q4_K's tail)
  static constexpr bool kSigned = false;  // levels 0..3
  static constexpr int kOffsetShift = 0;  // unused (kHasMin)
  static constexpr size_t kDOffset = 80;

  struct Pre {
    __m256i pairs;    // int16 scale pairs (DeinterleavedPairs16)
    __m256i extra16;  // int16 mins m_0..m_15, multiplying the 16 bsums
  };
  static HWY_INLINE Pre Prepare(const Block& b) {
    const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales));
    const __m128i low4 = _mm_set1_epi8(0x0F);
    return {DeinterleavedPairs16<false>(_mm_and_si128(raw, low4)),
            _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(raw, 4), low4))};
  }
  // Groups 2g, 2g + 1 (32 elements each, group G = 4h + j: bits 2j, 2j + 1
  // of qs[32h ..]); 16-bit shifts by at most 6 keep each byte's bits.
  static HWY_INLINE void Levels(const Block& b, const Pre&, int g, __m256i* lo, __m256i* hi) {
    const __m256i three = _mm256_set1_epi8(3);
    const __m256i raw = LoadBytes32(b.qs + 32 * (g / 2));
    const int j = 2 * (g % 2);
    *lo = _mm256_and_si256(_mm256_srli_epi16(raw, 2 * j), three);
    *hi = _mm256_and_si256(_mm256_srli_epi16(raw, 2 * j + 2), three);
  }
  // madd multiplier of group j: s_2j in the low half, s_2j+1 in the high half.
  static HWY_INLINE __m256i Scale(const Pre& p, int j) { return Q6ScaleOf(p.pairs, j); }
};

// Q3_K: 16 sub-blocks of 16, levels u = q2 | hbit << 2 = v + 4 (0..7),
// signed 6-bit scales; sumi = dots - 4 * (scaled bsums).
struct Q3KTraits {
  using Block = BlockQ3K;
  static constexpr bool kHasMin = false;
  static constexpr bool kSigned = false;
  static constexpr int kOffsetShift = 2;  // the offset 4 of u
  static constexpr size_t kDOffset = 108;

  struct Pre {
    __m256i pairs;    // int16 scale pairs
    __m256i extra16;  // int16 scales s_0..s_15 in order (the offset term)
    __m256i hmask;
  };
  // UnpackQ3KScales with 64-bit scalar operations: byte k of `first` is
  // s_k + 32 for k < 8 (low nibble of byte k, bits 2(k / 4) of byte 8 + k % 4),
  // of `second` for k + 8 (high nibbles, bits 4 + 2(k / 4)).
  static HWY_INLINE Pre Prepare(const Block& b) {
    uint64_t low8;
    uint32_t high4;
    std::memcpy(&low8, b.scales, 8);
    std::memcpy(&high4, b.scales + 8, 4);
    const uint64_t nib = 0x0F0F0F0F0F0F0F0Full, two = 0x0303030303030303ull;
    const uint64_t h01 = (high4 | (uint64_t{high4 >> 2} << 32)) & two;
    const uint64_t h23 = ((high4 >> 4) | (uint64_t{high4 >> 6} << 32)) & two;
    const uint64_t first = (low8 & nib) | (h01 << 4);
    const uint64_t second = ((low8 >> 4) & nib) | (h23 << 4);
    const __m128i s8 = _mm_sub_epi8(_mm_set_epi64x(static_cast<int64_t>(second), static_cast<int64_t>(first)),
                                    _mm_set1_epi8(32));
    return {DeinterleavedPairs16<true>(s8), _mm256_cvtepi8_epi16(s8), LoadBytes32(b.hmask)};
  }
  // Groups G = 2g, 2g + 1 (h = G / 4, j = G % 4): q2 as Q2_K, plus bit 4h + j
  // of hmask[l] moved to bit 2 (16-bit shift of -5..2: each byte keeps its bits).
  static HWY_INLINE void Levels(const Block& b, const Pre& p, int g, __m256i* lo, __m256i* hi) {
    const __m256i three = _mm256_set1_epi8(3), bit2 = _mm256_set1_epi8(4);
    const __m256i raw = LoadBytes32(b.qs + 32 * (g / 2));
    const int j = 2 * (g % 2), bit = 2 * g;  // bit = 4h + j of group 2g
    *lo = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(raw, 2 * j), three),
                          _mm256_and_si256(ShiftLanes16(p.hmask, 2 - bit), bit2));
    *hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(raw, 2 * j + 2), three),
                          _mm256_and_si256(ShiftLanes16(p.hmask, 1 - bit), bit2));
  }
  static HWY_INLINE __m256i Scale(const Pre& p, int j) { return Q6ScaleOf(p.pairs, j); }
};

// IQ4_XS: 8 sub-blocks of 32, codebook levels, signed 6-bit scales.
struct IQ4XSTraits {
  using Block = BlockIQ4XS;
  static constexpr bool kHasMin = false;
  static constexpr bool kSigned = true;
  static constexpr int kOffsetShift = -1;  // no offset term
  static constexpr size_t kDOffset = 0;

  struct Pre {
    __m256i sc16;  // int16 ls_ib - 32, ib = 0..7, in both 128-bit halves
  };
  // Nibble ib of scales_l (a u32) and bits 2ib, 2ib + 1 of scales_h spread
  // to byte ib with 64-bit scalar operations.
  static HWY_INLINE Pre Prepare(const Block& b) {
    uint32_t l4;
    std::memcpy(&l4, b.scales_l, 4);
    uint64_t lo = l4;
    lo = (lo | (lo << 16)) & 0x0000FFFF0000FFFFull;
    lo = (lo | (lo << 8)) & 0x00FF00FF00FF00FFull;
    lo = (lo | (lo << 4)) & 0x0F0F0F0F0F0F0F0Full;
    uint64_t hi = LoadHalfBits(b.scales_h);
    hi = (hi | (hi << 24)) & 0x000000FF000000FFull;
    hi = (hi | (hi << 12)) & 0x000F000F000F000Full;
    hi = (hi | (hi << 6)) & 0x0303030303030303ull;
    const __m128i s8 =
        _mm_sub_epi8(_mm_cvtsi64_si128(static_cast<int64_t>(lo | (hi << 4))), _mm_set1_epi8(32));
    return {_mm256_broadcastsi128_si256(_mm_cvtepi8_epi16(s8))};
  }
  // Sub-blocks 2g, 2g + 1: codebook values of the nibbles of qs[32g ..],
  // [low nibbles | high nibbles] of each 16-byte half.
  static HWY_INLINE void Levels(const Block& b, const Pre&, int g, __m256i* lo, __m256i* hi) {
    const __m256i table = CodebookTable();
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    const __m256i raw = LoadBytes32(b.qs + 32 * g);
    const __m256i vl = _mm256_shuffle_epi8(table, _mm256_and_si256(raw, low4));
    const __m256i vh = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(raw, 4), low4));
    *lo = _mm256_permute2x128_si256(vl, vh, 0x20);
    *hi = _mm256_permute2x128_si256(vl, vh, 0x31);
  }
  // madd multiplier of sub-block j in every int16 lane.
  static HWY_INLINE __m256i Scale(const Pre& p, int j) {
    return _mm256_shuffle_epi8(p.sc16, _mm256_set1_epi16(static_cast<int16_t>(0x0100 + 0x0202 * j)));
  }
};

// hadd(dots, extra) of one super-block: lanes 0, 1 of each half sum to the
// scaled dots, lanes 2, 3 to the bsums term (Q2_K mins, Q3_K offset; IQ4_XS 0).
// magnitudes: |levels| (kSigned only).
template <class T, class Levels, class Magnitudes, class Scale>
HWY_INLINE __m256i Dots2(const typename T::Pre& p, Levels levels, Magnitudes magnitudes, Scale scale,
                         const int8_t* x, const int16_t* bsums) {
  __m256i dots;
  if constexpr (T::kSigned) {
    dots = SignedScaledDots(levels, magnitudes, scale, x);
  } else {
    dots = ScaledDots(levels, scale, x);
  }
  if constexpr (T::kOffsetShift < 0 && !T::kHasMin) {
    return _mm256_hadd_epi32(dots, _mm256_setzero_si256());
  } else {
    return _mm256_hadd_epi32(dots, _mm256_madd_epi16(LoadBytes32(bsums), p.extra16));
  }
}

// Float tail of four super-blocks (width 1) or four activation rows (tiles):
// r = ReducePairs4 of Dots2 (lane 2t: dots, 2t + 1: bsums term of item t),
// dx2 = [dx_t, dx_t] pairs, scales = the F16 fields of item t at kDOffset
// (Q2_K: [d, dmin] pairs; others: d in lane 2t). Returns the factors and,
// in *sums, the integers they multiply (one FMA, lanes as dot_ref.h).
template <class T>
HWY_INLINE __m256 Tail(__m256i r, __m256 dx2, __m256 scales, __m256* sums) {
  if constexpr (T::kHasMin) {
    // Lanes 2t, 2t + 1: sumi, summ; factors dx * d, -(dx * dmin).
    *sums = _mm256_cvtepi32_ps(r);
    const __m256 negate_odd =
        _mm256_castsi256_ps(_mm256_set_epi32(INT32_MIN, 0, INT32_MIN, 0, INT32_MIN, 0, INT32_MIN, 0));
    return _mm256_xor_ps(_mm256_mul_ps(dx2, scales), negate_odd);
  } else {
    // Lane 2t: sumi (Q3_K: minus the offset term); odd lanes get factor +0.
    if constexpr (T::kOffsetShift > 0) {
      r = _mm256_sub_epi32(r, _mm256_slli_epi32(_mm256_srli_epi64(r, 32), T::kOffsetShift));
    }
    *sums = _mm256_cvtepi32_ps(r);
    const __m256 even = _mm256_castsi256_ps(_mm256_set_epi32(0, -1, 0, -1, 0, -1, 0, -1));
    return _mm256_and_ps(_mm256_mul_ps(dx2, scales), even);
  }
}

// The F16 scale fields of N (<= 4) blocks as floats: Q2_K [d, dmin] per
// block (lanes 2t, 2t + 1), else d in lane 2t (odd lanes: the next field's
// value, masked by Tail).
template <class T, int N>
HWY_INLINE __m256 BlockScales(const typename T::Block* blocks) {
  const uint8_t* base = reinterpret_cast<const uint8_t*>(blocks) + T::kDOffset;
  if constexpr (T::kHasMin) {
    return _mm256_cvtph_ps(GatherFields<N, 4>(base, sizeof(typename T::Block)));
  } else {
    const __m128 d = _mm_cvtph_ps(GatherFields<N, 2>(base, sizeof(typename T::Block)));
    return _mm256_set_m128(_mm_unpackhi_ps(d, d), _mm_unpacklo_ps(d, d));
  }
}

// Width 1, N (<= 4) consecutive super-blocks from `blocks` (activation
// super-blocks from index i, a multiple of 4): lane pair t is super-block i + t.
template <class T, int N>
HWY_INLINE __m256 StreamGroup2(const typename T::Block* blocks, const ActRow& act, int64_t i, __m256 acc) {
  __m256i h[4];
#pragma GCC unroll 4
  for (int t = 0; t < 4; ++t) {
    if (t < N) {
      const typename T::Block& b = blocks[t];
      const typename T::Pre p = T::Prepare(b);
      const auto levels = [&](int g, __m256i* lo, __m256i* hi) { T::Levels(b, p, g, lo, hi); };
      h[t] = Dots2<T>(
          p, levels,
          [&](int g, __m256i* lo, __m256i* hi) {
            levels(g, lo, hi);
            *lo = _mm256_abs_epi8(*lo);
            *hi = _mm256_abs_epi8(*hi);
          },
          [&](int j) { return T::Scale(p, j); }, act.qs + (i + t) * kQKK, act.bsums + (i + t) * 16);
    } else {
      h[t] = _mm256_setzero_si256();
    }
  }
  const __m256 dx2 = _mm256_permutevar8x32_ps(_mm256_castps128_ps256(LoadDecodeScales<N>(act.d + i)),
                                              _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3));
  __m256 sums;
  const __m256 factors = Tail<T>(ReducePairs4(h), dx2, BlockScales<T, N>(blocks), &sums);
  return _mm256_fmadd_ps(factors, sums, acc);
}

// IQ4_XS decode: the activation row rearranged once per call into the
// nibble order of the weights (per 64 elements: [x 0..15 | x 32..47],
// [x 16..31 | x 48..63]), as magnitudes |x| and signed x, so each 32 levels
// need no lane permute and no abs: maddubs(|x|, sign(kv, x)) (exact:
// |x|, |kv| <= 127). xa, xs: cols bytes each.
HWY_INLINE void RearrangeForIQ4XS(const int8_t* x, int64_t cols, int8_t* xa, int8_t* xs) {
  for (int64_t e = 0; e < cols; e += 64) {
    const __m256i a = LoadBytes32(x + e), b = LoadBytes32(x + e + 32);
    const __m256i lo = _mm256_permute2x128_si256(a, b, 0x20), hi = _mm256_permute2x128_si256(a, b, 0x31);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(xs + e), lo);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(xs + e + 32), hi);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(xa + e), _mm256_abs_epi8(lo));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(xa + e + 32), _mm256_abs_epi8(hi));
  }
}

// hadd(dots, 0) of one IQ4_XS super-block against rearranged activations:
// sub-blocks 2g, 2g + 1 share one multiplier [s_2g | s_2g+1] (int16 pairs).
HWY_INLINE __m256i IQ4XSDecodeDots(const BlockIQ4XS& b, const int8_t* xa, const int8_t* xs) {
  const __m256i table = CodebookTable();
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  // ls - 32 of the 8 sub-blocks as int16 [s0, s2, s4, s6 | s1, s3, s5, s7]
  // (words 0, 2, 4, 6 of Prepare's low half, words 1, 3, 5, 7 of its high half).
  const __m256i pairs = _mm256_shuffle_epi8(
      IQ4XSTraits::Prepare(b).sc16,
      _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, -128, -128, -128, -128, -128, -128, -128, -128,  //
                       2, 3, 6, 7, 10, 11, 14, 15, -128, -128, -128, -128, -128, -128, -128, -128));
  __m256i part[4];
  for (int g = 0; g < 4; ++g) {
    const __m256i raw = LoadBytes32(b.qs + 32 * g);
    const __m256i kv_lo = _mm256_shuffle_epi8(table, _mm256_and_si256(raw, low4));
    const __m256i kv_hi = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(raw, 4), low4));
    const __m256i m = Q6ScaleOf(pairs, g);
    const int8_t* a = xa + 64 * g;
    const int8_t* x = xs + 64 * g;
    const __m256i p_lo = _mm256_maddubs_epi16(LoadBytes32(a), _mm256_sign_epi8(kv_lo, LoadBytes32(x)));
    const __m256i p_hi =
        _mm256_maddubs_epi16(LoadBytes32(a + 32), _mm256_sign_epi8(kv_hi, LoadBytes32(x + 32)));
    part[g] = _mm256_add_epi32(_mm256_madd_epi16(p_lo, m), _mm256_madd_epi16(p_hi, m));
  }
  return _mm256_hadd_epi32(AddTree4(part), _mm256_setzero_si256());
}

// Width 1, IQ4_XS: StreamGroup2 with rearranged activations (xa, xs).
template <int N>
HWY_INLINE __m256 StreamGroupIQ4XS(const BlockIQ4XS* blocks, const ActRow& act, const int8_t* xa,
                                   const int8_t* xs, int64_t i, __m256 acc) {
  __m256i h[4];
#pragma GCC unroll 4
  for (int t = 0; t < 4; ++t) {
    h[t] = t < N ? IQ4XSDecodeDots(blocks[t], xa + (i + t) * kQKK, xs + (i + t) * kQKK)
                 : _mm256_setzero_si256();
  }
  const __m256 dx2 = _mm256_permutevar8x32_ps(_mm256_castps128_ps256(LoadDecodeScales<N>(act.d + i)),
                                              _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3));
  __m256 sums;
  const __m256 factors = Tail<IQ4XSTraits>(ReducePairs4(h), dx2, BlockScales<IQ4XSTraits, N>(blocks), &sums);
  return _mm256_fmadd_ps(factors, sums, acc);
}

// One weight row x up to 8 activation rows (decode: StreamRows), the
// ScaleMinKernel structure with the type's Traits.
template <class T>
struct KQuant2Kernel {
  using Block = typename T::Block;
  static constexpr int kTileRows = 1;
  static constexpr int kMaxActs = kKQuantMaxActs;

  static void StreamRows(const uint8_t* w, size_t stride, int64_t cols, const ActRow& act, int64_t rows,
                         float* y) {
    if constexpr (std::is_same_v<T, IQ4XSTraits>) {
      // Per thread, reused across calls (no allocation after the first).
      thread_local std::vector<int8_t> buffer;
      if (buffer.size() < static_cast<size_t>(2 * cols)) buffer.resize(static_cast<size_t>(2 * cols));
      int8_t* xa = buffer.data();
      int8_t* xs = buffer.data() + cols;
      RearrangeForIQ4XS(act.qs, cols, xa, xs);
      ::cairn::kernels::HWY_NAMESPACE::StreamRows<Block>(
          w, stride, cols / kQKK, rows, y,
          [&](auto n, const Block* blocks, int64_t i, __m256 acc) __attribute__((always_inline)) {
            return StreamGroupIQ4XS<decltype(n)::value>(blocks, act, xa, xs, i, acc);
          });
    } else {
      ::cairn::kernels::HWY_NAMESPACE::StreamRows<Block>(
          w, stride, cols / kQKK, rows, y,
          [&](auto n, const Block* blocks, int64_t i, __m256 acc) __attribute__((always_inline)) {
            return StreamGroup2<T, decltype(n)::value>(blocks, act, i, acc);
          });
    }
  }

  template <int R, int NB>
  static void Tile(const uint8_t* wrow, size_t /*stride*/, int64_t cols, const ActRow* acts, float* out) {
    static_assert(R == 1 && NB >= 1 && NB <= kMaxActs);
    constexpr int kGroups = TileLanes<NB>::kGroups;
    const auto* blocks = reinterpret_cast<const Block*>(wrow);
    if constexpr (NB == 1) {
      StreamRows(wrow, 0, cols, acts[0], 1, out);
      return;
    }
    TileLanes<NB> acc;
    for (int64_t i = 0; i < cols / kQKK; ++i) {
      const Block& block = blocks[i];
      const typename T::Pre p = T::Prepare(block);
      // Levels in registers; signed types: their magnitudes, the signed levels
      // (vpsign's operand) in L1 with the multipliers of the eight groups.
      __m256i q[8];
      alignas(32) __m256i signs[T::kSigned ? 8 : 1];
      for (int g = 0; g < 4; ++g) T::Levels(block, p, g, &q[2 * g], &q[2 * g + 1]);
      if constexpr (T::kSigned) {
        for (int j = 0; j < 8; ++j) {
          signs[j] = q[j];
          q[j] = _mm256_abs_epi8(q[j]);
        }
      }
      alignas(32) __m256i scales[8];
      for (int j = 0; j < 8; ++j) scales[j] = T::Scale(p, j);
      // [d, dmin] or [d, d] in every lane pair (the one block's fields, four times).
      const __m256 block_scales =
          _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(BlockScales<T, 1>(&block)), 0));
      for (int g = 0; g < kGroups; ++g) {
        const int n = (g + 1 < kGroups) ? 4 : NB - 4 * g;
        const ActRow* a = acts + 4 * g;
        __m256i h[4];
        for (int t = 0; t < 4; ++t) {
          if (t < n) {
            h[t] = Dots2<T>(
                p,
                [&](int k, __m256i* lo, __m256i* hi) {
                  *lo = T::kSigned ? signs[2 * k] : q[2 * k];
                  *hi = T::kSigned ? signs[2 * k + 1] : q[2 * k + 1];
                },
                [&](int k, __m256i* lo, __m256i* hi) {
                  *lo = q[2 * k];
                  *hi = q[2 * k + 1];
                },
                [&](int j) { return scales[j]; }, a[t].qs + i * kQKK, a[t].bsums + i * 16);
          } else {
            h[t] = _mm256_setzero_si256();
          }
        }
        __m256 sums;
        const __m256 factors = Tail<T>(ReducePairs4(h), PairedActScales(a, n, i), block_scales, &sums);
        acc.Fma(g, i, factors, sums);
      }
    }
    acc.Store(out);
  }
};

static_assert(offsetof(BlockQ2K, d) == Q2KTraits::kDOffset && offsetof(BlockQ2K, dmin) == 82);
static_assert(offsetof(BlockQ3K, d) == Q3KTraits::kDOffset && offsetof(BlockIQ4XS, d) == 0);

using Q2KKernel = KQuant2Kernel<Q2KTraits>;
using Q3KKernel = KQuant2Kernel<Q3KTraits>;
using IQ4XSKernel = KQuant2Kernel<IQ4XSTraits>;

#elif !CAIRN_ARM_SIMD_TARGET  // Arm: gemm_kquant_neon-inl.h

using Q2KKernel = RefKernel<DType::kQ2_K>;
using Q3KKernel = RefKernel<DType::kQ3_K>;
using IQ4XSKernel = RefKernel<DType::kIQ4_XS>;

#endif

}  // namespace HWY_NAMESPACE
}  // namespace cairn::kernels
HWY_AFTER_NAMESPACE();

#endif  // toggle guard
