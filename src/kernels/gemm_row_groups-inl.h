// AVX-512 VNNI (AVX3_DL) kernels for Q4_K, Q5_K, Q6_K, Q2_K, Q3_K, IQ4_XS
// (natural Q8K activations) and Q8_0, Q5_0, Q4_0, IQ4_NL, Q4_1, Q5_1 (kQ8X)
// weights in the row-group layout
// (row_groups.h), up to 8 activation rows per call (matmul.cc tiles wider
// products, prefill included). Included by matmul.cc once per Highway
// target; only AVX3_DL defines them (RowGroupKernel<type>::kAvailable).
//
// Every 32-bit lane belongs to one weight row from the first load to the
// final store: plane k of a super-block holds word k of the 16 rows' blocks,
// so one vpdpbusd with an activation word broadcast to all lanes adds four
// level x activation products to each of the 16 rows. Per super-block and 16
// rows: Q4_K 32 plane loads, 64 masks (low nibble & 0x0F, high nibble kept
// in place & 0xF0, i.e. 16x the level), 64 vpdpbusd, 8 vpmulld and about 20
// operations for the scales of all 16 rows; the per-row cost of the natural
// layout's kernel (scale unpacking, sub-block scale spreading, horizontal
// sums: ~50 operations per row and super-block) becomes about 11.
//
// The integers and float operations are dot_ref.h's, so the results are
// bit-identical to MatMulReference (and to the natural-layout kernels):
//   Q4_K (Q5_K: the same with levels 0..31, a fifth bit from the qh planes, and
//     plain multipliers): sumi = sum_j sc_j dot_j, exact in int32 as 16 sumi = sum over even j
//     of (16 sc_j) dot_j + sum over odd j of sc_j (16 dot_j) (the high
//     nibbles are used in place: 16x their level), then an exact shift right
//     by 4 (|16 sumi| <= 16 * 8 * 63 * 32 * 15 * 128 < 2^31);
//     summ = sum_j m_j (bsum_2j + bsum_2j+1), as int16 pairs with vpdpwssd;
//     lane 2k += (dx * d) * float(sumi), lane 2k + 1 += -(dx * dmin) *
//     float(summ) (fused, one rounding each, as the reference), k = i mod 4.
//   Q6_K: sumi = sum_k sc_k dot_k - 32 sum_k sc_k bsum_k (levels 0..63), lane
//     2k += (dx * d) * float(sumi); odd lanes stay +0.
//   Result: ReduceLanes8 of each row's eight lanes, done on 16 rows at once.
#if defined(CAIRN_KERNELS_GEMM_ROW_GROUPS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CAIRN_KERNELS_GEMM_ROW_GROUPS_INL_H_
#undef CAIRN_KERNELS_GEMM_ROW_GROUPS_INL_H_
#else
#define CAIRN_KERNELS_GEMM_ROW_GROUPS_INL_H_
#endif

#include <hwy/highway.h>

#include <array>
#include <cstdint>
#include <cstring>

#include "core/dtype.h"
#include "kernels/quant_act.h"
#include "kernels/quant_blocks.h"
#include "kernels/row_groups.h"

HWY_BEFORE_NAMESPACE();
namespace cairn::kernels {
namespace HWY_NAMESPACE {

// Kernels for the row-group layout: RowGroupKernel<type>::kAvailable, and
// Run<NB>(group, blocks, acts, out) writing out[b * 16 + r] for NB <= 8
// activation rows.
template <DType kType>
struct RowGroupKernel {
  static constexpr bool kAvailable = false;
};

inline constexpr int kRowGroupMaxActs = 8;

#if HWY_TARGET == HWY_AVX3_DL

namespace row_groups {

// How far ahead of the block being computed the kernels prefetch, in bytes
// of the group's stream, rounded up to whole blocks (PrefetchBytes is
// gemm_kquant-inl.h's). The hardware prefetchers alone streamed Q6_K's planes
// at half the bandwidth. The distance must cover the memory latency at the
// kernel's pace: a Q4_0 group block (16 rows x 18 bytes) takes a few
// nanoseconds, and prefetching 4 blocks (1152 bytes) ahead left the 0.5B
// Qwen2.5 draft (narrowed to q4_0) at 180-188 tok/s where 4.6-9.2 KB ahead
// gave 216-222 (Zen 5, 2 threads, decode).
inline constexpr size_t kRowGroupPrefetchDistance = 6144;

template <size_t kGroupBlockBytes>
inline constexpr size_t kRowGroupPrefetchAhead =
    (kRowGroupPrefetchDistance + kGroupBlockBytes - 1) / kGroupBlockBytes * kGroupBlockBytes;

HWY_INLINE __m512i Plane(const uint8_t* p, int k) { return _mm512_loadu_si512(p + 64 * k); }

// The 32-bit word at p in all 16 lanes (folded into vpdpbusd as a broadcast operand).
HWY_INLINE __m512i Word(const int8_t* p) {
  int32_t w;
  std::memcpy(&w, p, 4);
  return _mm512_set1_epi32(w);
}

HWY_INLINE __m512i Bytes(uint32_t v) { return _mm512_set1_epi32(static_cast<int32_t>(v)); }

// (OrMasked, a | (b & mask), is gemm_kquant_avx512-inl.h's.)

// Dword q (< 8) of v in all 16 lanes.
HWY_INLINE __m512i LaneOf(__m256i v, int q) {
  return _mm512_permutexvar_epi32(_mm512_set1_epi32(q), _mm512_castsi256_si512(v));
}

// The 16 words of a super-block's bsums, word-shuffled within each 128-bit
// half so that dword 2m = (w[4m], w[4m + 2]), dword 2m + 1 = (w[4m + 1],
// w[4m + 3]) (m < 4; w the words in order): the int16 pairs vpdpwssd
// multiplies with (s[4m], s[4m + 2]) and (s[4m + 1], s[4m + 3]).
HWY_INLINE __m256i PairWords(__m256i w) {
  const __m256i order = _mm256_setr_epi8(0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15,  //
                                         0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15);
  return _mm256_shuffle_epi8(w, order);
}

// Every lane accumulator of every activation row to +0.
template <int NB, int L>
HWY_INLINE void ZeroLanes(__m512 (&lanes)[NB][L]) {
  for (int b = 0; b < NB; ++b) {
    for (int l = 0; l < L; ++l) lanes[b][l] = _mm512_setzero_ps();
  }
}

// out[b * 16 + r] = ReduceLanes8 of row r's lanes of activation row b, with
// lanes[b][l] holding lane l of the 16 rows.
template <int NB>
HWY_INLINE void StoreRows(const __m512 lanes[][8], float* out) {
  for (int b = 0; b < NB; ++b) {
    const __m512* v = lanes[b];
    const __m512 s0 = _mm512_add_ps(v[0], v[4]), s1 = _mm512_add_ps(v[1], v[5]);
    const __m512 s2 = _mm512_add_ps(v[2], v[6]), s3 = _mm512_add_ps(v[3], v[7]);
    _mm512_storeu_ps(out + 16 * b, _mm512_add_ps(_mm512_add_ps(s0, s2), _mm512_add_ps(s1, s3)));
  }
}

// The super-block kernels' frame: lanes[b][l] (dot_ref.h's eight lanes,
// 16 rows per vector, of activation row b) start at +0; body(blk, i, lanes)
// runs per super-block i at blk with the next one prefetched; then out[b *
// 16 + r] = ReduceLanes8 of row r.
template <int NB, size_t kGroupBlockBytes, class Body>
HWY_INLINE void ForEachSuperBlock(const uint8_t* group, int64_t blocks, float* out, const Body& body) {
  static_assert(NB >= 1 && NB <= kRowGroupMaxActs);
  __m512 lanes[NB][8];
  ZeroLanes(lanes);
  for (int64_t i = 0; i < blocks; ++i) {
    const uint8_t* blk = group + i * kGroupBlockBytes;
    PrefetchBytes(blk + kRowGroupPrefetchAhead<kGroupBlockBytes>, kGroupBlockBytes);
    body(blk, i, lanes);
  }
  StoreRows<NB>(lanes, out);
}

// The IQ4_NL codebook + 128 (unsigned bytes for vpdpbusd) in every 128-bit
// lane, for vpshufb with nibble indices (IQ4_NL, IQ4_XS).
HWY_INLINE __m512i ShiftedCodebook() {
  static constexpr std::array<uint8_t, 16> kShifted = [] {
    std::array<uint8_t, 16> t{};
    for (int v = 0; v < 16; ++v) t[v] = static_cast<uint8_t>(kIQ4NLValues[v] + 128);
    return t;
  }();
  return _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kShifted.data())));
}

