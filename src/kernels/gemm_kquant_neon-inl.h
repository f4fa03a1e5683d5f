// Per-target integer dot kernels for the K-quants (Q2_K, Q3_K, Q4_K, Q5_K,
// Q6_K, IQ4_XS) against Q8K activations on Arm: NEON (AdvSIMD) code, compiled
// for Highway's NEON target and, since every SVE CPU implements AdvSIMD, for
// its SVE targets too (CAIRN_ARM_SIMD_TARGET). Included by matmul.cc after
// gemm_kquant2-inl.h, whose x86 kernels it complements (other targets keep
// the scalar reference).
//
// One weight row x up to 8 activation rows per call (decode: 1 x 1). Per
// super-block the levels are unpacked once into sixteen int8x16 registers
// (256 signed levels in element order) with the sub-block multipliers, and
// reused for every activation row:
//   sumi = sum_k s_k * dot(q_k, x_k)   (exact int32: sdot, or widening
//                                       multiplies without dotprod)
// where q_k are the levels the reference multiplies (Q4_K/Q5_K/Q2_K unsigned,
// Q3_K -4..3, IQ4_XS codebook values) except Q6_K, whose levels are unpacked
// as q - 32 (-32..31): sum_k s_k * dot(q_k - 32, x_k) is the reference's
// sum_k s_k * (dot(q_k, x_k) - 32 * bsum_k), the same integer. Q4_K/Q5_K/Q2_K
// also form summ = sum m_k * bsums from the activation row's bsums.
// The float part is the reference's, operation for operation (dot_ref.h):
// super-block i updates lanes 2k (and 2k + 1) of eight F32 accumulators per
// activation row, k = i mod 4, with fma(dx * d, sumi) (and
// fma(-(dx * dmin), summ)), reduced by ReduceLanes8. So every result equals
// MatMulReference bit for bit, whatever the tile width.
//
// Without __ARM_FEATURE_DOTPROD (the armv8-a baseline; Highway's NEON target
// does not require dotprod) the dot of 16 levels is vmull_s8 + vmlal_high_s8
// (two products per int16 lane: |level| <= 127 and |x| <= 127 keep the sum
// within +-32258) and one pairwise widening add.
#if defined(CAIRN_KERNELS_GEMM_KQUANT_NEON_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CAIRN_KERNELS_GEMM_KQUANT_NEON_INL_H_
#undef CAIRN_KERNELS_GEMM_KQUANT_NEON_INL_H_
#else
#define CAIRN_KERNELS_GEMM_KQUANT_NEON_INL_H_
#endif

#include <hwy/highway.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "core/half.h"
#include "kernels/dot_ref.h"
#include "kernels/quant_act.h"
#include "kernels/quant_blocks.h"

#if HWY_ARCH_ARM_A64
#include <arm_neon.h>
#endif

