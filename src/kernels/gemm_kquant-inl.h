// Per-target integer dot kernels for K-quant weights (Q4_K, Q5_K, Q6_K)
// against Q8K activations. Included by matmul.cc once per Highway target,
// after gemm_q8-inl.h (uses its RefKernel).
//
// Per super-block the integer sums (sumi, summ of dot_ref.h) are exact, so
// any SIMD grouping gives the same integers; the F32 operations are the
// reference's: super-block i feeds lanes 2k, 2k + 1 (k = i mod 4) of eight
// lane accumulators, reduced by ReduceLanes8. x86 targets (tiles: AVX2 only,
// AVX-512 has gemm_kquant_avx512-inl.h; decode: all three):
// * widths 2..8 unpack the levels of one super-block once into eight 32-byte
//   registers and reuse them for every activation row (maddubs: unsigned
//   levels x signed activations, then madd with the 16-bit sub-block
//   scales); the int32 partial sums of four activation rows share one
//   horizontal reduction, and one FMA (lanes 2t, 2t + 1: activation row t)
//   updates the four rows' accumulators of lane pair k, kept in L1;
// * width 1 (decode) streams the levels through two registers, reduces four
//   super-blocks at once (lanes 2t, 2t + 1: super-block i + t), and folds
//   them into the eight accumulators with one vector multiply and one FMA
//   (StreamGroup / StreamGroupQ6).
// Other targets use the scalar reference.
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

// Width 1 (decode): super-blocks per step. Their integer sums share one
// horizontal reduction, their float factors one vector multiply and their
// FMAs one vector FMA (the four lane pairs of the canonical order).
inline constexpr int kStreamGroup = 4;

// Width 1: weights are prefetched this many bytes ahead of the step being
// computed (decode reads every weight byte once; about 1 KB ahead measured
// best for Q8_0 and Q4_K: docs/kernels-matmul.md).
inline constexpr int kStreamPrefetchBytes = 1152;

// Prefetches the `bytes` bytes at p (one line per 64 bytes; p need not be
// line-aligned: the next call covers a partial last line).
HWY_INLINE void PrefetchBytes(const void* p, int bytes) {
  const char* c = static_cast<const char*>(p);
  for (int off = 0; off < bytes; off += 64) _mm_prefetch(c + off, _MM_HINT_T0);
}

// Width 1: folds the num_blocks super-blocks of one row into the eight lane
// accumulators, kStreamGroup per step (weights prefetched ahead), then the
// 1-3 left over; the caller reduces them (ReduceLanes8).
// group(std::integral_constant<int, N>, blocks + i, i, acc) folds super-blocks
// [i, i + N) (i a multiple of 4: super-block i + t goes to lanes 2t, 2t + 1)
// and returns the accumulators.
template <class Block, class Group>
HWY_INLINE __m256 StreamSuperBlocks(const Block* blocks, int64_t num_blocks, const Group& group) {
  static_assert(kStreamGroup == 4, "lane pair k of the canonical order is super-block i mod 4");
  __m256 acc = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + kStreamGroup <= num_blocks; i += kStreamGroup) {
    PrefetchBytes(reinterpret_cast<const char*>(blocks + i) + kStreamPrefetchBytes,
                  kStreamGroup * static_cast<int>(sizeof(Block)));
    acc = group(std::integral_constant<int, kStreamGroup>{}, blocks + i, i, acc);
  }
  switch (num_blocks - i) {
    case 1:
      return group(std::integral_constant<int, 1>{}, blocks + i, i, acc);
    case 2:
      return group(std::integral_constant<int, 2>{}, blocks + i, i, acc);
    case 3:
      return group(std::integral_constant<int, 3>{}, blocks + i, i, acc);
    default:
      return acc;
  }
}

// Width 1 over `rows` consecutive rows of num_blocks super-blocks (row r at
// w + r * stride): y[r] = ReduceLanes8 of the row's accumulators, four rows
// per reduction (ReduceLanes8x4; the rows still stream one after another).
// The four rows share one copy of the row loop (not unrolled: the same speed
// on a 128 MB stream, 2.5x less code).
template <class Block, class Group>
HWY_INLINE void StreamRows(const uint8_t* w, size_t stride, int64_t num_blocks, int64_t rows, float* y,
                           const Group& group) {
  const auto row = [&](int64_t r) { return reinterpret_cast<const Block*>(w + r * stride); };
  int64_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    __m256 a[4];
#pragma GCC unroll 1
    for (int k = 0; k < 4; ++k) a[k] = StreamSuperBlocks(row(r + k), num_blocks, group);
    _mm_storeu_ps(y + r, ReduceLanes8x4(a[0], a[1], a[2], a[3]));
  }
  for (; r < rows; ++r) y[r] = ReduceLanes8(StreamSuperBlocks(row(r), num_blocks, group));
}

// Sum of the four int32x8 vectors v[0..3] (exact; a tree, not a chain).
HWY_INLINE __m256i AddTree4(const __m256i v[4]) {
  return _mm256_add_epi32(_mm256_add_epi32(v[0], v[1]), _mm256_add_epi32(v[2], v[3]));
}