// Lanes q of the bsum pairs: dword 2m = (bsum_4m, bsum_4m+2), 2m + 1 =
// (bsum_4m+1, bsum_4m+3) (m < 4), for vpdpwssd against int16 scale pairs.
HWY_INLINE __m256i BsumPairs(const ActRow& x, int64_t i) {
  return PairWords(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.bsums + i * 16)));
}

// sum_k pairs[k] . bsums (16 sub-blocks of 16): the eight int16 pair vectors
// (s_4m, s_4m+2), (s_4m+1, s_4m+3) against BsumPairs.
HWY_INLINE __m512i PairedBsumDot(const __m512i pairs[8], __m256i bsum_pairs) {
  __m512i sum = _mm512_setzero_si512();
  for (int q = 0; q < 8; ++q) sum = _mm512_dpwssd_epi32(sum, pairs[q], LaneOf(bsum_pairs, q));
  return sum;
}

// sum_j v_j B_j over the eight 32-element sub-blocks of super-block i, B_j =
// bsum_2j + bsum_2j+1, with v as int16 pairs (v0, v2), (v1, v3), (v4, v6),
// (v5, v7) (Q4_K / Q5_K mins, IQ4_XS scales).
HWY_INLINE __m512i PairedSubBlock32Dot(const __m512i pairs[4], const ActRow& x, int64_t i) {
  const __m256i bsums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.bsums + i * 16));
  const __m256i sub = _mm256_madd_epi16(bsums, _mm256_set1_epi16(1));
  const __m256i b = PairWords(_mm256_packs_epi32(sub, _mm256_setzero_si256()));
  __m512i sum = _mm512_dpwssd_epi32(_mm512_setzero_si512(), pairs[0], LaneOf(b, 0));
  sum = _mm512_dpwssd_epi32(sum, pairs[1], LaneOf(b, 1));
  sum = _mm512_dpwssd_epi32(sum, pairs[2], LaneOf(b, 4));
  return _mm512_dpwssd_epi32(sum, pairs[3], LaneOf(b, 5));
}

// Signed scale bytes (four per lane: sub-blocks 4p .. 4p + 3 of plane p) as
// int32 per sub-block (scale[4p + m]) and as the int16 pairs of PairedBsumDot.
HWY_INLINE void SpreadScaleBytes(const __m512i bytes[4], __m512i scale[16], __m512i pairs[8]) {
  for (int p = 0; p < 4; ++p) {
    const __m512i q = bytes[p];
    scale[4 * p + 0] = _mm512_srai_epi32(_mm512_slli_epi32(q, 24), 24);
    scale[4 * p + 1] = _mm512_srai_epi32(_mm512_slli_epi32(q, 16), 24);
    scale[4 * p + 2] = _mm512_srai_epi32(_mm512_slli_epi32(q, 8), 24);
    scale[4 * p + 3] = _mm512_srai_epi32(q, 24);
    pairs[2 * p] = _mm512_srai_epi16(_mm512_slli_epi16(q, 8), 8);
    pairs[2 * p + 1] = _mm512_srai_epi16(q, 8);
  }
}

}  // namespace row_groups

// Q4_K and Q5_K (kFiveBit): planes 0 = [d | dmin], 1..3 = scales, then
// Q5_K's 8 qh planes, then the 32 qs planes.
template <bool kFiveBit>
struct ScaleMinRowGroupKernel {
  static constexpr bool kAvailable = true;
  static constexpr size_t kGroupBlockBytes = kGroupRows * (kFiveBit ? 176 : 144);
  static constexpr int kQsPlane = kFiveBit ? 12 : 4;