HWY_BEFORE_NAMESPACE();
namespace cairn::kernels {
namespace HWY_NAMESPACE {

#if CAIRN_ARM_SIMD_TARGET

// Lanes of the exact int32 dot of 16 levels w with 16 activation levels x
// (each lane a partial sum; the lane split does not matter, only the total).
HWY_INLINE int32x4_t KDot16(int8x16_t w, const int8_t* x) {
  const int8x16_t v = vld1q_s8(x);
#if defined(__ARM_FEATURE_DOTPROD)
  return vdotq_s32(vdupq_n_s32(0), w, v);
#else
  return vpaddlq_s16(vmlal_high_s8(vmull_s8(vget_low_s8(w), vget_low_s8(v)), w, v));
#endif
}

// The same for 32 levels (w0: elements 0..15, w1: 16..31).
HWY_INLINE int32x4_t KDot32(int8x16_t w0, int8x16_t w1, const int8_t* x) {
  const int8x16_t v0 = vld1q_s8(x), v1 = vld1q_s8(x + 16);
#if defined(__ARM_FEATURE_DOTPROD)
  return vdotq_s32(vdotq_s32(vdupq_n_s32(0), w0, v0), w1, v1);
#else
  const int16x8_t p0 = vmlal_high_s8(vmull_s8(vget_low_s8(w0), vget_low_s8(v0)), w0, v0);
  const int16x8_t p1 = vmlal_high_s8(vmull_s8(vget_low_s8(w1), vget_low_s8(v1)), w1, v1);
  return vpadalq_s16(vpaddlq_s16(p0), p1);
#endif
}

// One super-block, unpacked: 256 levels (chunk c = elements 16c .. 16c + 15)
// and the kSub sub-block multipliers as int32 lanes (sub-block k: lane k % 4
// of sc[k / 4]).
template <int kSub>
struct KLevels {
  int8x16_t q[16];
  int32x4_t sc[kSub / 4];
};

template <int kSub, int K>
HWY_INLINE int32x4_t KScaledTerm(const KLevels<kSub>& u, const int8_t* x, int32x4_t acc) {
  if constexpr (kSub == 8) {
    return vmlaq_laneq_s32(acc, KDot32(u.q[2 * K], u.q[2 * K + 1], x + 32 * K), u.sc[K / 4], K % 4);
  } else {
    return vmlaq_laneq_s32(acc, KDot16(u.q[K], x + 16 * K), u.sc[K / 4], K % 4);
  }
}

// sumi = sum_k s_k * dot(q_k, x_k) over the super-block (exact int32; two
// accumulator chains, even and odd sub-blocks).
template <int kSub, int... K>
HWY_INLINE int32_t KScaledDots(const KLevels<kSub>& u, const int8_t* x, std::integer_sequence<int, K...>) {
  int32x4_t acc[2] = {vdupq_n_s32(0), vdupq_n_s32(0)};
  ((acc[K % 2] = KScaledTerm<kSub, K>(u, x, acc[K % 2])), ...);
  return vaddvq_s32(vaddq_s32(acc[0], acc[1]));
}

template <int kSub>
HWY_INLINE int32_t KScaledDots(const KLevels<kSub>& u, const int8_t* x) {
  return KScaledDots<kSub>(u, x, std::make_integer_sequence<int, kSub>{});
}

// Int32 lanes of the 16 bytes in `b` (signed or unsigned), four vectors.
template <bool kSigned>
HWY_INLINE void WidenBytes(const uint8_t b[16], int32x4_t out[4]) {
  if constexpr (kSigned) {
    const int8x16_t v = vld1q_s8(reinterpret_cast<const int8_t*>(b));
    const int16x8_t lo = vmovl_s8(vget_low_s8(v)), hi = vmovl_high_s8(v);
    out[0] = vmovl_s16(vget_low_s16(lo));
    out[1] = vmovl_high_s16(lo);
    out[2] = vmovl_s16(vget_low_s16(hi));
    out[3] = vmovl_high_s16(hi);
  } else {
    const uint8x16_t v = vld1q_u8(b);
    const uint16x8_t lo = vmovl_u8(vget_low_u8(v)), hi = vmovl_high_u8(v);
    out[0] = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(lo)));
    out[1] = vreinterpretq_s32_u32(vmovl_high_u16(lo));
    out[2] = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(hi)));
    out[3] = vreinterpretq_s32_u32(vmovl_high_u16(hi));
  }
}

// Bytes 0..15 of the 16 packed 6-bit Q4_K/Q5_K scale/min bytes, rearranged
// (UnpackKScaleMin for all j, 64-bit scalar operations): bytes 0..3 scales
// 0..3, 4..7 mins 0..3, 8..11 scales 4..7, 12..15 mins 4..7.
HWY_INLINE uint8x16_t KScaleMinBytes(const uint8_t* bytes) {
  uint64_t low8;
  uint32_t high4;
  std::memcpy(&low8, bytes, 8);
  std::memcpy(&high4, bytes + 8, 4);
  // j < 4: the low 6 bits of bytes j (scale) and j + 4 (min).
  const uint64_t first = low8 & 0x3f3f3f3f3f3f3f3full;
  // j >= 4: nibbles of byte j + 4 (scale: low, min: high) with bits 4-5 the
  // top 2 bits of byte j - 4 (scale) or j (min).
  const uint64_t nibbles = (high4 | (uint64_t{high4 >> 4} << 32)) & 0x0f0f0f0f0f0f0f0full;
  const uint64_t second = nibbles | ((low8 >> 2) & 0x3030303030303030ull);
  return vcombine_u8(vcreate_u8(first), vcreate_u8(second));
}

