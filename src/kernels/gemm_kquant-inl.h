// Per-target integer dot kernels for K-quant weights (Q4_K, Q5_K, Q6_K)
// against Q8K activations. Included by matmul.cc once per Highway target,
// after gemm_q8-inl.h (uses its RefKernel).
//
// Per super-block the integer sums (sumi, summ of dot_ref.h) are exact, so
// any SIMD grouping gives the same integers; the two F32 FMAs per super-block
// are scalar and identical to the reference. x86 targets unpack the levels of
// one super-block once into eight 32-byte registers and reuse them for all NB
// activation rows (maddubs: unsigned levels x signed activations, then madd
// with the 16-bit sub-block scales). Other targets use the scalar reference.
#if defined(CAIRN_KERNELS_GEMM_KQUANT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CAIRN_KERNELS_GEMM_KQUANT_INL_H_
#undef CAIRN_KERNELS_GEMM_KQUANT_INL_H_
#else
#define CAIRN_KERNELS_GEMM_KQUANT_INL_H_
#endif

#include <hwy/highway.h>

#include <cstring>
#include <type_traits>

#include "core/half.h"
#include "kernels/quant_act.h"
#include "kernels/quant_blocks.h"

HWY_BEFORE_NAMESPACE();
namespace cairn::kernels {
namespace HWY_NAMESPACE {

#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL

// a * b + c with one rounding (the reference's std::fma).
HWY_INLINE float FusedMulAdd(float a, float b, float c) {
  return _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(a), _mm_set_ss(b), _mm_set_ss(c)));
}

// Horizontal sums of two int32x8 vectors (exact).
HWY_INLINE void SumLanes2(__m256i a, __m256i b, int* sum_a, int* sum_b) {
  const __m256i h = _mm256_hadd_epi32(a, b);
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
  s = _mm_hadd_epi32(s, s);
  *sum_a = _mm_cvtsi128_si32(s);
  *sum_b = _mm_extract_epi32(s, 1);
}

HWY_INLINE __m256i LoadBytes32(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// sum_j scale_j * dot(q_j, x_j) over the eight 32-byte groups of a super-block;
// scales[j] holds the 16-bit multiplier of each int16 pair lane of group j.
HWY_INLINE __m256i ScaledDots(const __m256i q[8], const __m256i scales[8], const int8_t* x) {
  __m256i sum = _mm256_setzero_si256();
  for (int j = 0; j < 8; ++j) {
    const __m256i p = _mm256_maddubs_epi16(q[j], LoadBytes32(x + 32 * j));
    sum = _mm256_add_epi32(sum, _mm256_madd_epi16(p, scales[j]));
  }
  return sum;
}

// Unpacks the 12 scale bytes of a Q4_K/Q5_K super-block (UnpackKScaleMin for
// all j at once, four bytes per 32-bit word): the eight 6-bit scales as int16
// (scales16) and the eight mins each repeated twice as int16 (mins16, matching
// the 16 bsums of the activation super-block).
HWY_INLINE void UnpackKScales(const uint8_t* bytes, __m128i* scales16, __m256i* mins16) {
  uint32_t w[3];
  std::memcpy(w, bytes, sizeof w);
  const uint32_t sc_lo = w[0] & 0x3f3f3f3fu;  // j < 4: low 6 bits of bytes j
  const uint32_t m_lo = w[1] & 0x3f3f3f3fu;   // and j + 4
  // j >= 4: a nibble of byte j + 4 and the top 2 bits of byte j - 4 (scale) or j (min).
  const uint32_t sc_hi = (w[2] & 0x0f0f0f0fu) | (((w[0] >> 6) & 0x03030303u) << 4);
  const uint32_t m_hi = ((w[2] >> 4) & 0x0f0f0f0fu) | (((w[1] >> 6) & 0x03030303u) << 4);
  *scales16 = _mm_cvtepu8_epi16(_mm_set_epi32(0, 0, static_cast<int>(sc_hi), static_cast<int>(sc_lo)));
  const __m128i m8 = _mm_set_epi32(0, 0, static_cast<int>(m_hi), static_cast<int>(m_lo));
  *mins16 = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(m8, m8));
}

