// Per-target integer dot kernels for K-quant weights (Q4_K, Q5_K, Q6_K)
// against Q8K activations. Included by matmul.cc once per Highway target,
// after gemm_q8-inl.h (uses its RefKernel).
//
// Per super-block the integer sums (sumi, summ of dot_ref.h) are exact, so
// any SIMD grouping gives the same integers; the F32 FMAs per super-block are
// the reference's, done for four activation rows at once in the even lanes of
// a vector (lane-wise IEEE operations: identical to the scalar ones). x86
// targets unpack the levels of one super-block once into eight 32-byte
// registers and reuse them for up to 8 activation rows (maddubs: unsigned
// levels x signed activations, then madd with the 16-bit sub-block scales);
// the int32 partial sums of four activation rows share one horizontal
// reduction. Other targets use the scalar reference.
#if defined(CAIRN_KERNELS_GEMM_KQUANT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CAIRN_KERNELS_GEMM_KQUANT_INL_H_
#undef CAIRN_KERNELS_GEMM_KQUANT_INL_H_
#else
#define CAIRN_KERNELS_GEMM_KQUANT_INL_H_
#endif

#include <hwy/highway.h>

#include <climits>
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

#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL

HWY_INLINE __m256i LoadBytes32(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// Activation rows per K-quant kernel call: unpacked levels stay in registers
// for all of them; their integer sums are reduced four at a time.
inline constexpr int kKQuantMaxActs = 8;

// sum_j scales[j] * dot(q_j, x_j) over the eight 32-byte groups of a
// super-block, as eight int32 lanes (exact); scales[j] holds the 16-bit
// multiplier of each int16 pair lane of group j (read from L1, which keeps
// the 16 ymm registers for the levels and the partial sums).
HWY_INLINE __m256i ScaledDots(const __m256i q[8], const __m256i* scales, const int8_t* x) {
  __m256i sum = _mm256_madd_epi16(_mm256_maddubs_epi16(q[0], LoadBytes32(x)), scales[0]);
  for (int j = 1; j < 8; ++j) {
    const __m256i p = _mm256_maddubs_epi16(q[j], LoadBytes32(x + 32 * j));
    sum = _mm256_add_epi32(sum, _mm256_madd_epi16(p, scales[j]));
  }
  return sum;
}

// Reduces up to four pairs (a_t, b_t) of int32x8 vectors, given as
// h[t] = hadd(a_t, b_t), to [sum a_0, sum b_0, sum a_1, sum b_1 | t = 2, 3]
// (exact integer sums: any grouping gives the same result).
HWY_INLINE __m256i ReducePairs4(const __m256i h[4]) {
  const __m256i u0 = _mm256_hadd_epi32(h[0], h[1]);  // t = 0, 1: low halves | high halves
  const __m256i u1 = _mm256_hadd_epi32(h[2], h[3]);
  return _mm256_add_epi32(_mm256_permute2x128_si256(u0, u1, 0x20), _mm256_permute2x128_si256(u0, u1, 0x31));
}

// [dx_0, dx_0, dx_1, dx_1 | dx_2, dx_2, dx_3, dx_3] of super-block i for the
// `n` (<= 4) activation rows at acts (missing rows: 0).
HWY_INLINE __m256 PairedActScales(const ActRow* acts, int n, int64_t i) {
  alignas(32) float dx[8] = {};
  for (int t = 0; t < n; ++t) dx[2 * t] = dx[2 * t + 1] = acts[t].d[i];
  return _mm256_load_ps(dx);
}

// Even lanes of a tile accumulator hold acc_b for four activation rows.
template <int NB>
HWY_INLINE void StoreEvenLanes(const __m256 acc[(NB + 3) / 4], float* out) {
  for (int g = 0; g < (NB + 3) / 4; ++g) {
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, acc[g]);
    for (int t = 0; t < 4 && 4 * g + t < NB; ++t) out[4 * g + t] = lanes[2 * t];
  }
}