// Q4_K / Q5_K: 8 sub-blocks of 32, unsigned levels, 6-bit scales and mins.
template <bool kFiveBit>
struct NeonScaleMinTraits {
  using Block = std::conditional_t<kFiveBit, BlockQ5K, BlockQ4K>;
  static constexpr int kSub = 8;
  static constexpr bool kHasMin = true;
  static constexpr size_t kDOffset = 0;     // d; dmin follows
  struct Pre {
    KLevels<8> u;
    int16x8_t mins;  // m_0..m_7
  };
  static HWY_INLINE void Prepare(const Block& b, Pre* p) {
    const uint8x16_t sm = KScaleMinBytes(b.scales);
    // Scales 0..7 (bytes 0..3, 8..11) and mins (bytes 4..7, 12..15).
    const uint8x16_t order = {0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15};
    const uint8x16_t split = vqtbl1q_u8(sm, order);
    const uint16x8_t sc16 = vmovl_u8(vget_low_u8(split));
    p->u.sc[0] = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(sc16)));
    p->u.sc[1] = vreinterpretq_s32_u32(vmovl_high_u16(sc16));
    p->mins = vreinterpretq_s16_u16(vmovl_high_u8(split));
    const uint8x16_t low4 = vdupq_n_u8(0x0F);
    uint8x16_t h[2] = {vdupq_n_u8(0), vdupq_n_u8(0)};
    if constexpr (kFiveBit) {
      h[0] = vld1q_u8(b.qh);
      h[1] = vld1q_u8(b.qh + 16);
    }
    const uint8x16_t bit4 = vdupq_n_u8(0x10);
    // Group g (64 elements): low nibbles of qs[32g ..] are elements 64g .. 64g + 31,
    // high nibbles 64g + 32 ..; the fifth bit of element l of the low (high)
    // half is bit 2g (2g + 1) of qh[l].
    for (int g = 0; g < 4; ++g) {
      for (int half = 0; half < 2; ++half) {
        const uint8x16_t raw = vld1q_u8(b.qs + 32 * g + 16 * half);
        uint8x16_t lo = vandq_u8(raw, low4), hi = vshrq_n_u8(raw, 4);
        if constexpr (kFiveBit) {
          lo = vorrq_u8(lo, vandq_u8(vtstq_u8(h[half], vdupq_n_u8(uint8_t(1u << (2 * g)))), bit4));
          hi = vorrq_u8(hi, vandq_u8(vtstq_u8(h[half], vdupq_n_u8(uint8_t(2u << (2 * g)))), bit4));
        }
        p->u.q[4 * g + half] = vreinterpretq_s8_u8(lo);
        p->u.q[4 * g + 2 + half] = vreinterpretq_s8_u8(hi);
      }
    }
  }
  // summ = sum_j m_j * (bsum_2j + bsum_2j+1).
  static HWY_INLINE int32_t Summ(const Pre& p, const int16_t* bsums) {
    const int16x8_t pairs = vpaddq_s16(vld1q_s16(bsums), vld1q_s16(bsums + 8));
    return vaddvq_s32(vmlal_high_s16(vmull_s16(vget_low_s16(pairs), vget_low_s16(p.mins)), pairs, p.mins));
  }
};