// sum_j scale(j) * dot(q_j, x_j) over the eight 32-byte groups of a
// super-block, as eight int32 lanes (exact). levels(g, &lo, &hi) gives the
// unsigned levels of groups 2g and 2g + 1 (elements 64g .. 64g + 63);
// scale(j) the 16-bit multiplier of each int16 pair lane of group j.
template <class Levels, class Scale>
HWY_INLINE __m256i ScaledDots(Levels levels, Scale scale, const int8_t* x) {
  __m256i part[4];
  for (int g = 0; g < 4; ++g) {
    __m256i lo, hi;
    levels(g, &lo, &hi);
    const __m256i p_lo = _mm256_maddubs_epi16(lo, LoadBytes32(x + 64 * g));
    const __m256i p_hi = _mm256_maddubs_epi16(hi, LoadBytes32(x + 64 * g + 32));
    part[g] =
        _mm256_add_epi32(_mm256_madd_epi16(p_lo, scale(2 * g)), _mm256_madd_epi16(p_hi, scale(2 * g + 1)));
  }
  return AddTree4(part);
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
// `n` (<= 4) activation rows at acts (missing rows: 0). Built in registers:
// scalar stores into a stack array read back as one vector cannot be
// store-forwarded, and that stall (~20 cycles per super-block) dominated the
// verification widths.
HWY_INLINE __m256 PairedActScales(const ActRow* acts, int n, int64_t i) {
  const auto at = [&](int t) { return t < n ? acts[t].d[i] : 0.0f; };
  const __m128 dx = _mm_setr_ps(at(0), at(1), at(2), at(3));
  return _mm256_permutevar8x32_ps(_mm256_castps128_ps256(dx), _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3));
}

// Width 1: the activation scales d[0 .. N) of N (<= 4) consecutive
// super-blocks, lanes N..3 zero (no read past the row's N blocks).
template <int N>
HWY_INLINE __m128 LoadDecodeScales(const float* d) {
  if constexpr (N == 4) {
    return _mm_loadu_ps(d);
  } else {
    alignas(16) float v[4] = {};
    for (int t = 0; t < N; ++t) v[t] = d[t];
    return _mm_load_ps(v);
  }
}

// v with its kBytes-byte lane kLane replaced by the kBytes bytes at p.
template <int kLane, int kBytes>
HWY_INLINE __m128i InsertField(__m128i v, const uint8_t* p) {
  if constexpr (kBytes == 4) {
    uint32_t field;
    std::memcpy(&field, p, 4);
    return _mm_insert_epi32(v, static_cast<int>(field), kLane);
  } else {
    static_assert(kBytes == 2);
    return _mm_insert_epi16(v, LoadHalfBits(p), kLane);
  }
}

// Width 1: the kBytes-byte fields (F16 scales: 2 = d, 4 = d and dmin) at
// `base` of N (<= 4) blocks `stride` bytes apart, as kBytes-byte lanes 0..3
// of a vector (missing blocks: 0). One load-and-insert per block (GCC
// vectorizes a scalar shift-and-or version into more vector operations).
template <int N, int kBytes>
HWY_INLINE __m128i GatherFields(const uint8_t* base, size_t stride) {
  static_assert(N >= 1 && N <= 4);
  // Lane indices are immediates, so no loop (it need not be unrolled at -O2).
  __m128i v = InsertField<0, kBytes>(_mm_setzero_si128(), base);
  if constexpr (N > 1) v = InsertField<1, kBytes>(v, base + stride);
  if constexpr (N > 2) v = InsertField<2, kBytes>(v, base + 2 * stride);
  if constexpr (N > 3) v = InsertField<3, kBytes>(v, base + 3 * stride);
  return v;
}

// Tiles (widths 2..8): per group of four activation rows and lane pair k,
// one vector of accumulators (lanes 2t, 2t + 1: activation row t), in L1
// (indexed by i mod 4; the levels take the registers).
template <int NB>
struct TileLanes {
  static constexpr int kGroups = (NB + 3) / 4;
  alignas(32) float v[kGroups][4][8] = {};

  // v[g][i mod 4] = fma(factors, sums, v[g][i mod 4]).
  HWY_INLINE void Fma(int g, int64_t i, __m256 factors, __m256 sums) {
    float* lanes = v[g][i % 4];
    _mm256_store_ps(lanes, _mm256_fmadd_ps(factors, sums, _mm256_load_ps(lanes)));
  }

  // out[b] = ReduceLanes8 of activation row b's canonical lanes
  // (lane 2k + m = v[b / 4][k][2 (b % 4) + m]), four rows per vector with
  // ReduceLanes8's additions: s_i = r_i + r_(i+4) is v[k] + v[k + 2] (lanes
  // 2t, 2t + 1: s_2k', s_2k'+1 of row t), then (s0 + s2) and (s1 + s3)
  // side by side, then their sum.
  HWY_INLINE void Store(float* out) const {
    for (int g = 0; g < kGroups; ++g) {
      const __m256 s01 = _mm256_add_ps(_mm256_load_ps(v[g][0]), _mm256_load_ps(v[g][2]));  // s0, s1
      const __m256 s23 = _mm256_add_ps(_mm256_load_ps(v[g][1]), _mm256_load_ps(v[g][3]));  // s2, s3
      const __m256 u = _mm256_add_ps(s01, s23);  // lanes 2t, 2t + 1: s0 + s2, s1 + s3
      const __m256 r = _mm256_add_ps(u, _mm256_permute_ps(u, _MM_SHUFFLE(2, 3, 0, 1)));  // lane 2t: row t
      alignas(16) float rows[4];
      _mm_store_ps(rows, _mm256_castps256_ps128(_mm256_permutevar8x32_ps(r, _mm256_setr_epi32(0, 2, 4, 6, 0, 0, 0, 0))));
      const int n = (g + 1 < kGroups) ? 4 : NB - 4 * g;
      for (int t = 0; t < n; ++t) out[4 * g + t] = rows[t];
    }
  }
};