  template <int NB>
  static void Run(const uint8_t* group, int64_t blocks, const ActRow* acts, float* out) {
    using namespace row_groups;
    const __m512i low4 = Bytes(0x0F0F0F0F), high4 = Bytes(0xF0F0F0F0), bit4 = Bytes(0x10101010);
    ForEachSuperBlock<NB, kGroupBlockBytes>(group, blocks, out, [&](const uint8_t* blk, int64_t i,
                                                                     __m512 (&lanes)[NB][8]) {
      // Plane 0: [d | dmin] (F16) of each row; planes 1..3: the 12 scale bytes.
      const __m512i dd = Plane(blk, 0);
      const __m512 d = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(dd));
      const __m512 dmin = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(dd, 16)));
      const __m512i p1 = Plane(blk, 1), p2 = Plane(blk, 2), p3 = Plane(blk, 3);
      const __m512i six = Bytes(0x3F3F3F3F), top2 = Bytes(0x30303030);
      // Bytes m of each lane: scale (mins) m of 0..3 and 4..7 (UnpackKScales's 64-bit form, per lane).
      const __m512i sc03 = _mm512_and_si512(p1, six);
      const __m512i mn03 = _mm512_and_si512(p2, six);
      const __m512i sc47 = OrMasked(_mm512_and_si512(p3, low4), _mm512_srli_epi32(p1, 2), top2);
      const __m512i mn47 =
          OrMasked(_mm512_and_si512(_mm512_srli_epi32(p3, 4), low4), _mm512_srli_epi32(p2, 2), top2);
      // Multipliers of sub-block j. Q4_K: 16 sc_j for even j (low nibbles), sc_j for odd j (high nibbles
      // used in place: 16x the level). Q5_K: sc_j (levels 0..31 shifted down).
      const __m512i byte = _mm512_set1_epi32(0xFF), byte16 = _mm512_set1_epi32(0xFF0);
      __m512i scale[8];
      for (int h = 0; h < 2; ++h) {
        const __m512i sc = h == 0 ? sc03 : sc47;
        if constexpr (kFiveBit) {
          scale[4 * h + 0] = _mm512_and_si512(sc, byte);
          scale[4 * h + 2] = _mm512_and_si512(_mm512_srli_epi32(sc, 16), byte);
        } else {
          scale[4 * h + 0] = _mm512_and_si512(_mm512_slli_epi32(sc, 4), byte16);
          scale[4 * h + 2] = _mm512_and_si512(_mm512_srli_epi32(sc, 12), byte16);
        }
        scale[4 * h + 1] = _mm512_and_si512(_mm512_srli_epi32(sc, 8), byte);
        scale[4 * h + 3] = _mm512_srli_epi32(sc, 24);
      }
      // Mins as int16 pairs (m0, m2), (m1, m3), (m4, m6), (m5, m7).
      const __m512i word = _mm512_set1_epi32(0x00FF00FF);
      const __m512i min_pairs[4] = {_mm512_and_si512(mn03, word), _mm512_and_si512(_mm512_srli_epi32(mn03, 8), word),
                                    _mm512_and_si512(mn47, word), _mm512_and_si512(_mm512_srli_epi32(mn47, 8), word)};
      __m512i sums[NB];  // per activation row: 16 sumi (Q4_K: 16 sumi, exact)
      for (int b = 0; b < NB; ++b) sums[b] = _mm512_setzero_si512();
      for (int g = 0; g < 4; ++g) {
        // qs plane 8g + k: bytes 32g + 4k .. + 3 = levels 4k .. 4k + 3 of sub-blocks 2g (low nibbles) and
        // 2g + 1 (high); Q5_K's fifth bits are bits 2g and 2g + 1 of qh plane k (qh bytes 4k .. 4k + 3).
        // The levels of qs plane k: sub-block 2g (low nibbles) and 2g + 1
        // (high nibbles; Q4_K in place, 16x the level).
        const auto levels = [&](int k, __m512i& lo, __m512i& hi) {
          const __m512i z = Plane(blk, kQsPlane + 8 * g + k);
          if constexpr (kFiveBit) {
            const __m512i qh = Plane(blk, 4 + k);
            const auto to_bit4 = [&](int bit) {  // bit `bit` of each byte moved to bit 4 (others garbage)
              return bit <= 4 ? _mm512_slli_epi32(qh, 4 - bit) : _mm512_srli_epi32(qh, bit - 4);
            };
            lo = OrMasked(_mm512_and_si512(z, low4), to_bit4(2 * g), bit4);
            hi = OrMasked(_mm512_and_si512(_mm512_srli_epi32(z, 4), low4), to_bit4(2 * g + 1), bit4);
          } else {
            lo = _mm512_and_si512(z, low4);
            hi = _mm512_and_si512(z, high4);
          }
        };
        // Q4_K at verification widths (Q5_K at width 1): plane by plane, so
        // the 2 NB vpdpbusd chains advance together in program order. Row by
        // row, each row's two chains wait on their latency: plane by plane is
        // +5-9% for Q4_K at widths 2 and 4 and +14% for Q5_K at width 1, in
        // cache; but 36% slower for Q5_K at width 4 (its qh planes).
        constexpr bool kPlaneMajor = kFiveBit ? NB == 1 : NB <= 4;
        if constexpr (kPlaneMajor) {
          __m512i dot_lo[NB], dot_hi[NB];
          for (int b = 0; b < NB; ++b) dot_lo[b] = dot_hi[b] = _mm512_setzero_si512();
          for (int k = 0; k < 8; ++k) {
            __m512i lo, hi;
            levels(k, lo, hi);
            for (int b = 0; b < NB; ++b) {
              const int8_t* x = acts[b].qs + i * 256 + 64 * g;
              dot_lo[b] = _mm512_dpbusd_epi32(dot_lo[b], lo, Word(x + 4 * k));
              dot_hi[b] = _mm512_dpbusd_epi32(dot_hi[b], hi, Word(x + 32 + 4 * k));
            }
          }
          for (int b = 0; b < NB; ++b) {
            sums[b] = _mm512_add_epi32(sums[b], _mm512_add_epi32(_mm512_mullo_epi32(dot_lo[b], scale[2 * g]),
                                                                 _mm512_mullo_epi32(dot_hi[b], scale[2 * g + 1])));
          }
        } else {
          // Otherwise the planes' levels once, then the activation rows four
          // (two) at a time: eight vpdpbusd chains in flight. Plane by plane
          // (2 NB chains) was 3-12% slower for Q4_K at width 8; row by row
          // (two chains of 8 dependent vpdpbusd) waited on their latency:
          // four rows at a time measured +15-20% at widths 16 and 64 (one
          // thread in cache, Intel Emerald Rapids; two rows: +8-10%).
          __m512i lo[8], hi[8];
          for (int k = 0; k < 8; ++k) levels(k, lo[k], hi[k]);
          constexpr int kStep = NB % 4 == 0 ? 4 : (NB % 2 == 0 ? 2 : 1);
          for (int b0 = 0; b0 < NB; b0 += kStep) {
            __m512i dot_lo[kStep], dot_hi[kStep];
            for (int t = 0; t < kStep; ++t) dot_lo[t] = dot_hi[t] = _mm512_setzero_si512();
            for (int k = 0; k < 8; ++k) {
              for (int t = 0; t < kStep; ++t) {
                const int8_t* x = acts[b0 + t].qs + i * 256 + 64 * g;
                dot_lo[t] = _mm512_dpbusd_epi32(dot_lo[t], lo[k], Word(x + 4 * k));
                dot_hi[t] = _mm512_dpbusd_epi32(dot_hi[t], hi[k], Word(x + 32 + 4 * k));
              }
            }
            for (int t = 0; t < kStep; ++t) {
              sums[b0 + t] = _mm512_add_epi32(sums[b0 + t], _mm512_add_epi32(_mm512_mullo_epi32(dot_lo[t], scale[2 * g]),
                                                                             _mm512_mullo_epi32(dot_hi[t], scale[2 * g + 1])));
            }
          }
        }
      }
      const int k2 = 2 * static_cast<int>(i % 4);
      for (int b = 0; b < NB; ++b) {
        const __m512i summ = PairedSubBlock32Dot(min_pairs, acts[b], i);
        const __m512i sumi = kFiveBit ? sums[b] : _mm512_srai_epi32(sums[b], 4);
        const __m512 dx = _mm512_set1_ps(acts[b].d[i]);
        lanes[b][k2] = _mm512_fmadd_ps(_mm512_mul_ps(dx, d), _mm512_cvtepi32_ps(sumi), lanes[b][k2]);
        lanes[b][k2 + 1] = _mm512_fnmadd_ps(_mm512_mul_ps(dx, dmin), _mm512_cvtepi32_ps(summ), lanes[b][k2 + 1]);
      }
    });
  }
};