// Q6_K: 16 sub-blocks of 16, levels q - 32 (-32..31), int8 scales.
struct NeonQ6KTraits {
  using Block = BlockQ6K;
  static constexpr int kSub = 16;
  static constexpr bool kHasMin = false;
  static constexpr size_t kDOffset = 208;
  struct Pre {
    KLevels<16> u;
  };
  static HWY_INLINE void Prepare(const Block& b, Pre* p) {
    WidenBytes<true>(reinterpret_cast<const uint8_t*>(b.scales), p->u.sc);
    const uint8x16_t low4 = vdupq_n_u8(0x0F), bits45 = vdupq_n_u8(0x30);
    const int8x16_t offset = vdupq_n_s8(32);
    // Half h (128 elements): element 128h + 32t + l (l < 32) takes the low
    // (t < 2) or high nibble of ql[64h + 32(t % 2) + l] and bits 2t, 2t + 1 of
    // qh[32h + l] as bits 4, 5.
    for (int h = 0; h < 2; ++h) {
      for (int half = 0; half < 2; ++half) {
        const uint8x16_t qh = vld1q_u8(b.qh + 32 * h + 16 * half);
        for (int t = 0; t < 4; ++t) {
          const uint8x16_t ql = vld1q_u8(b.ql + 64 * h + 32 * (t % 2) + 16 * half);
          const uint8x16_t nib = t < 2 ? vandq_u8(ql, low4) : vshrq_n_u8(ql, 4);
          const uint8x16_t top = vandq_u8(vshlq_u8(qh, vdupq_n_s8(static_cast<int8_t>(4 - 2 * t))), bits45);
          p->u.q[8 * h + 2 * t + half] = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(nib, top)), offset);
        }
      }
    }
  }
  static HWY_INLINE int32_t Summ(const Pre&, const int16_t*) { return 0; }
};

// The 2-bit levels of chunk 2j + u of a 128-element half (Q2_K, Q3_K):
// bits 2j, 2j + 1 of qs[16u .. 16u + 15].
HWY_INLINE uint8x16_t Levels2(const uint8_t* qs, int j, int u) {
  return vandq_u8(vshlq_u8(vld1q_u8(qs + 16 * u), vdupq_n_s8(static_cast<int8_t>(-2 * j))), vdupq_n_u8(3));
}

// Q2_K: 16 sub-blocks of 16, levels 0..3, 4-bit scales and mins.
struct NeonQ2KTraits {
  using Block = BlockQ2K;
  static constexpr int kSub = 16;
  static constexpr bool kHasMin = true;
  static constexpr size_t kDOffset = 80;  // d; dmin follows
  struct Pre {
    KLevels<16> u;
    int16x8_t mins[2];  // m_0..m_7, m_8..m_15
  };
  static HWY_INLINE void Prepare(const Block& b, Pre* p) {
    const uint8x16_t raw = vld1q_u8(b.scales);
    uint8_t sc[16];
    vst1q_u8(sc, vandq_u8(raw, vdupq_n_u8(0x0F)));
    WidenBytes<false>(sc, p->u.sc);
    const uint8x16_t m = vshrq_n_u8(raw, 4);
    p->mins[0] = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(m)));
    p->mins[1] = vreinterpretq_s16_u16(vmovl_high_u8(m));
    // Element 128h + 32j + 16u + l: chunk 8h + 2j + u.
    for (int h = 0; h < 2; ++h) {
      for (int j = 0; j < 4; ++j) {
        for (int u = 0; u < 2; ++u) p->u.q[8 * h + 2 * j + u] = vreinterpretq_s8_u8(Levels2(b.qs + 32 * h, j, u));
      }
    }
  }
  // summ = sum_k m_k * bsum_k.
  static HWY_INLINE int32_t Summ(const Pre& p, const int16_t* bsums) {
    const int16x8_t b0 = vld1q_s16(bsums), b1 = vld1q_s16(bsums + 8);
    int32x4_t s = vmull_s16(vget_low_s16(b0), vget_low_s16(p.mins[0]));
    s = vmlal_high_s16(s, b0, p.mins[0]);
    s = vmlal_s16(s, vget_low_s16(b1), vget_low_s16(p.mins[1]));
    s = vmlal_high_s16(s, b1, p.mins[1]);
    return vaddvq_s32(s);
  }
};