// The eight 6-bit sub-block scales of a Q4_K/Q5_K super-block as int16
// lanes 0..7 of both 128-bit halves; Of(j) broadcasts scale j to every int16
// lane (one byte shuffle: the madd multiplier of sub-block j).
struct KScales {
  __m256i sc16;
  __m256i Of(int j) const {
    return _mm256_shuffle_epi8(sc16, _mm256_set1_epi16(static_cast<int16_t>(0x0100 + 0x0202 * j)));
  }
};

// Unpacks the 12 scale bytes of a Q4_K/Q5_K super-block (UnpackKScaleMin for
// all j at once, with 64-bit scalar operations on the otherwise idle integer
// pipes, then one move into the vector unit): the scales into *sc and, as the
// result, the eight mins each repeated twice as int16 (mins16, matching the
// 16 bsums of the activation super-block).
HWY_INLINE __m256i UnpackKScales(const uint8_t* bytes, KScales* sc) {
  uint64_t low8;
  uint32_t high4;
  std::memcpy(&low8, bytes, 8);
  std::memcpy(&high4, bytes + 8, 4);
  // Bytes 0..3: scales 0..3, bytes 4..7: mins 0..3 (low 6 bits of bytes 0..7).
  const uint64_t first = low8 & 0x3f3f3f3f3f3f3f3full;
  // Bytes 0..3: scales 4..7 (low nibbles of bytes 8..11), bytes 4..7: mins 4..7
  // (their high nibbles), each with bits 4-5 = the top 2 bits of bytes 0..7.
  const uint64_t nibbles = (high4 | (uint64_t{high4 >> 4} << 32)) & 0x0f0f0f0f0f0f0f0full;
  const uint64_t second = nibbles | ((low8 >> 2) & 0x3030303030303030ull);
  const __m128i packed = _mm_set_epi64x(static_cast<int64_t>(second), static_cast<int64_t>(first));
  // Scale j (bytes 0..3, 8..11) zero-extended to int16 (index -128: a zero byte).
  const __m128i scales = _mm_shuffle_epi8(
      packed, _mm_setr_epi8(0, -128, 1, -128, 2, -128, 3, -128, 8, -128, 9, -128, 10, -128, 11, -128));
  sc->sc16 = _mm256_broadcastsi128_si256(scales);
  // Min j (bytes 4..7, 12..15) twice, as uint8 -> int16.
  const __m128i mins2 =
      _mm_shuffle_epi8(packed, _mm_setr_epi8(4, 4, 5, 5, 6, 6, 7, 7, 12, 12, 13, 13, 14, 14, 15, 15));
  return _mm256_cvtepu8_epi16(mins2);
}

// v shifted left by s bits within each 16-bit lane (s < 0: right by -s).
// Inlined with constant s (unrolled loops): one immediate shift.
HWY_INLINE __m256i ShiftLanes16(__m256i v, int s) {
  return s >= 0 ? _mm256_slli_epi16(v, s) : _mm256_srli_epi16(v, -s);
}

// The 32 qh bytes of a Q5_K super-block (Q4_K: none).
HWY_INLINE __m256i LoadHighBits(const BlockQ4K&) { return _mm256_setzero_si256(); }
HWY_INLINE __m256i LoadHighBits(const BlockQ5K& block) { return LoadBytes32(block.qh); }

// Levels (0..15, or 0..31 with the fifth bit) of sub-blocks 2g and 2g + 1 of
// a Q4_K/Q5_K super-block: nibbles of qs[32g ..], and bit 2g (2g + 1) of
// qh[l] as the fifth bit of element l of sub-block 2g (2g + 1). Per 32 levels
// one and (low) or shift + and (high), plus shift + and + or for the fifth
// bit: a 16-bit lane shift by at most 4 moves each byte's bit 2g or 2g + 1 to
// its own bit 4.
template <bool kFiveBit>
HWY_INLINE void LoadKLevels(const uint8_t* qs, __m256i qh, int g, __m256i* lo, __m256i* hi) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m256i raw = LoadBytes32(qs + 32 * g);
  *lo = _mm256_and_si256(raw, low4);
  *hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), low4);
  if constexpr (kFiveBit) {
    const __m256i bit4 = _mm256_set1_epi8(0x10);
    *lo = _mm256_or_si256(*lo, _mm256_and_si256(ShiftLanes16(qh, 4 - 2 * g), bit4));
    *hi = _mm256_or_si256(*hi, _mm256_and_si256(ShiftLanes16(qh, 3 - 2 * g), bit4));
  }
}

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// Width 1 on AVX-512: ScaledDots's exact integers with 64-byte operations.
// Vector p holds groups 2p and 2p + 1 (qs bytes 64p .. 64p + 63): its low
// nibbles are sub-blocks 4p and 4p + 2 (one per 256-bit half), its high
// nibbles 4p + 1 and 4p + 3; the matching activation halves are gathered
// with one insert, and each half's madd multiplier is its sub-block's scale
// (one vpermw of the scales). Q5_K's fifth bit of sub-block j is bit j of
// each qh byte: a 16-bit right shift by j per half, then bit 0 of each byte
// moved to bit 4. Per super-block: 4 maddubs + 4 madd of 64 bytes instead of
// 8 + 8 of 32; the 16 int32 lanes fold to 8 (exact).
template <bool kFiveBit, class Block>
HWY_INLINE __m256i ScaledDots512(const Block& block, const KScales& sc, const int8_t* x) {
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  const __m512i scales = _mm512_castsi256_si512(sc.sc16);
  // Q5_K: the 32 qh bytes in both halves (Q4_K: unused).
  __m512i qh = _mm512_setzero_si512();
  if constexpr (kFiveBit) qh = _mm512_broadcast_i64x4(LoadBytes32(block.qh));
  __m512i sum = _mm512_setzero_si512();
  for (int p = 0; p < 2; ++p) {
    const __m512i raw = _mm512_loadu_si512(block.qs + 64 * p);
    __m512i lo = _mm512_and_si512(raw, low4);
    __m512i hi = _mm512_and_si512(_mm512_srli_epi16(raw, 4), low4);
    const int j = 4 * p;   // sub-blocks j, j + 2 (lo) and j + 1, j + 3 (hi)
    if constexpr (kFiveBit) {
      const __m512i one = _mm512_set1_epi8(0x01);
      const auto fifth = [&](int a, int b) {  // bit a (low half) / b (high half) of each byte, to bit 4
        const __m512i counts = _mm512_inserti64x4(_mm512_set1_epi16(static_cast<int16_t>(a)),
                                                  _mm256_set1_epi16(static_cast<int16_t>(b)), 1);
        return _mm512_slli_epi16(_mm512_and_si512(_mm512_srlv_epi16(qh, counts), one), 4);
      };
      lo = _mm512_or_si512(lo, fifth(j, j + 2));
      hi = _mm512_or_si512(hi, fifth(j + 1, j + 3));
    }
    const auto acts = [&](int first, int second) {  // activation sub-blocks first | second
      return _mm512_inserti64x4(_mm512_castsi256_si512(LoadBytes32(x + 32 * first)), LoadBytes32(x + 32 * second), 1);
    };
    const auto multiplier = [&](int first, int second) {  // scale first | second in every int16 lane
      return _mm512_permutexvar_epi16(_mm512_inserti64x4(_mm512_set1_epi16(static_cast<int16_t>(first)),
                                                         _mm256_set1_epi16(static_cast<int16_t>(second)), 1),
                                      scales);
    };
    const __m512i p_lo = _mm512_maddubs_epi16(lo, acts(j, j + 2));
    const __m512i p_hi = _mm512_maddubs_epi16(hi, acts(j + 1, j + 3));
    sum = _mm512_add_epi32(sum, _mm512_add_epi32(_mm512_madd_epi16(p_lo, multiplier(j, j + 2)),
                                                 _mm512_madd_epi16(p_hi, multiplier(j + 1, j + 3))));
  }
  return _mm256_add_epi32(_mm512_castsi512_si256(sum), _mm512_extracti64x4_epi64(sum, 1));
}
#endif