template <>
struct RowGroupKernel<DType::kQ4_K> : ScaleMinRowGroupKernel<false> {};
template <>
struct RowGroupKernel<DType::kQ5_K> : ScaleMinRowGroupKernel<true> {};

template <>
struct RowGroupKernel<DType::kQ6_K> {
  static constexpr bool kAvailable = true;
  static constexpr size_t kGroupBlockBytes = kGroupRows * 210;

  template <int NB>
  static void Run(const uint8_t* group, int64_t blocks, const ActRow* acts, float* out) {
    using namespace row_groups;
    const __m512i low4 = Bytes(0x0F0F0F0F), bits45 = Bytes(0x30303030);
    ForEachSuperBlock<NB, kGroupBlockBytes>(group, blocks, out, [&](const uint8_t* blk, int64_t i,
                                                                     __m512 (&lanes)[NB][8]) {
      // Planes 0..31: ql, 32..47: qh, 48..51: the 16 int8 scales; then the 16 rows' F16 d.
      const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 64 * 52)));
      __m512i scale[16];
      __m512i scale_pairs[8];  // (s[4p], s[4p + 2]) and (s[4p + 1], s[4p + 3]) as int16
      const __m512i scale_bytes[4] = {Plane(blk, 48), Plane(blk, 49), Plane(blk, 50), Plane(blk, 51)};
      SpreadScaleBytes(scale_bytes, scale, scale_pairs);
      __m512i sums[NB];  // 16 sum_k sc_k dot_k per activation row
      for (int b = 0; b < NB; ++b) sums[b] = _mm512_setzero_si512();
      for (int h = 0; h < 2; ++h) {
        for (int cq = 0; cq < 2; ++cq) {
          // Chunks c = 4cq .. 4cq + 3 (levels 4c .. 4c + 3 of each 32-level quarter m of half h):
          // quarter m's levels belong to sub-block 8h + 2m + cq.
          __m512i q[4][4];  // [m][c - 4cq]
          for (int c4 = 0; c4 < 4; ++c4) {
            const int c = 4 * cq + c4;
            const __m512i a = Plane(blk, 16 * h + c), bq = Plane(blk, 16 * h + 8 + c);
            const __m512i hb = Plane(blk, 32 + 8 * h + c);
            q[0][c4] = OrMasked(_mm512_and_si512(a, low4), _mm512_slli_epi32(hb, 4), bits45);
            q[1][c4] = OrMasked(_mm512_and_si512(bq, low4), _mm512_slli_epi32(hb, 2), bits45);
            q[2][c4] = OrMasked(_mm512_and_si512(_mm512_srli_epi32(a, 4), low4), hb, bits45);
            q[3][c4] = OrMasked(_mm512_and_si512(_mm512_srli_epi32(bq, 4), low4), _mm512_srli_epi32(hb, 2), bits45);
          }
          for (int b = 0; b < NB; ++b) {
            const int8_t* x = acts[b].qs + i * 256 + 128 * h + 16 * cq;
            __m512i acc = sums[b];
            for (int m = 0; m < 4; ++m) {
              __m512i dot = _mm512_setzero_si512();
              for (int c4 = 0; c4 < 4; ++c4) dot = _mm512_dpbusd_epi32(dot, q[m][c4], Word(x + 32 * m + 4 * c4));
              acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(dot, scale[8 * h + 2 * m + cq]));
            }
            sums[b] = acc;
          }
        }
      }
      const int k2 = 2 * static_cast<int>(i % 4);
      for (int b = 0; b < NB; ++b) {
        const __m512i offset = PairedBsumDot(scale_pairs, BsumPairs(acts[b], i));
        const __m512i sumi = _mm512_sub_epi32(sums[b], _mm512_slli_epi32(offset, 5));
        const __m512 dx = _mm512_set1_ps(acts[b].d[i]);
        lanes[b][k2] = _mm512_fmadd_ps(_mm512_mul_ps(dx, d), _mm512_cvtepi32_ps(sumi), lanes[b][k2]);
      }
    });
  }
};