// Q3_K: 16 sub-blocks of 16, levels q2 - 4 * !hbit (-4..3), signed 6-bit scales.
struct NeonQ3KTraits {
  using Block = BlockQ3K;
  static constexpr int kSub = 16;
  static constexpr bool kHasMin = false;
  static constexpr size_t kDOffset = 108;
  struct Pre {
    KLevels<16> u;
  };
  static HWY_INLINE void Prepare(const Block& b, Pre* p) {
    // UnpackQ3KScales with 64-bit scalar operations: byte k of `first` is
    // s_k + 32 for k < 8 (low nibble of byte k, bits 2(k / 4) of byte 8 + k % 4),
    // of `second` for k + 8 (high nibbles, bits 4 + 2(k / 4)).
    uint64_t low8;
    uint32_t high4;
    std::memcpy(&low8, b.scales, 8);
    std::memcpy(&high4, b.scales + 8, 4);
    const uint64_t nib = 0x0F0F0F0F0F0F0F0Full, two = 0x0303030303030303ull;
    const uint64_t h01 = (high4 | (uint64_t{high4 >> 2} << 32)) & two;
    const uint64_t h23 = ((high4 >> 4) | (uint64_t{high4 >> 6} << 32)) & two;
    const uint64_t first = (low8 & nib) | (h01 << 4);
    const uint64_t second = ((low8 >> 4) & nib) | (h23 << 4);
    uint8_t s[16];
    vst1q_u8(s, vsubq_u8(vcombine_u8(vcreate_u8(first), vcreate_u8(second)), vdupq_n_u8(32)));
    WidenBytes<true>(s, p->u.sc);
    const uint8x16_t hm[2] = {vld1q_u8(b.hmask), vld1q_u8(b.hmask + 16)};
    const uint8x16_t four = vdupq_n_u8(4);
    // Element 128h + 32j + 16u + l (chunk 8h + 2j + u): high bit 4h + j of hmask[16u + l].
    for (int h = 0; h < 2; ++h) {
      for (int j = 0; j < 4; ++j) {
        for (int u = 0; u < 2; ++u) {
          const uint8x16_t hbit = vandq_u8(vtstq_u8(hm[u], vdupq_n_u8(uint8_t(1u << (4 * h + j)))), four);
          p->u.q[8 * h + 2 * j + u] =
              vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(Levels2(b.qs + 32 * h, j, u), hbit)), vdupq_n_s8(4));
        }
      }
    }
  }
  static HWY_INLINE int32_t Summ(const Pre&, const int16_t*) { return 0; }
};

// IQ4_XS: 8 sub-blocks of 32, codebook levels, signed 6-bit scales.
struct NeonIQ4XSTraits {
  using Block = BlockIQ4XS;
  static constexpr int kSub = 8;
  static constexpr bool kHasMin = false;
  static constexpr size_t kDOffset = 0;
  struct Pre {
    KLevels<8> u;
  };
  static HWY_INLINE void Prepare(const Block& b, Pre* p) {
    // ls_ib - 32: nibble ib of scales_l (u32) | bits 2ib, 2ib + 1 of scales_h << 4.
    uint32_t l4;
    std::memcpy(&l4, b.scales_l, 4);
    const uint32_t h = LoadHalfBits(b.scales_h);
    alignas(16) int32_t s[8];
    for (int ib = 0; ib < 8; ++ib) s[ib] = static_cast<int32_t>(((l4 >> (4 * ib)) & 0xF) | (((h >> (2 * ib)) & 3) << 4)) - 32;
    p->u.sc[0] = vld1q_s32(s);
    p->u.sc[1] = vld1q_s32(s + 4);
    const int8x16_t codebook = vld1q_s8(kIQ4NLValues);
    const uint8x16_t low4 = vdupq_n_u8(0x0F);
    // Sub-block ib: low nibbles of qs[16ib ..] (elements 32ib ..), then high nibbles.
    for (int ib = 0; ib < 8; ++ib) {
      const uint8x16_t raw = vld1q_u8(b.qs + 16 * ib);
      p->u.q[2 * ib] = vqtbl1q_s8(codebook, vandq_u8(raw, low4));
      p->u.q[2 * ib + 1] = vqtbl1q_s8(codebook, vshrq_n_u8(raw, 4));
    }
  }
  static HWY_INLINE int32_t Summ(const Pre&, const int16_t*) { return 0; }
};