// Unpacks the 12 scale bytes of a Q4_K/Q5_K super-block (UnpackKScaleMin for
// all j at once, four bytes per 32-bit word): the eight 6-bit scales as int16
// lanes 0..7 of both 128-bit halves (sc16; ScaleOf broadcasts one) and the
// eight mins each repeated twice as int16 (mins16, matching the 16 bsums of
// the activation super-block).
HWY_INLINE void UnpackKScales(const uint8_t* bytes, __m256i* sc16, __m256i* mins16) {
  // Three separate 32-bit loads straight from the block (a 12-byte memcpy
  // into an array went through the stack: store, then three reloads).
  uint32_t w[3];
  std::memcpy(&w[0], bytes, 4);
  std::memcpy(&w[1], bytes + 4, 4);
  std::memcpy(&w[2], bytes + 8, 4);
  const uint32_t sc_lo = w[0] & 0x3f3f3f3fu;  // j < 4: low 6 bits of bytes j
  const uint32_t m_lo = w[1] & 0x3f3f3f3fu;   // and j + 4
  // j >= 4: a nibble of byte j + 4 and the top 2 bits of byte j - 4 (scale) or j (min).
  const uint32_t sc_hi = (w[2] & 0x0f0f0f0fu) | (((w[0] >> 6) & 0x03030303u) << 4);
  const uint32_t m_hi = ((w[2] >> 4) & 0x0f0f0f0fu) | (((w[1] >> 6) & 0x03030303u) << 4);
  *sc16 = _mm256_broadcastsi128_si256(
      _mm_cvtepu8_epi16(_mm_set_epi32(0, 0, static_cast<int>(sc_hi), static_cast<int>(sc_lo))));
  const __m128i m8 = _mm_set_epi32(0, 0, static_cast<int>(m_hi), static_cast<int>(m_lo));
  *mins16 = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(m8, m8));
}

// int16 lane j of sc16 in every int16 lane (one byte shuffle).
HWY_INLINE __m256i ScaleOf(__m256i sc16, int j) {
  return _mm256_shuffle_epi8(sc16, _mm256_set1_epi16(static_cast<int16_t>(0x0100 + 0x0202 * j)));
}

// Levels (0..15, or 0..31 with the fifth bit) of sub-blocks 2g and 2g + 1 of
// a Q4_K/Q5_K super-block. Bit j of qh[l] is the fifth bit of element l of
// sub-block j.
template <bool kFiveBit, class Block>
HWY_INLINE void LoadKLevels(const Block& block, int g, __m256i* lo, __m256i* hi) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m256i raw = LoadBytes32(block.qs + 32 * g);
  *lo = _mm256_and_si256(raw, low4);
  *hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), low4);
  if constexpr (kFiveBit) {
    const __m256i qh = LoadBytes32(block.qh);
    const __m256i one = _mm256_set1_epi8(1);
    const __m256i bit_lo = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * g)), one);
    const __m256i bit_hi = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * g + 1)), one);
    *lo = _mm256_or_si256(*lo, _mm256_slli_epi16(bit_lo, 4));
    *hi = _mm256_or_si256(*hi, _mm256_slli_epi16(bit_hi, 4));
  }
}

// Decode path of one Q4_K/Q5_K super-block against activation levels x and
// bsums: hadd(dots, min_dots), whose lanes sum to sumi (lanes 0, 1 of each
// 128-bit half) and summ (lanes 2, 3). Levels stream through two registers.
template <bool kFiveBit, class Block>
HWY_INLINE __m256i StreamDots(const Block& block, const int8_t* x, const int16_t* bsums) {
  __m256i sc16, mins16;
  UnpackKScales(block.scales, &sc16, &mins16);
  __m256i dots = _mm256_setzero_si256();
  for (int g = 0; g < 4; ++g) {
    __m256i lo, hi;
    LoadKLevels<kFiveBit>(block, g, &lo, &hi);
    const __m256i p_lo = _mm256_maddubs_epi16(lo, LoadBytes32(x + 64 * g));
    const __m256i p_hi = _mm256_maddubs_epi16(hi, LoadBytes32(x + 64 * g + 32));
    dots = _mm256_add_epi32(dots, _mm256_madd_epi16(p_lo, ScaleOf(sc16, 2 * g)));
    dots = _mm256_add_epi32(dots, _mm256_madd_epi16(p_hi, ScaleOf(sc16, 2 * g + 1)));
  }
  const __m256i min_dots = _mm256_madd_epi16(LoadBytes32(bsums), mins16);
  return _mm256_hadd_epi32(dots, min_dots);
}