// Width 1, one Q4_K/Q5_K super-block against activation levels x and bsums:
// hadd(dots, min_dots), whose lanes sum to sumi (lanes 0, 1 of each 128-bit
// half) and summ (lanes 2, 3). Levels stream through two registers.
template <bool kFiveBit, class Block>
HWY_INLINE __m256i StreamDots(const Block& block, const int8_t* x, const int16_t* bsums) {
  KScales sc;
  const __m256i mins16 = UnpackKScales(block.scales, &sc);
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  const __m256i dots = ScaledDots512<kFiveBit>(block, sc, x);
#else
  const __m256i qh = LoadHighBits(block);
  const __m256i dots =
      ScaledDots([&](int g, __m256i* lo, __m256i* hi) { LoadKLevels<kFiveBit>(block.qs, qh, g, lo, hi); },
                 [&](int j) { return sc.Of(j); }, x);
#endif
  return _mm256_hadd_epi32(dots, _mm256_madd_epi16(LoadBytes32(bsums), mins16));
}

// Width 1, N (<= 4) consecutive Q4_K/Q5_K super-blocks from `blocks`
// (activation super-blocks from index i, a multiple of 4): exact (sumi, summ)
// of each, then the reference's two FMAs per super-block, all in one vector:
// lane 2t += (dx * d) * sumi, lane 2t + 1 += -(dx * dmin) * summ of
// super-block i + t (missing super-blocks: 0 * 0, which leaves a lane as is).
template <bool kFiveBit, int N, class Block>
HWY_INLINE __m256 StreamGroup(const Block* blocks, const ActRow& act, int64_t i, __m256 acc) {
  __m256i h[4];
  // Unrolled: h[] then stays in registers (the rolled loop, which GCC chose,
  // spilled it and measured ~10% slower).
#pragma GCC unroll 4
  for (int t = 0; t < 4; ++t) {
    h[t] = t < N ? StreamDots<kFiveBit>(blocks[t], act.qs + (i + t) * kQKK, act.bsums + (i + t) * 16)
                 : _mm256_setzero_si256();
  }
  // Lanes 2t, 2t + 1: sumi, summ of super-block t (exact integers, as floats).
  const __m256 sums = _mm256_cvtepi32_ps(ReducePairs4(h));
  // Lanes 2t, 2t + 1: dx * d, -(dx * dmin) (one rounding each, as the
  // reference); d and dmin are the first 4 bytes of a block.
  const __m256 dx2 = _mm256_permutevar8x32_ps(_mm256_castps128_ps256(LoadDecodeScales<N>(act.d + i)),
                                              _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3));
  const __m256 d_dmin =
      _mm256_cvtph_ps(GatherFields<N, 4>(reinterpret_cast<const uint8_t*>(blocks), sizeof(Block)));
  const __m256 negate_odd =
      _mm256_castsi256_ps(_mm256_set_epi32(INT32_MIN, 0, INT32_MIN, 0, INT32_MIN, 0, INT32_MIN, 0));
  const __m256 factors = _mm256_xor_ps(_mm256_mul_ps(dx2, d_dmin), negate_odd);
  return _mm256_fmadd_ps(factors, sums, acc);
}