// The low-bit K-quants on natural Q8K activations (one FMA per super-block
// into dot_ref.h's lanes, as the types above).
namespace row_groups {

// Q2_K / Q3_K levels: element 128h + 32j + l (l = 4c .. 4c + 3) is bits 2j of
// qs plane qs_plane + 8h + c (Q3_K: plus 4 x bit 4h + j of hmask plane c,
// i.e. the level + 4, 0..7); it belongs to sub-block 8h + 2j + c / 4.
// sums[b] += sum_k scale[k] * dot(levels_k, x_k) over the super-block.
template <int NB, bool kHighBit>
HWY_INLINE void TwoBitSums(const uint8_t* blk, int qs_plane, const __m512i scale[16], const ActRow* acts, int64_t i,
                           __m512i sums[NB]) {
  const __m512i two_bits = Bytes(0x03030303), bit2 = Bytes(0x04040404);
  for (int h = 0; h < 2; ++h) {
    for (int cq = 0; cq < 2; ++cq) {
      __m512i u[4][4];  // [j][c - 4cq]
      for (int c4 = 0; c4 < 4; ++c4) {
        const int c = 4 * cq + c4;
        const __m512i z = Plane(blk, qs_plane + 8 * h + c);
        for (int j = 0; j < 4; ++j) {
          u[j][c4] = _mm512_and_si512(_mm512_srli_epi32(z, 2 * j), two_bits);
          if constexpr (kHighBit) {
            const __m512i hm = Plane(blk, c);
            const int bit = 4 * h + j;  // moved to bit 2 (within each byte: shifts <= 5)
            const __m512i moved = bit >= 2 ? _mm512_srli_epi32(hm, bit - 2) : _mm512_slli_epi32(hm, 2 - bit);
            u[j][c4] = OrMasked(u[j][c4], moved, bit2);
          }
        }
      }
      for (int b = 0; b < NB; ++b) {
        const int8_t* x = acts[b].qs + i * 256 + 128 * h + 16 * cq;
        __m512i acc = sums[b];
        for (int j = 0; j < 4; ++j) {
          __m512i dot = _mm512_setzero_si512();
          for (int c4 = 0; c4 < 4; ++c4) dot = _mm512_dpbusd_epi32(dot, u[j][c4], Word(x + 32 * j + 4 * c4));
          acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(dot, scale[8 * h + 2 * j + cq]));
        }
        sums[b] = acc;
      }
    }
  }
}

}  // namespace row_groups

// Q2_K: planes 0..3 = the 16 scale bytes (low nibble scale, high nibble
// min), 4..19 = qs, 20 = [d | dmin]. sumi = sum_k sc_k dot_k (levels
// 0..3), summ = sum_k m_k bsum_k; lanes 2k / 2k + 1 as Q4_K.
template <>
struct RowGroupKernel<DType::kQ2_K> {
  static constexpr bool kAvailable = true;
  static constexpr size_t kGroupBlockBytes = kGroupRows * 84;

  template <int NB>
  static void Run(const uint8_t* group, int64_t blocks, const ActRow* acts, float* out) {
    using namespace row_groups;
    ForEachSuperBlock<NB, kGroupBlockBytes>(group, blocks, out, [&](const uint8_t* blk, int64_t i,
                                                                     __m512 (&lanes)[NB][8]) {
      const __m512i dd = Plane(blk, 20);
      const __m512 d = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(dd));
      const __m512 dmin = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(dd, 16)));
      __m512i sc_bytes[4], scale[16], unused_pairs[8], min_pairs[8];
      for (int p = 0; p < 4; ++p) {
        const __m512i z = Plane(blk, p);
        sc_bytes[p] = _mm512_and_si512(z, Bytes(0x0F0F0F0F));
        // (m_4p, m_4p+2) and (m_4p+1, m_4p+3) as int16: the high nibbles of bytes 0, 2 and 1, 3.
        min_pairs[2 * p] = _mm512_and_si512(_mm512_srli_epi16(z, 4), _mm512_set1_epi32(0x000F000F));
        min_pairs[2 * p + 1] = _mm512_srli_epi16(z, 12);
      }
      SpreadScaleBytes(sc_bytes, scale, unused_pairs);
      __m512i sums[NB];
      for (int b = 0; b < NB; ++b) sums[b] = _mm512_setzero_si512();
      TwoBitSums<NB, false>(blk, 4, scale, acts, i, sums);
      const int k2 = 2 * static_cast<int>(i % 4);
      for (int b = 0; b < NB; ++b) {
        const __m512i summ = PairedBsumDot(min_pairs, BsumPairs(acts[b], i));
        const __m512 dx = _mm512_set1_ps(acts[b].d[i]);
        lanes[b][k2] = _mm512_fmadd_ps(_mm512_mul_ps(dx, d), _mm512_cvtepi32_ps(sums[b]), lanes[b][k2]);
        lanes[b][k2 + 1] = _mm512_fnmadd_ps(_mm512_mul_ps(dx, dmin), _mm512_cvtepi32_ps(summ), lanes[b][k2 + 1]);
      }
    });
  }
};

// Q3_K: planes 0..7 = hmask, 8..23 = qs, 24..26 = the 12 scale bytes, then
// the 16 rows' F16 d. Levels u = v + 4 (0..7), so sumi = sum_k s_k dot(u_k,
// x_k) - 4 sum_k s_k bsum_k (exact); lane 2k as Q6_K.
template <>
struct RowGroupKernel<DType::kQ3_K> {
  static constexpr bool kAvailable = true;
  static constexpr size_t kGroupBlockBytes = kGroupRows * 110;