// One weight row x NB (<= 8) activation rows: each super-block unpacked once
// (T::Prepare) for all NB rows, then per row the exact integers and the
// reference's FMAs in lane pair i mod 4.
template <class T>
struct NeonKQuantKernel {
  using Block = typename T::Block;
  static constexpr int kTileRows = 1;
  static constexpr int kMaxActs = 8;

  template <int R, int NB>
  static void Tile(const uint8_t* wrow, size_t /*stride*/, int64_t cols, const ActRow* acts, float* out) {
    static_assert(R == 1 && NB >= 1 && NB <= kMaxActs);
    const auto* blocks = reinterpret_cast<const Block*>(wrow);
    float acc[NB][8] = {};
    typename T::Pre p;
    for (int64_t i = 0; i < cols / kQKK; ++i) {
      const Block& block = blocks[i];
      T::Prepare(block, &p);
      const uint8_t* fields = reinterpret_cast<const uint8_t*>(&block) + T::kDOffset;
      const float d = F16ToF32(LoadHalfBits(fields));
      const float dmin = T::kHasMin ? F16ToF32(LoadHalfBits(fields + 2)) : 0.0f;
      const int k = static_cast<int>(i % 4);
      for (int b = 0; b < NB; ++b) {
        const int32_t sumi = KScaledDots<T::kSub>(p.u, acts[b].qs + i * kQKK);
        const float dx = acts[b].d[i];
        acc[b][2 * k] = std::fma(dx * d, static_cast<float>(sumi), acc[b][2 * k]);
        if constexpr (T::kHasMin) {
          const int32_t summ = T::Summ(p, acts[b].bsums + i * 16);
          acc[b][2 * k + 1] = std::fma(-(dx * dmin), static_cast<float>(summ), acc[b][2 * k + 1]);
        }
      }
    }
    for (int b = 0; b < NB; ++b) out[b] = ::cairn::kernels::ReduceLanes8(acc[b]);
  }
};

static_assert(offsetof(BlockQ4K, d) == 0 && offsetof(BlockQ4K, dmin) == 2);
static_assert(offsetof(BlockQ5K, d) == 0 && offsetof(BlockQ5K, dmin) == 2);
static_assert(offsetof(BlockQ6K, d) == NeonQ6KTraits::kDOffset);
static_assert(offsetof(BlockQ2K, d) == NeonQ2KTraits::kDOffset && offsetof(BlockQ2K, dmin) == 82);
static_assert(offsetof(BlockQ3K, d) == NeonQ3KTraits::kDOffset && offsetof(BlockIQ4XS, d) == 0);

using Q4KKernel = NeonKQuantKernel<NeonScaleMinTraits<false>>;
using Q5KKernel = NeonKQuantKernel<NeonScaleMinTraits<true>>;
using Q6KKernel = NeonKQuantKernel<NeonQ6KTraits>;
using Q2KKernel = NeonKQuantKernel<NeonQ2KTraits>;
using Q3KKernel = NeonKQuantKernel<NeonQ3KTraits>;
using IQ4XSKernel = NeonKQuantKernel<NeonIQ4XSTraits>;

#endif  // CAIRN_ARM_SIMD_TARGET

}  // namespace HWY_NAMESPACE
}  // namespace cairn::kernels
HWY_AFTER_NAMESPACE();

#endif  // toggle guard