// AVX2 tiles (widths 2..8 and prefill) read kQ8KX activations (quant_act.h):
// byte 64u + 8j + e of a super-block is element 32j + 8u + e, so the 32-byte
// half h of 64-byte group u holds levels 8u .. 8u + 7 of sub-blocks
// 4h .. 4h + 3, one sub-block per 64-bit lane. The weights are unpacked once
// into the same order (w[2u + h]), so per activation row the products of a
// sub-block add up in 16-bit lanes of one vector: sum_u maddubs(w[2u + h],
// X(u, h)) (|sum| <= 8 * 31 * 127 = 31496 for Q4_K/Q5_K; Q6_K adds two at a
// time: 4 * 63 * 127 = 32004), then one madd with the scales per 16-bit sum.
// Per 256 levels: 8 maddubs + 2 madd (Q6_K: 4) instead of 8 + 8 in the
// natural order, where every 32-level group needed its own madd. The
// integers stay exact, so the sums are those of dot_ref.h.

// Activation bytes of group u, half h (kQ8KX) of the super-block at x.
HWY_INLINE __m256i ActHalf(const int8_t* x, int u, int h) { return LoadBytes32(x + 64 * u + 32 * h); }

// One K-quant super-block unpacked for an AVX2 tile: the 256 levels in kQ8KX
// order (w[2u + h]), kMult madd multipliers (Q4_K/Q5_K: 2, Q6_K: 4), and per
// type one integer and one F32 vector (Q4_K/Q5_K: mins16 and [d, dmin, ..];
// Q6_K: the scales in order and d).
template <int kMult>
struct UnpackedAvx2 {
  __m256i w[8];
  __m256i mult[kMult];
  __m256i extra_i;
  __m256 extra_f;
};

// The 64-bit word k of p.
HWY_INLINE int64_t Word64(const uint8_t* p, int k) {
  int64_t word;
  std::memcpy(&word, p + 8 * k, 8);
  return word;
}

// A pshufb index that gives int16 lane L of a vector the int16 lane
// first + step * (L / 4 within the 128-bit half + 2 * half) of a source whose
// two 128-bit halves are equal: the multiplier of 64-bit lane j' of a kQ8KX
// half-vector, spread over its four int16 lanes.
HWY_INLINE __m256i SpreadIndex16(int first, int step) {
  alignas(32) int8_t index[32];
  for (int byte = 0; byte < 32; ++byte) {
    const int lane = byte / 2;                       // int16 lane 0..15
    const int src = first + step * (lane / 4);       // int16 lane of the (equal) source half
    index[byte] = static_cast<int8_t>(2 * src + byte % 2);
  }
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(index));
}

// Q4_K / Q5_K levels in kQ8KX order: w[2u + h] lane j' = levels 8u .. 8u + 7
// of sub-block j = 4h + j', the low (j even) or high nibbles of qs word
// 4 (j / 2) + u, plus Q5_K's fifth bit: bit j of each byte of qh word u,
// moved to bit 4. (64-bit shifts move bits across bytes, but only into bits
// the byte masks drop.)
template <bool kFiveBit, class Block>
HWY_INLINE void ScaleMinLevelsX(const Block& block, __m256i w[8]) {
  const __m256i nibble = _mm256_setr_epi64x(0, 4, 0, 4);
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  for (int u = 0; u < 4; ++u) {
    for (int h = 0; h < 2; ++h) {
      const int64_t a = Word64(block.qs, 8 * h + u), b = Word64(block.qs, 8 * h + 4 + u);
      __m256i v = _mm256_and_si256(_mm256_srlv_epi64(_mm256_setr_epi64x(a, a, b, b), nibble), low4);
      if constexpr (kFiveBit) {
        const __m256i bit = _mm256_srlv_epi64(_mm256_set1_epi64x(Word64(block.qh, u)),
                                              _mm256_setr_epi64x(4 * h, 4 * h + 1, 4 * h + 2, 4 * h + 3));
        v = _mm256_or_si256(v, _mm256_slli_epi64(_mm256_and_si256(bit, _mm256_set1_epi8(0x01)), 4));
      }
      w[2 * u + h] = v;
    }
  }
}

// Q6_K levels in kQ8KX order: w[2u + h] lane t = levels 8u .. 8u + 7 of
// 32-element group 4h + t: the low (t < 2) or high nibbles of ql word
// 8h + 4 (t % 2) + u, with bits 2t, 2t + 1 of each byte of qh word 4h + u
// as bits 4, 5 (quant_blocks.h's layout).
HWY_INLINE void Q6LevelsX(const BlockQ6K& block, __m256i w[8]) {
  const __m256i nibble = _mm256_setr_epi64x(0, 0, 4, 4);
  const __m256i high = _mm256_setr_epi64x(0, 2, 4, 6);
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m256i low2 = _mm256_set1_epi8(0x03);
  for (int u = 0; u < 4; ++u) {
    for (int h = 0; h < 2; ++h) {
      const int64_t a = Word64(block.ql, 8 * h + u), b = Word64(block.ql, 8 * h + 4 + u);
      const __m256i lo = _mm256_and_si256(_mm256_srlv_epi64(_mm256_setr_epi64x(a, b, a, b), nibble), low4);
      const __m256i hi = _mm256_and_si256(_mm256_srlv_epi64(_mm256_set1_epi64x(Word64(block.qh, 4 * h + u)), high), low2);
      w[2 * u + h] = _mm256_or_si256(lo, _mm256_slli_epi64(hi, 4));
    }
  }
}

// Q4_K / Q5_K, one activation super-block x (kQ8KX): int32 lanes whose sum
// is sumi = sum_j scale_j dot_j (exact). mult[h]: int16 lanes of 64-bit
// lane j' = scale 4h + j'.
HWY_INLINE __m256i ScaleMinDotsX(const __m256i w[8], const __m256i mult[2], const int8_t* x) {
  __m256i dots[2];
  for (int h = 0; h < 2; ++h) {
    __m256i s = _mm256_maddubs_epi16(w[h], ActHalf(x, 0, h));
    for (int u = 1; u < 4; ++u) s = _mm256_add_epi16(s, _mm256_maddubs_epi16(w[2 * u + h], ActHalf(x, u, h)));
    dots[h] = _mm256_madd_epi16(s, mult[h]);
  }
  return _mm256_add_epi32(dots[0], dots[1]);
}