// Q4_K and Q5_K: 8 sub-blocks of 32 with 6-bit scales and mins.
template <bool kFiveBit>
struct ScaleMinKernel {
  using Block = std::conditional_t<kFiveBit, BlockQ5K, BlockQ4K>;

  template <int NB>
  static void Rows(const uint8_t* wrow, int64_t cols, const ActRow* acts, float* out) {
    const auto* blocks = reinterpret_cast<const Block*>(wrow);
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    float acc[NB] = {};
    for (int64_t i = 0; i < cols / kQKK; ++i) {
      const Block& block = blocks[i];
      __m256i q[8], scales[8];
      for (int g = 0; g < 4; ++g) {
        const __m256i raw = LoadBytes32(block.qs + 32 * g);
        q[2 * g] = _mm256_and_si256(raw, low4);
        q[2 * g + 1] = _mm256_and_si256(_mm256_srli_epi16(raw, 4), low4);
      }
      if constexpr (kFiveBit) {
        // Bit j of qh[l] is the fifth bit of element l of sub-block j.
        const __m256i qh = LoadBytes32(block.qh);
        const __m256i one = _mm256_set1_epi8(1);
        for (int j = 0; j < 8; ++j) {
          const __m256i bit = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(j)), one);
          q[j] = _mm256_or_si256(q[j], _mm256_slli_epi16(bit, 4));
        }
      }
      __m128i scales16;
      __m256i mins16;
      UnpackKScales(block.scales, &scales16, &mins16);
      alignas(16) int16_t sc[8];
      _mm_store_si128(reinterpret_cast<__m128i*>(sc), scales16);
      for (int j = 0; j < 8; ++j) scales[j] = _mm256_set1_epi16(sc[j]);
      const float d = _cvtsh_ss(LoadHalfBits(block.d));
      const float dmin = _cvtsh_ss(LoadHalfBits(block.dmin));
      for (int b = 0; b < NB; ++b) {
        const __m256i dots = ScaledDots(q, scales, acts[b].qs + i * kQKK);
        const __m256i min_dots = _mm256_madd_epi16(LoadBytes32(acts[b].bsums + i * 16), mins16);
        int sumi, summ;
        SumLanes2(dots, min_dots, &sumi, &summ);
        const float dx = acts[b].d[i];
        acc[b] = FusedMulAdd(dx * d, static_cast<float>(sumi), acc[b]);
        acc[b] = FusedMulAdd(-(dx * dmin), static_cast<float>(summ), acc[b]);
      }
    }
    for (int b = 0; b < NB; ++b) out[b] = acc[b];
  }
};

using Q4KKernel = ScaleMinKernel<false>;
using Q5KKernel = ScaleMinKernel<true>;

// Q6_K: 16 sub-blocks of 16, unsigned levels 0..63 with offset 32.
struct Q6KKernel {
  template <int NB>
  static void Rows(const uint8_t* wrow, int64_t cols, const ActRow* acts, float* out) {
    const auto* blocks = reinterpret_cast<const BlockQ6K*>(wrow);
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    const __m256i low2 = _mm256_set1_epi8(0x03);
    float acc[NB] = {};
    for (int64_t i = 0; i < cols / kQKK; ++i) {
      const BlockQ6K& block = blocks[i];
      __m256i q[8], scales[8];
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
      for (int v = 0; v < 8; ++v) {
        // Pair lanes 0..7 cover sub-block 2v, lanes 8..15 sub-block 2v + 1.
        scales[v] = _mm256_set_m128i(_mm_set1_epi16(block.scales[2 * v + 1]), _mm_set1_epi16(block.scales[2 * v]));
      }
      const __m256i scales16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block.scales)));
      const float d = _cvtsh_ss(LoadHalfBits(block.d));
      for (int b = 0; b < NB; ++b) {
        const __m256i dots = ScaledDots(q, scales, acts[b].qs + i * kQKK);
        const __m256i offset_dots = _mm256_madd_epi16(LoadBytes32(acts[b].bsums + i * 16), scales16);
        int sum_dots, sum_offset;
        SumLanes2(dots, offset_dots, &sum_dots, &sum_offset);
        const int sumi = sum_dots - 32 * sum_offset;
        acc[b] = FusedMulAdd(acts[b].d[i] * d, static_cast<float>(sumi), acc[b]);
      }
    }
    for (int b = 0; b < NB; ++b) out[b] = acc[b];
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