  template <int NB>
  static void Run(const uint8_t* group, int64_t blocks, const ActRow* acts, float* out) {
    using namespace row_groups;
    const __m512i low4 = Bytes(0x0F0F0F0F);
    ForEachSuperBlock<NB, kGroupBlockBytes>(group, blocks, out, [&](const uint8_t* blk, int64_t i,
                                                                     __m512 (&lanes)[NB][8]) {
      const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 64 * 27)));
      // Scale bytes 0..3 / 4..7 (low nibbles: sub-blocks 0..7, high: 8..15), 8..11 (two high bits of
      // sub-blocks m, m + 4, m + 8, m + 12 in byte 8 + m): s_k + 32 = low4 | high2 << 4.
      const __m512i b03 = Plane(blk, 24), b47 = Plane(blk, 25), high = Plane(blk, 26);
      const __m512i low[4] = {_mm512_and_si512(b03, low4), _mm512_and_si512(b47, low4),
                              _mm512_and_si512(_mm512_srli_epi32(b03, 4), low4),
                              _mm512_and_si512(_mm512_srli_epi32(b47, 4), low4)};
      __m512i sc_bytes[4], scale[16], pairs[8];
      for (int p = 0; p < 4; ++p) {
        // Bits 2p, 2p + 1 of each high byte to bits 4, 5.
        const __m512i top = 2 * p <= 4 ? _mm512_slli_epi32(high, 4 - 2 * p) : _mm512_srli_epi32(high, 2 * p - 4);
        sc_bytes[p] = _mm512_sub_epi8(OrMasked(low[p], top, Bytes(0x30303030)), Bytes(0x20202020));
      }
      SpreadScaleBytes(sc_bytes, scale, pairs);
      __m512i sums[NB];
      for (int b = 0; b < NB; ++b) sums[b] = _mm512_setzero_si512();
      TwoBitSums<NB, true>(blk, 8, scale, acts, i, sums);
      const int k2 = 2 * static_cast<int>(i % 4);
      for (int b = 0; b < NB; ++b) {
        const __m512i offset = PairedBsumDot(pairs, BsumPairs(acts[b], i));
        const __m512i sumi = _mm512_sub_epi32(sums[b], _mm512_slli_epi32(offset, 2));
        const __m512 dx = _mm512_set1_ps(acts[b].d[i]);
        lanes[b][k2] = _mm512_fmadd_ps(_mm512_mul_ps(dx, d), _mm512_cvtepi32_ps(sumi), lanes[b][k2]);
      }
    });
  }
};

// IQ4_XS: plane 0 = [d | scales_h], 1 = scales_l, 2 + 4ib + k = qs bytes
// 16ib + 4k .. + 3 (low nibbles: levels 32ib + 4k .., high: 32ib + 16 + 4k ..).
// Levels are codebook values + 128 (one byte shuffle), so sumi = sum_ib
// s_ib dot(u_ib, x_ib) - 128 sum_ib s_ib (bsum_2ib + bsum_2ib+1); lane 2k as
// Q6_K.
template <>
struct RowGroupKernel<DType::kIQ4_XS> {
  static constexpr bool kAvailable = true;
  static constexpr size_t kGroupBlockBytes = kGroupRows * 136;

  template <int NB>
  static void Run(const uint8_t* group, int64_t blocks, const ActRow* acts, float* out) {
    using namespace row_groups;
    const __m512i table = ShiftedCodebook();
    const __m512i low4 = Bytes(0x0F0F0F0F), nibble = _mm512_set1_epi32(0xF), bits45 = _mm512_set1_epi32(0x30);
    ForEachSuperBlock<NB, kGroupBlockBytes>(group, blocks, out, [&](const uint8_t* blk, int64_t i,
                                                                     __m512 (&lanes)[NB][8]) {
      const __m512i dh = Plane(blk, 0), sl = Plane(blk, 1);
      const __m512 d = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(dh));
      // s_ib = (nibble ib of scales_l | bits 2ib, 2ib + 1 of scales_h << 4) - 32.
      __m512i scale[8];
      for (int ib = 0; ib < 8; ++ib) {
        const __m512i lo = _mm512_and_si512(_mm512_srli_epi32(sl, 4 * ib), nibble);
        scale[ib] = _mm512_sub_epi32(OrMasked(lo, _mm512_srli_epi32(dh, 12 + 2 * ib), bits45), _mm512_set1_epi32(32));
      }
      // (s0, s2), (s1, s3), (s4, s6), (s5, s7) as int16 pairs.
      const __m512i low16 = _mm512_set1_epi32(0xFFFF);
      const __m512i pairs[4] = {OrMasked(_mm512_slli_epi32(scale[2], 16), scale[0], low16),
                                OrMasked(_mm512_slli_epi32(scale[3], 16), scale[1], low16),
                                OrMasked(_mm512_slli_epi32(scale[6], 16), scale[4], low16),
                                OrMasked(_mm512_slli_epi32(scale[7], 16), scale[5], low16)};
      __m512i sums[NB];
      for (int b = 0; b < NB; ++b) sums[b] = _mm512_setzero_si512();
      for (int ib = 0; ib < 8; ++ib) {
        __m512i lo[4], hi[4];
        for (int k = 0; k < 4; ++k) {
          const __m512i z = Plane(blk, 2 + 4 * ib + k);
          lo[k] = _mm512_shuffle_epi8(table, _mm512_and_si512(z, low4));
          hi[k] = _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi32(z, 4), low4));
        }
        for (int b = 0; b < NB; ++b) {
          const int8_t* x = acts[b].qs + i * 256 + 32 * ib;
          __m512i dot = _mm512_setzero_si512();
          for (int k = 0; k < 4; ++k) {
            dot = _mm512_dpbusd_epi32(dot, lo[k], Word(x + 4 * k));
            dot = _mm512_dpbusd_epi32(dot, hi[k], Word(x + 16 + 4 * k));
          }
          sums[b] = _mm512_add_epi32(sums[b], _mm512_mullo_epi32(dot, scale[ib]));
        }
      }
      const int k2 = 2 * static_cast<int>(i % 4);
      for (int b = 0; b < NB; ++b) {
        const __m512i offset = PairedSubBlock32Dot(pairs, acts[b], i);
        const __m512i sumi = _mm512_sub_epi32(sums[b], _mm512_slli_epi32(offset, 7));
        const __m512 dx = _mm512_set1_ps(acts[b].d[i]);
        lanes[b][k2] = _mm512_fmadd_ps(_mm512_mul_ps(dx, d), _mm512_cvtepi32_ps(sumi), lanes[b][k2]);
      }
    });
  }
};