// Q6_K: int32 lanes whose sum is sum_k s_k dot_k over the 16 sub-blocks of
// 16 (exact). Levels 8u .. 8u + 7 of group j belong to sub-block 2j + u / 2;
// mult[2k + h]: int16 lanes of 64-bit lane j' = scale 2 (4h + j') + k.
HWY_INLINE __m256i Q6DotsX(const __m256i w[8], const __m256i mult[4], const int8_t* x) {
  __m256i dots = _mm256_setzero_si256();
  for (int h = 0; h < 2; ++h) {
    for (int k = 0; k < 2; ++k) {
      const __m256i s = _mm256_add_epi16(_mm256_maddubs_epi16(w[4 * k + h], ActHalf(x, 2 * k, h)),
                                         _mm256_maddubs_epi16(w[4 * k + 2 + h], ActHalf(x, 2 * k + 1, h)));
      dots = _mm256_add_epi32(dots, _mm256_madd_epi16(s, mult[2 * k + h]));
    }
  }
  return dots;
}

// The tile entry point of the AVX2 K-quant kernels below (Kernel: Block,
// Unpack, TileLoop): widths 2..8 (width 1 streams, StreamRows; prefill,
// widths above 8, is gemm_kquant_avx2_prefill-inl.h's).
template <class Kernel>
struct KQuantAvx2Tiles {
  template <int R, int NB>
  static void Tile(const uint8_t* wrow, size_t /*stride*/, int64_t cols, const ActRow* acts, float* out) {
    // NB == 1 here is one left-over row of a wider call, in kQ8KX like the
    // rest (decode, width 1, streams natural Q8K through StreamRows instead).
    static_assert(R == 1 && NB >= 1 && NB <= kKQuantMaxActs);
    const auto* blocks = reinterpret_cast<const typename Kernel::Block*>(wrow);
    TileLanes<NB> acc;
    Kernel::template TileLoop<NB>(blocks, cols / kQKK, acts, acc);
    acc.Store(out);
  }
};

// Q4_K and Q5_K: 8 sub-blocks of 32 with 6-bit scales and mins. One weight
// row x up to 8 activation rows per call: each super-block is unpacked once
// (levels in eight registers, scales in L1) and reused for every
// activation row (decode, NB = 1, streams them instead, StreamGroup). Per
// (row, activation row) the exact integers sumi / summ of dot_ref.h, then,
// four activation rows per vector, the reference's two FMAs in lanes 2t and
// 2t + 1 of lane pair i mod 4 (TileLanes).
template <bool kFiveBit>
struct ScaleMinKernel : KQuantAvx2Tiles<ScaleMinKernel<kFiveBit>> {
  using Block = std::conditional_t<kFiveBit, BlockQ5K, BlockQ4K>;
  static constexpr int kTileRows = 1;
  static constexpr int kMaxActs = kKQuantMaxActs;

  // Decode: `rows` weight rows (stride bytes apart) against one activation row.
  static void StreamRows(const uint8_t* w, size_t stride, int64_t cols, const ActRow& act, int64_t rows,
                         float* y) {
    ::cairn::kernels::HWY_NAMESPACE::StreamRows<Block>(
        w, stride, cols / kQKK, rows, y,
        [&](auto n, const Block* blocks, int64_t i, __m256 acc) __attribute__((always_inline)) {
          return StreamGroup<kFiveBit, decltype(n)::value>(blocks, act, i, acc);
        });
  }

  // One super-block unpacked for the tile loop: levels in kQ8KX order, the
  // two madd multipliers (scales 0..3, 4..7), mins16 (extra_i) and
  // [d, dmin, ..] (extra_f).
  using Unpacked = UnpackedAvx2<2>;
  static HWY_INLINE Unpacked Unpack(const Block& block) {
    Unpacked u;
    ScaleMinLevelsX<kFiveBit>(block, u.w);
    KScales sc;
    u.extra_i = UnpackKScales(block.scales, &sc);
    for (int h = 0; h < 2; ++h) u.mult[h] = _mm256_shuffle_epi8(sc.sc16, SpreadIndex16(4 * h, 1));
    const float d = _cvtsh_ss(LoadHalfBits(block.d));
    const float dmin = _cvtsh_ss(LoadHalfBits(block.dmin));
    u.extra_f = _mm256_setr_ps(d, dmin, d, dmin, d, dmin, d, dmin);
    return u;
  }