// Q4_K and Q5_K: 8 sub-blocks of 32 with 6-bit scales and mins. One weight
// row x up to 8 activation rows per call: each super-block is unpacked once
// (levels in eight registers, scales in L1) and reused for every activation
// row (decode, NB = 1, streams them instead). Per (row, activation row) the
// exact integers sumi / summ of dot_ref.h, then, four activation rows per
// vector, the reference's two FMAs in lane 2t:
// acc = fma(dx * d, sumi, acc); acc = fma(-(dx * dmin), summ, acc).
template <bool kFiveBit>
struct ScaleMinKernel {
  using Block = std::conditional_t<kFiveBit, BlockQ5K, BlockQ4K>;
  static constexpr int kTileRows = 1;
  static constexpr int kMaxActs = kKQuantMaxActs;

  template <int R, int NB>
  static void Tile(const uint8_t* wrow, size_t /*stride*/, int64_t cols, const ActRow* acts, float* out) {
    static_assert(R == 1 && NB >= 1 && NB <= kMaxActs);
    constexpr int kGroups = (NB + 3) / 4;
    const auto* blocks = reinterpret_cast<const Block*>(wrow);
    const __m256 negate_odd =
        _mm256_castsi256_ps(_mm256_set_epi32(INT32_MIN, 0, INT32_MIN, 0, INT32_MIN, 0, INT32_MIN, 0));
    __m256 acc[kGroups];
    for (int g = 0; g < kGroups; ++g) acc[g] = _mm256_setzero_ps();
    if constexpr (NB == 1) {
      // Decode: nothing to reuse, so stream the levels through two registers
      // and keep the scales in one (sc16); same integers, same FMAs. Two
      // super-blocks per step share one horizontal reduction.
      const __m128 negate_odd4 = _mm256_castps256_ps128(negate_odd);
      __m128 acc1 = _mm_setzero_ps();
      const int64_t num_blocks = cols / kQKK;
      int64_t i = 0;
      for (; i + 2 <= num_blocks; i += 2) {
        // Weights ~1.1 KB (eight super-blocks) ahead: decode reads each once.
        const char* ahead = reinterpret_cast<const char*>(blocks + i + 8);
        for (int line = 0; line < 5; ++line) _mm_prefetch(ahead + 64 * line, _MM_HINT_T0);
        __m256i h[2];
        for (int u = 0; u < 2; ++u) {
          h[u] =
              StreamDots<kFiveBit>(blocks[i + u], acts[0].qs + (i + u) * kQKK, acts[0].bsums + (i + u) * 16);
        }
        // [sumi_i, summ_i, sumi_i+1, summ_i+1] (exact).
        const __m256i q = _mm256_hadd_epi32(h[0], h[1]);
        const __m128 sums =
            _mm_cvtepi32_ps(_mm_add_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1)));
        // [d_i, dmin_i, d_i+1, dmin_i+1]: d and dmin are the first 4 bytes of a
        // block (static_assert below).
        uint32_t dd0, dd1;
        std::memcpy(&dd0, reinterpret_cast<const uint8_t*>(&blocks[i]), 4);
        std::memcpy(&dd1, reinterpret_cast<const uint8_t*>(&blocks[i + 1]), 4);
        const __m128 d_dmin =
            _mm_cvtph_ps(_mm_setr_epi32(static_cast<int>(dd0), static_cast<int>(dd1), 0, 0));
        const __m128 dx = _mm_castpd_ps(_mm_load_sd(reinterpret_cast<const double*>(acts[0].d + i)));
        // dx * d, -(dx * dmin) per super-block; then the reference's four FMAs in order, in lane 0.
        const __m128 factors = _mm_xor_ps(_mm_mul_ps(_mm_unpacklo_ps(dx, dx), d_dmin), negate_odd4);
        acc1 = _mm_fmadd_ps(factors, sums, acc1);
        acc1 = _mm_fmadd_ps(_mm_movehdup_ps(factors), _mm_movehdup_ps(sums), acc1);
        acc1 = _mm_fmadd_ps(_mm_movehl_ps(factors, factors), _mm_movehl_ps(sums, sums), acc1);
        acc1 = _mm_fmadd_ps(_mm_permute_ps(factors, 0xFF), _mm_permute_ps(sums, 0xFF), acc1);
      }
      for (; i < num_blocks; ++i) {
        const Block& block = blocks[i];
        const __m256i h = StreamDots<kFiveBit>(block, acts[0].qs + i * kQKK, acts[0].bsums + i * 16);
        const __m128i t = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
        // Lanes 0, 1: sumi, summ (exact); then dx * d, -(dx * dmin).
        const __m128 sums = _mm_cvtepi32_ps(_mm_hadd_epi32(t, t));
        const __m128 d_dmin =
            _mm_setr_ps(_cvtsh_ss(LoadHalfBits(block.d)), _cvtsh_ss(LoadHalfBits(block.dmin)), 0.0f, 0.0f);
        const __m128 factors = _mm_xor_ps(_mm_mul_ps(_mm_set1_ps(acts[0].d[i]), d_dmin), negate_odd4);
        acc1 = _mm_fmadd_ps(factors, sums, acc1);
        acc1 = _mm_fmadd_ps(_mm_movehdup_ps(factors), _mm_movehdup_ps(sums), acc1);
      }
      out[0] = _mm_cvtss_f32(acc1);
      return;
    }
    for (int64_t i = 0; i < cols / kQKK; ++i) {
      const Block& block = blocks[i];
      __m256i q[8];
      for (int g = 0; g < 4; ++g) LoadKLevels<kFiveBit>(block, g, &q[2 * g], &q[2 * g + 1]);
      alignas(32) __m256i scales[8];
      __m256i sc16, mins16;
      UnpackKScales(block.scales, &sc16, &mins16);
      for (int j = 0; j < 8; ++j) scales[j] = ScaleOf(sc16, j);
      const float d = _cvtsh_ss(LoadHalfBits(block.d));
      const float dmin = _cvtsh_ss(LoadHalfBits(block.dmin));
      const __m256 d_dmin = _mm256_setr_ps(d, dmin, d, dmin, d, dmin, d, dmin);
      for (int g = 0; g < kGroups; ++g) {
        const int n = (g + 1 < kGroups) ? 4 : NB - 4 * g;
        const ActRow* a = acts + 4 * g;
        __m256i h[4];
        for (int t = 0; t < 4; ++t) {
          if (t < n) {
            const __m256i dots = ScaledDots(q, scales, a[t].qs + i * kQKK);
            const __m256i min_dots = _mm256_madd_epi16(LoadBytes32(a[t].bsums + i * 16), mins16);
            h[t] = _mm256_hadd_epi32(dots, min_dots);
          } else {
            h[t] = _mm256_setzero_si256();
          }
        }
        // Lanes 2t, 2t + 1: sumi, summ of activation row t (exact).
        const __m256 sums = _mm256_cvtepi32_ps(ReducePairs4(h));
        // Lanes 2t, 2t + 1: dx * d, -(dx * dmin) (one rounding each, as the reference).
        const __m256 factors = _mm256_xor_ps(_mm256_mul_ps(PairedActScales(a, n, i), d_dmin), negate_odd);
        acc[g] = _mm256_fmadd_ps(factors, sums, acc[g]);
        acc[g] = _mm256_fmadd_ps(_mm256_movehdup_ps(factors), _mm256_movehdup_ps(sums), acc[g]);
      }
    }
    StoreEvenLanes<NB>(acc, out);
  }
};