// 32-element block types against kQ8X activations: per block and 16 rows,
// eight planes of unsigned levels (Q8_0: q + 128, one XOR; Q5_0 / Q5_1: the
// 5-bit level, its fifth bits picked from the qh plane with one
// vpshufbitqmb and added under the mask; Q4_0 / Q4_1: the nibble; IQ4_NL: the
// codebook value + 128, one byte shuffle) and one vpdpbusd per plane and
// activation row. Signed types start the sum from the activations' offset sum
// -128 sum(x) scaled to their offset (exact shifts: Q5_0 -16, Q4_0 -8
// sum(x)); Q4_1 / Q5_1 levels are unsigned and start from 0. Block k then
// takes dot_ref.h's single FMA into lane k mod 16: fma(float(isum), d_w *
// dx, acc[k mod 16]), 16 rows per instruction, and ReduceLanes16 at the
// end; Q4_1 / Q5_1 add their min lanes, fma(m_k, s_k, accm[k mod 8]) and
// ReduceLanes8.
namespace row_groups {

// Control bytes for vpshufbitqmb: byte i (row i / 4, level i % 4) selects bit
// first + i % 4 of its row's 32 qh bits (the row's dword within the qword).
template <int kFirst>
HWY_INLINE __m512i FifthBitIndex() {
  static constexpr std::array<uint8_t, 64> kIndex = [] {
    std::array<uint8_t, 64> index{};
    for (int i = 0; i < 64; ++i) index[i] = static_cast<uint8_t>(32 * ((i / 4) % 2) + kFirst + i % 4);
    return index;
  }();
  return _mm512_loadu_si512(kIndex.data());
}

// The 16 rows' F32 scales of a block whose 32-byte head holds their F16 d.
HWY_INLINE __m512 HeadScales(const uint8_t* blk) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk)));
}

// Q4_1 / Q5_1 plane 0 holds each row's [d | m] word: the low or high F16 of
// the 16 words as F32.
HWY_INLINE __m512 LowHalves(__m512i words) { return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(words)); }
HWY_INLINE __m512 HighHalves(__m512i words) {
  return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(words, 16)));
}

// u[t] = low nibbles (levels 4t .. 4t + 3), u[4 + t] = high nibbles (16 + 4t ..)
// of the four qs planes at `planes`.
HWY_INLINE void NibblePlanes(const uint8_t* planes, __m512i u[8]) {
  const __m512i low4 = Bytes(0x0F0F0F0F);
  for (int t = 0; t < 4; ++t) {
    const __m512i z = Plane(planes, t);
    u[t] = _mm512_and_si512(z, low4);
    u[4 + t] = _mm512_and_si512(_mm512_srli_epi32(z, 4), low4);
  }
}

// The 5-bit levels 0..31 from the qh plane at `qh_plane` and the four qs
// planes after it (Q5_0: q + 16; Q5_1: q).
HWY_INLINE void FiveBitPlanes(const uint8_t* qh_plane, __m512i u[8]) {
  const __m512i bit4 = Bytes(0x10101010);
  const __m512i qh = Plane(qh_plane, 0);
  const __m512i index[8] = {FifthBitIndex<0>(),  FifthBitIndex<4>(),  FifthBitIndex<8>(),  FifthBitIndex<12>(),
                            FifthBitIndex<16>(), FifthBitIndex<20>(), FifthBitIndex<24>(), FifthBitIndex<28>()};
  NibblePlanes(qh_plane + 64, u);
  for (int t = 0; t < 8; ++t) u[t] = _mm512_mask_add_epi8(u[t], _mm512_bitshuffle_epi64_mask(qh, index[t]), u[t], bit4);
}

// Policies: Load(blk, u, dw[, m]) unpacks block blk of the 16 rows (planes
// as row_groups.h lays them out); kOffsetShift scales the offset sum
// (-128 sum(x)) to the levels' offset; kHasMin types have no offset.
struct Q8_0Planes {
  static constexpr size_t kBlockBytes = 34;
  static constexpr int kOffsetShift = 0;  // offset -128 sum(x)
  static constexpr bool kHasMin = false;
  // u[w] = levels 4w .. 4w + 3 (+ 128) of the 16 rows.
  static HWY_INLINE void Load(const uint8_t* blk, __m512i u[8], __m512& dw) {
    dw = HeadScales(blk);
    for (int w = 0; w < 8; ++w) u[w] = _mm512_xor_si512(Plane(blk + 32, w), Bytes(0x80808080));
  }
};

struct Q4_0Planes {
  static constexpr size_t kBlockBytes = 18;
  static constexpr int kOffsetShift = 4;  // offset -8 sum(x)
  static constexpr bool kHasMin = false;
  // Plane t: qs bytes 4t .. 4t + 3: low nibbles = levels 4t .., high = 16 + 4t ...
  static HWY_INLINE void Load(const uint8_t* blk, __m512i u[8], __m512& dw) {
    dw = HeadScales(blk);
    NibblePlanes(blk + 32, u);
  }
};

struct Q5_0Planes {
  static constexpr size_t kBlockBytes = 22;
  static constexpr int kOffsetShift = 3;  // offset -16 sum(x)
  static constexpr bool kHasMin = false;
  // Plane 0: qh (bit j = fifth bit of level j); planes 1 + t: qs as Q4_0.
  static HWY_INLINE void Load(const uint8_t* blk, __m512i u[8], __m512& dw) {
    dw = HeadScales(blk);
    FiveBitPlanes(blk + 32, u);
  }
};