  // The num_blocks super-blocks at blocks (each unpacked once) for NB
  // activation rows into acc.
  template <int NB>
  static HWY_INLINE void TileLoop(const Block* blocks, int64_t num_blocks, const ActRow* acts, TileLanes<NB>& acc) {
    constexpr int kGroups = TileLanes<NB>::kGroups;
    const __m256 negate_odd =
        _mm256_castsi256_ps(_mm256_set_epi32(INT32_MIN, 0, INT32_MIN, 0, INT32_MIN, 0, INT32_MIN, 0));
    for (int64_t i = 0; i < num_blocks; ++i) {
      const Unpacked u = Unpack(blocks[i]);
      for (int g = 0; g < kGroups; ++g) {
        const int n = (g + 1 < kGroups) ? 4 : NB - 4 * g;
        const ActRow* a = acts + 4 * g;
        __m256i h[4];
        for (int t = 0; t < 4; ++t) {
          if (t < n) {
            const __m256i dots = ScaleMinDotsX(u.w, u.mult, a[t].qs + i * kQKK);
            const __m256i min_dots = _mm256_madd_epi16(LoadBytes32(a[t].bsums + i * 16), u.extra_i);
            h[t] = _mm256_hadd_epi32(dots, min_dots);
          } else {
            h[t] = _mm256_setzero_si256();
          }
        }
        // Lanes 2t, 2t + 1: sumi, summ of activation row t (exact).
        const __m256 sums = _mm256_cvtepi32_ps(ReducePairs4(h));
        // Lanes 2t, 2t + 1: dx * d, -(dx * dmin) (one rounding each, as the reference).
        const __m256 factors = _mm256_xor_ps(_mm256_mul_ps(PairedActScales(a, n, i), u.extra_f), negate_odd);
        acc.Fma(g, i, factors, sums);
      }
    }
  }


};

static_assert(offsetof(BlockQ4K, dmin) == 2 && offsetof(BlockQ5K, dmin) == 2);
static_assert(offsetof(BlockQ4K, d) == 0 && offsetof(BlockQ5K, d) == 0);

// The kernels of matmul.cc: AVX2 in gemm_kquant_avx2_prefill-inl.h (these
// plus prefill), AVX-512 in gemm_kquant_avx512-inl.h (decode from here).

// Levels 0..63 of the 32-element groups 2g and 2g + 1 of a Q6_K super-block
// (layout in quant_blocks.h: group 4h + t, h = g / 2, takes the low (t = 0, 1)
// or high (t = 2, 3) nibbles of ql[64h + 32(t % 2) ..] and bits 2t, 2t + 1 of
// qh[32h ..] as bits 4, 5). The qh bits are moved with 16-bit lane shifts of
// at most 4 and masked with 0x30, which keeps every byte's bits in that byte.
HWY_INLINE void LoadQ6Levels(const BlockQ6K& block, int g, __m256i* first, __m256i* second) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m256i bits45 = _mm256_set1_epi8(0x30);
  const int h = g / 2;
  const __m256i ql0 = LoadBytes32(block.ql + 64 * h);
  const __m256i ql1 = LoadBytes32(block.ql + 64 * h + 32);
  const __m256i qh = LoadBytes32(block.qh + 32 * h);
  if (g % 2 == 0) {  // t = 0, 1: low nibbles, qh bits 0-1 and 2-3
    *first = _mm256_or_si256(_mm256_and_si256(ql0, low4), _mm256_and_si256(_mm256_slli_epi16(qh, 4), bits45));
    *second =
        _mm256_or_si256(_mm256_and_si256(ql1, low4), _mm256_and_si256(_mm256_slli_epi16(qh, 2), bits45));
  } else {  // t = 2, 3: high nibbles, qh bits 4-5 and 6-7
    *first = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low4), _mm256_and_si256(qh, bits45));
    *second = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low4),
                              _mm256_and_si256(_mm256_srli_epi16(qh, 2), bits45));
  }
}

// The 16 int8 scales of a Q6_K super-block as int16, deinterleaved: low
// 128-bit half [s0, s2, .., s14], high half [s1, s3, .., s15], so word v of
// each half holds the multipliers of group v (sub-blocks 2v, 2v + 1).
HWY_INLINE __m256i Q6ScalePairs(const BlockQ6K& block) {
  const __m128i s8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block.scales));
  return _mm256_cvtepi8_epi16(
      _mm_shuffle_epi8(s8, _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15)));
}

// madd multiplier of group v: s_2v in the low half, s_2v+1 in the high half
// (one byte shuffle of Q6ScalePairs).
HWY_INLINE __m256i Q6ScaleOf(__m256i pairs, int v) {
  return _mm256_shuffle_epi8(pairs, _mm256_set1_epi16(static_cast<int16_t>(0x0100 + 0x0202 * v)));
}

// The 16 int8 scales of a Q6_K super-block as int16, in order (the offset term).
HWY_INLINE __m256i Q6Scales16(const BlockQ6K& block) {
  return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block.scales)));
}

// hadd(dots, offset_dots) of one Q6_K super-block (levels and scale as in
// ScaledDots, scales16 = Q6Scales16): lanes 0, 1 of each half sum to sum_k s_k dot_k,
// lanes 2, 3 to sum_k s_k bsums_k (the offset-32 term before its factor).
template <class Levels, class Scale>
HWY_INLINE __m256i Q6Dots(Levels levels, Scale scale, __m256i scales16, const int8_t* x,
                          const int16_t* bsums) {
  const __m256i dots = ScaledDots(levels, scale, x);
  return _mm256_hadd_epi32(dots, _mm256_madd_epi16(LoadBytes32(bsums), scales16));
}

// Lane 2t of ReducePairs4 over Q6Dots: sumi = sum_dots - 32 * sum_offset (exact).
HWY_INLINE __m256i Q6SumI(__m256i v) {
  return _mm256_sub_epi32(v, _mm256_slli_epi32(_mm256_srli_epi64(v, 32), 5));
}