static_assert(offsetof(BlockQ4K, dmin) == 2 && offsetof(BlockQ5K, dmin) == 2);

using Q4KKernel = ScaleMinKernel<false>;
using Q5KKernel = ScaleMinKernel<true>;

// Q6_K: 16 sub-blocks of 16, unsigned levels 0..63 with offset 32. Same tile
// structure as ScaleMinKernel; per (row, activation row) the exact
// sumi = sum_dots - 32 * sum_offset, then acc = fma(dx * d, sumi, acc).
struct Q6KKernel {
  static constexpr int kTileRows = 1;
  static constexpr int kMaxActs = kKQuantMaxActs;

  template <int R, int NB>
  static void Tile(const uint8_t* wrow, size_t /*stride*/, int64_t cols, const ActRow* acts, float* out) {
    static_assert(R == 1 && NB >= 1 && NB <= kMaxActs);
    constexpr int kGroups = (NB + 3) / 4;
    const auto* blocks = reinterpret_cast<const BlockQ6K*>(wrow);
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    const __m256i low2 = _mm256_set1_epi8(0x03);
    __m256 acc[kGroups];
    for (int g = 0; g < kGroups; ++g) acc[g] = _mm256_setzero_ps();
    for (int64_t i = 0; i < cols / kQKK; ++i) {
      const BlockQ6K& block = blocks[i];
      __m256i q[8];
      for (int h = 0; h < 2; ++h) {
        // Group 4h + t holds elements 128h + 32t .. +31 (layout in quant_blocks.h).
        const __m256i ql0 = LoadBytes32(block.ql + 64 * h);
        const __m256i ql1 = LoadBytes32(block.ql + 64 * h + 32);
        const __m256i qh = LoadBytes32(block.qh + 32 * h);
        auto high = [&](int shift) {
          const __m256i bits = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(shift)), low2);
          return _mm256_slli_epi16(bits, 4);
        };
        q[4 * h + 0] = _mm256_or_si256(_mm256_and_si256(ql0, low4), high(0));
        q[4 * h + 1] = _mm256_or_si256(_mm256_and_si256(ql1, low4), high(2));
        q[4 * h + 2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low4), high(4));
        q[4 * h + 3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low4), high(6));
      }
      alignas(32) __m256i scales[8];
      for (int v = 0; v < 8; ++v) {
        // Pair lanes 0..7 cover sub-block 2v, lanes 8..15 sub-block 2v + 1.
        scales[v] =
            _mm256_set_m128i(_mm_set1_epi16(block.scales[2 * v + 1]), _mm_set1_epi16(block.scales[2 * v]));
      }
      const __m256i scales16 =
          _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block.scales)));
      const __m256 d = _mm256_set1_ps(_cvtsh_ss(LoadHalfBits(block.d)));
      for (int g = 0; g < kGroups; ++g) {
        const int n = (g + 1 < kGroups) ? 4 : NB - 4 * g;
        const ActRow* a = acts + 4 * g;
        __m256i h[4];
        for (int t = 0; t < 4; ++t) {
          if (t < n) {
            const __m256i dots = ScaledDots(q, scales, a[t].qs + i * kQKK);
            const __m256i offset_dots = _mm256_madd_epi16(LoadBytes32(a[t].bsums + i * 16), scales16);
            h[t] = _mm256_hadd_epi32(dots, offset_dots);
          } else {
            h[t] = _mm256_setzero_si256();
          }
        }
        // Lane 2t: sum_dots - 32 * sum_offset of activation row t (exact).
        const __m256i v = ReducePairs4(h);
        const __m256i sumi = _mm256_sub_epi32(v, _mm256_slli_epi32(_mm256_srli_epi64(v, 32), 5));
        acc[g] =
            _mm256_fmadd_ps(_mm256_mul_ps(PairedActScales(a, n, i), d), _mm256_cvtepi32_ps(sumi), acc[g]);
      }
    }
    StoreEvenLanes<NB>(acc, out);
  }
};

#else

using Q4KKernel = RefKernel<DType::kQ4_K>;
using Q5KKernel = RefKernel<DType::kQ5_K>;
using Q6KKernel = RefKernel<DType::kQ6_K>;

#endif

}  // namespace HWY_NAMESPACE
}  // namespace cairn::kernels
HWY_AFTER_NAMESPACE();

#endif  // toggle guard