struct IQ4NLPlanes {
  static constexpr size_t kBlockBytes = 18;
  static constexpr int kOffsetShift = 0;  // levels are codebook values + 128
  static constexpr bool kHasMin = false;
  // Planes as Q4_0; each nibble indexes the codebook (values -127..113,
  // stored + 128 so that vpdpbusd reads them as unsigned bytes).
  static HWY_INLINE void Load(const uint8_t* blk, __m512i u[8], __m512& dw) {
    const __m512i table = ShiftedCodebook();
    dw = HeadScales(blk);
    NibblePlanes(blk + 32, u);
    for (int t = 0; t < 8; ++t) u[t] = _mm512_shuffle_epi8(table, u[t]);
  }
};

struct Q4_1Planes {
  static constexpr size_t kBlockBytes = 20;
  static constexpr bool kHasMin = true;
  // Plane 0: [d | m]; planes 1..4: qs (unsigned nibbles).
  static HWY_INLINE void Load(const uint8_t* blk, __m512i u[8], __m512& dw, __m512& m) {
    const __m512i dm = Plane(blk, 0);
    dw = LowHalves(dm);
    m = HighHalves(dm);
    NibblePlanes(blk + 64, u);
  }
};

struct Q5_1Planes {
  static constexpr size_t kBlockBytes = 24;
  static constexpr bool kHasMin = true;
  // Plane 0: [d | m]; plane 1: qh; planes 2..5: qs.
  static HWY_INLINE void Load(const uint8_t* blk, __m512i u[8], __m512& dw, __m512& m) {
    const __m512i dm = Plane(blk, 0);
    dw = LowHalves(dm);
    m = HighHalves(dm);
    FiveBitPlanes(blk + 64, u);
  }
};

}  // namespace row_groups

template <class Planes>
struct Blocks32RowGroupKernel {
  static constexpr bool kAvailable = true;
  static constexpr size_t kGroupBlockBytes = kGroupRows * Planes::kBlockBytes;

  template <int NB>
  static void Run(const uint8_t* group, int64_t blocks, const ActRow* acts, float* out) {
    using namespace row_groups;
    static_assert(NB >= 1 && NB <= kRowGroupMaxActs);
    __m512 lanes[NB][16];
    ZeroLanes(lanes);
    // Min lanes (Q4_1 / Q5_1): accm[k mod 8] of the 16 rows per activation row.
    __m512 min_lanes[Planes::kHasMin ? NB : 1][8];
    ZeroLanes(min_lanes);
    for (int64_t k = 0; k < blocks; ++k) {
      const uint8_t* blk = group + k * kGroupBlockBytes;
      PrefetchBytes(blk + kRowGroupPrefetchAhead<kGroupBlockBytes>, kGroupBlockBytes);
      __m512i u[8];
      __m512 dw;
      [[maybe_unused]] __m512 m;
      if constexpr (Planes::kHasMin) {
        Planes::Load(blk, u, dw, m);
      } else {
        Planes::Load(blk, u, dw);
      }
      const int lane = static_cast<int>(k % 16);
      for (int b = 0; b < NB; ++b) {
        // kQ8X: word w of block k at 512 (k / 16) + 64 w + 4 (k % 16).
        const int8_t* x = acts[b].qs + 512 * (k / 16) + 4 * lane;
        __m512i isum;
        if constexpr (Planes::kHasMin) {
          isum = _mm512_setzero_si512();
        } else {
          isum = _mm512_set1_epi32(acts[b].offset_sums[k] >> Planes::kOffsetShift);
        }
        for (int w = 0; w < 8; ++w) isum = _mm512_dpbusd_epi32(isum, u[w], Word(x + 64 * w));
        const __m512 scale = _mm512_mul_ps(dw, _mm512_set1_ps(acts[b].d[k]));
        lanes[b][lane] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), scale, lanes[b][lane]);
        if constexpr (Planes::kHasMin) {
          min_lanes[b][k % 8] = _mm512_fmadd_ps(m, _mm512_set1_ps(acts[b].s[k]), min_lanes[b][k % 8]);
        }
      }
    }
    for (int b = 0; b < NB; ++b) {
      // ReduceLanes16: r_i = acc_i + acc_(i+8), then ReduceLanes8.
      __m512 r[8];
      for (int i = 0; i < 8; ++i) r[i] = _mm512_add_ps(lanes[b][i], lanes[b][i + 8]);
      __m512 sum = ReduceLanes8Of16Rows(r);
      if constexpr (Planes::kHasMin) sum = _mm512_add_ps(sum, ReduceLanes8Of16Rows(min_lanes[b]));
      _mm512_storeu_ps(out + 16 * b, sum);
    }
  }

  // ReduceLanes8 of each of the 16 rows: ((v0 + v4) + (v2 + v6)) + ((v1 + v5) + (v3 + v7)).
  static HWY_INLINE __m512 ReduceLanes8Of16Rows(const __m512 v[8]) {
    const __m512 s0 = _mm512_add_ps(v[0], v[4]), s1 = _mm512_add_ps(v[1], v[5]);
    const __m512 s2 = _mm512_add_ps(v[2], v[6]), s3 = _mm512_add_ps(v[3], v[7]);
    return _mm512_add_ps(_mm512_add_ps(s0, s2), _mm512_add_ps(s1, s3));
  }
};

template <>
struct RowGroupKernel<DType::kQ8_0> : Blocks32RowGroupKernel<row_groups::Q8_0Planes> {};
template <>
struct RowGroupKernel<DType::kQ5_0> : Blocks32RowGroupKernel<row_groups::Q5_0Planes> {};
template <>
struct RowGroupKernel<DType::kQ4_0> : Blocks32RowGroupKernel<row_groups::Q4_0Planes> {};
template <>
struct RowGroupKernel<DType::kIQ4_NL> : Blocks32RowGroupKernel<row_groups::IQ4NLPlanes> {};
template <>
struct RowGroupKernel<DType::kQ4_1> : Blocks32RowGroupKernel<row_groups::Q4_1Planes> {};
template <>
struct RowGroupKernel<DType::kQ5_1> : Blocks32RowGroupKernel<row_groups::Q5_1Planes> {};

#endif  // HWY_AVX3_DL

}  // namespace HWY_NAMESPACE
}  // namespace cairn::kernels
HWY_AFTER_NAMESPACE();

#endif  // toggle guard