// Width 1, N (<= 4) consecutive Q6_K super-blocks from `blocks` (activation
// super-blocks from index i, a multiple of 4): exact sumi of each, then the
// reference's FMA per super-block in one vector: lane 2t += (dx * d) * sumi
// of super-block i + t; odd lanes get +0 * (an exact integer), so stay +0.
template <int N>
HWY_INLINE __m256 StreamGroupQ6(const BlockQ6K* blocks, const ActRow& act, int64_t i, __m256 acc) {
  __m256i h[4];
#pragma GCC unroll 4
  for (int t = 0; t < 4; ++t) {
    if (t < N) {
      const BlockQ6K& block = blocks[t];
      const __m256i pairs = Q6ScalePairs(block);
      h[t] = Q6Dots([&](int g, __m256i* a, __m256i* b) { LoadQ6Levels(block, g, a, b); },
                    [&](int v) { return Q6ScaleOf(pairs, v); }, Q6Scales16(block), act.qs + (i + t) * kQKK,
                    act.bsums + (i + t) * 16);
    } else {
      h[t] = _mm256_setzero_si256();
    }
  }
  // Lane 2t: sumi of super-block t (exact, as float); odd lanes: the offset sums.
  const __m256 sums = _mm256_cvtepi32_ps(Q6SumI(ReducePairs4(h)));
  // Lane t: dx * d (one rounding, as the reference), then moved to lane 2t
  // with +0 in the odd lanes.
  const __m128 d = _mm_cvtph_ps(GatherFields<N, 2>(blocks[0].d, sizeof(BlockQ6K)));
  const __m128 factors = _mm_mul_ps(LoadDecodeScales<N>(act.d + i), d);
  const __m128 zero = _mm_setzero_ps();
  const __m256 factors_even = _mm256_set_m128(_mm_unpackhi_ps(factors, zero), _mm_unpacklo_ps(factors, zero));
  return _mm256_fmadd_ps(factors_even, sums, acc);
}

// Q6_K: 16 sub-blocks of 16, unsigned levels 0..63 with offset 32. Same tile
// structure as ScaleMinKernel; per (row, activation row) the exact
// sumi = sum_dots - 32 * sum_offset, then acc = fma(dx * d, sumi, acc).
struct Q6KKernelAvx2 : KQuantAvx2Tiles<Q6KKernelAvx2> {
  static constexpr int kTileRows = 1;
  static constexpr int kMaxActs = kKQuantMaxActs;

  // Decode: `rows` weight rows (stride bytes apart) against one activation row.
  static void StreamRows(const uint8_t* w, size_t stride, int64_t cols, const ActRow& act, int64_t rows,
                         float* y) {
    ::cairn::kernels::HWY_NAMESPACE::StreamRows<BlockQ6K>(
        w, stride, cols / kQKK, rows, y,
        [&](auto n, const BlockQ6K* blocks, int64_t i, __m256 acc) __attribute__((always_inline)) {
          return StreamGroupQ6<decltype(n)::value>(blocks, act, i, acc);
        });
  }

  using Block = BlockQ6K;

  // One super-block unpacked for the tile loop: levels in kQ8KX order, the
  // four madd multipliers of Q6DotsX, the scales in order (extra_i, the
  // offset term) and d in every lane (extra_f).
  using Unpacked = UnpackedAvx2<4>;
  static HWY_INLINE Unpacked Unpack(const BlockQ6K& block) {
    Unpacked u;
    Q6LevelsX(block, u.w);
    const __m256i scales16 = Q6Scales16(block);
    // Scales 0..7 (h = 0) or 8..15 (h = 1) in both 128-bit halves.
    const __m256i half[2] = {_mm256_permute2x128_si256(scales16, scales16, 0x00),
                             _mm256_permute2x128_si256(scales16, scales16, 0x11)};
    for (int k = 0; k < 2; ++k) {
      for (int h = 0; h < 2; ++h) u.mult[2 * k + h] = _mm256_shuffle_epi8(half[h], SpreadIndex16(k, 2));
    }
    u.extra_i = scales16;
    u.extra_f = _mm256_set1_ps(_cvtsh_ss(LoadHalfBits(block.d)));
    return u;
  }

  template <int NB>
  static HWY_INLINE void TileLoop(const Block* blocks, int64_t num_blocks, const ActRow* acts, TileLanes<NB>& acc) {
    constexpr int kGroups = TileLanes<NB>::kGroups;
    // Odd lanes: +0 * (the offset sums) keeps them +0, as in the reference.
    const __m256 even = _mm256_castsi256_ps(_mm256_set_epi32(0, -1, 0, -1, 0, -1, 0, -1));
    for (int64_t i = 0; i < num_blocks; ++i) {
      const Unpacked u = Unpack(blocks[i]);
      for (int g = 0; g < kGroups; ++g) {
        const int n = (g + 1 < kGroups) ? 4 : NB - 4 * g;
        const ActRow* a = acts + 4 * g;
        __m256i h[4];
        for (int t = 0; t < 4; ++t) {
          if (t < n) {
            h[t] = _mm256_hadd_epi32(Q6DotsX(u.w, u.mult, a[t].qs + i * kQKK),
                                     _mm256_madd_epi16(LoadBytes32(a[t].bsums + i * 16), u.extra_i));
          } else {
            h[t] = _mm256_setzero_si256();
          }
        }
        // Lane 2t: sumi of activation row t (exact).
        const __m256i sumi = Q6SumI(ReducePairs4(h));
        const __m256 factors = _mm256_and_ps(_mm256_mul_ps(PairedActScales(a, n, i), u.extra_f), even);
        acc.Fma(g, i, factors, _mm256_cvtepi32_ps(sumi));
      }
    }
  }


};

static_assert(offsetof(BlockQ6K, d) == 208);

#elif !CAIRN_ARM_SIMD_TARGET  // Arm: gemm_kquant_neon-inl.h

using Q4KKernel = RefKernel<DType::kQ4_K>;
using Q5KKernel = RefKernel<DType::kQ5_K>;
using Q6KKernel = RefKernel<DType::kQ6_K>;

#endif

}  // namespace HWY_NAMESPACE
}  // namespace cairn::kernels
HWY_AFTER_NAMESPACE();

#endif  // toggle guard
