// Per-target integer dot kernels for 32-element block weights (Q8_0, Q4_0,
// Q5_0, IQ4_NL against Q8 activations; Q4_1, Q5_1 against Q8_1) . Included by
// matmul.cc once per Highway target. The formats differ only in how a block's
// 32 levels are unpacked into bytes (a Levels policy) and, for Q4_1/Q5_1, in
// the min term m * s added after the level dots (AddMinTerms).
//
// Every target performs the canonical sequence of dot_ref.h bit for bit:
// eight F32 lane accumulators, lane i fed by the exact int32 dot of elements
// 4i..4i+3 of each block (x86: maddubs+madd or VNNI dpbusd; NEON: sdot or
// widening multiplies), one FMA per block with scale dw * dx, then
// ReduceLanes8's fixed tree. On x86 a kernel call computes a register tile of
// 2 weight rows x up to 4 activation rows (prefill) or 1 weight row x up to 8
// (widths 1..16); each weight block is loaded and unpacked once for all
// activation rows, each activation block once for all weight rows. The 256-bit x86 loop forms the scale products dw * dx eight
// blocks at a time (one vector multiply per (row, activation row), kept in
// L1) instead of one multiply per block: the same IEEE products, fewer
// operations on the ports that also run maddubs/madd/FMA. Other targets
// handle one weight row per call.
#ifndef CAIRN_ARM_SIMD_TARGET
// True in the Highway passes whose code may use NEON (AdvSIMD) intrinsics:
// the NEON target and the SVE targets (every SVE CPU implements AdvSIMD, and
// Cairn's quantized kernels have no SVE code of their own). Evaluated anew in
// each pass of foreach_target.h (HWY_TARGET changes).
#define CAIRN_ARM_SIMD_TARGET                                                                   \
  (HWY_TARGET == HWY_NEON || HWY_TARGET == HWY_SVE || HWY_TARGET == HWY_SVE2 || \
   HWY_TARGET == HWY_SVE_256 || HWY_TARGET == HWY_SVE2_128)
#endif

#if defined(CAIRN_KERNELS_GEMM_Q8_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CAIRN_KERNELS_GEMM_Q8_INL_H_
#undef CAIRN_KERNELS_GEMM_Q8_INL_H_
#else
#define CAIRN_KERNELS_GEMM_Q8_INL_H_
#endif

#include <hwy/highway.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/half.h"
#include "kernels/dot_ref.h"
#include "kernels/quant_act.h"
#include "kernels/quant_blocks.h"

#if HWY_ARCH_ARM_A64
#include <arm_neon.h>  // Highway's SVE targets do not include it
#endif

HWY_BEFORE_NAMESPACE();
namespace cairn::kernels {
namespace HWY_NAMESPACE {

// The scalar reference as a kernel (portable targets, and formats without a
// SIMD kernel on the current target).
template <DType kType>
struct RefKernel {
  static constexpr bool kIsReference = true;
  template <int NB>
  static void Rows(const uint8_t* wrow, int64_t cols, const ActRow* acts, float* out) {
    for (int b = 0; b < NB; ++b) out[b] = DotQuantizedRef(kType, wrow, acts[b], cols);
  }
};

#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL

// Signed levels (one per byte) of a 32-element block.
struct Q8_0Levels {
  static constexpr size_t kBlockBytes = sizeof(BlockQ8_0);
  static HWY_INLINE __m256i Load(const uint8_t* block) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 2));
  }
};

struct Q4_0Levels {
  static constexpr size_t kBlockBytes = sizeof(BlockQ4_0);
  static HWY_INLINE __m256i Load(const uint8_t* block) {
    const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 2));
    const __m256i nibbles =
        _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(raw, 4), raw), _mm256_set1_epi8(0x0F));
    return _mm256_sub_epi8(nibbles, _mm256_set1_epi8(8));
  }
};

// Nibbles of 16 bytes as 32 bytes: low nibbles (elements 0..15) in the low
// 128 bits, high nibbles (elements 16..31) in the high 128 bits.
HWY_INLINE __m256i Nibbles(const uint8_t* qs) {
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(raw, 4), raw), _mm256_set1_epi8(0x0F));
}

// 0xFF in byte j where bit j of the little-endian uint32 at qh is set (the
// fifth bits of Q5_0/Q5_1): byte j takes qh byte j / 8, then tests bit j % 8.
HWY_INLINE __m256i FifthBitMask(const uint8_t* qh) {
  uint32_t bits;
  std::memcpy(&bits, qh, sizeof bits);
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(static_cast<int>(bits)),
      _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
  const __m256i select = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ULL));
  return _mm256_cmpeq_epi8(_mm256_and_si256(spread, select), select);
}

// Q4_1: unsigned nibbles 0..15 (the min is the separate m * s term).
struct Q4_1Levels {
  static constexpr size_t kBlockBytes = sizeof(BlockQ4_1);
  static constexpr bool kUnsigned = true;
  static constexpr bool kHasMin = true;
  static HWY_INLINE __m256i Load(const uint8_t* block) { return Nibbles(block + 4); }
};

// Q5_0: x - 16 = nibble when the fifth bit is set, else nibble - 16, which is
// the nibble with the top four bits set (two's complement): one OR.
struct Q5_0Levels {
  static constexpr size_t kBlockBytes = sizeof(BlockQ5_0);
  static HWY_INLINE __m256i Load(const uint8_t* block) {
    return _mm256_or_si256(Nibbles(block + 6), _mm256_andnot_si256(FifthBitMask(block + 2), _mm256_set1_epi8(-16)));
  }
};

// Q5_1: unsigned 0..31.
struct Q5_1Levels {
  static constexpr size_t kBlockBytes = sizeof(BlockQ5_1);
  static constexpr bool kUnsigned = true;
  static constexpr bool kHasMin = true;
  static HWY_INLINE __m256i Load(const uint8_t* block) {
    return _mm256_or_si256(Nibbles(block + 8), _mm256_and_si256(FifthBitMask(block + 4), _mm256_set1_epi8(0x10)));
  }
};

// IQ4_NL: the codebook value of each nibble (one byte shuffle per block).
struct IQ4NLLevels {
  static constexpr size_t kBlockBytes = sizeof(BlockIQ4NL);
  static HWY_INLINE __m256i Load(const uint8_t* block) {
    const __m256i codebook =
        _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIQ4NLValues)));
    return _mm256_shuffle_epi8(codebook, Nibbles(block + 2));
  }
};

// Levels policies without the flags default to signed levels, no min.
template <class Levels>
constexpr bool IsUnsignedLevels() {
  if constexpr (requires { Levels::kUnsigned; }) return Levels::kUnsigned;
  return false;
}
template <class Levels>
constexpr bool HasMinTerm() {
  if constexpr (requires { Levels::kHasMin; }) return Levels::kHasMin;
  return false;
}

HWY_INLINE float BlockScale(const uint8_t* block) { return _cvtsh_ss(LoadHalfBits(block)); }

// F32 scales of the eight consecutive blocks starting at `block` (exact
// F16 -> F32 conversions, like BlockScale).
template <size_t kBlockBytes>
HWY_INLINE __m256 BlockScales8(const uint8_t* block) {
  alignas(16) uint16_t h[8];
  for (int j = 0; j < 8; ++j) h[j] = LoadHalfBits(block + j * kBlockBytes);
  return _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(h)));
}

// Lane i = exact sum of w[j] * x[j] for j in 4i..4i+3 (|x| <= 127, so the
// int16 pair sums of maddubs cannot saturate), given abs_w = |w| and
// signed_x = x * sign(w).
HWY_INLINE __m256i DotLanesAbs(__m256i abs_w, __m256i signed_x, __m256i ones16) {
#if HWY_TARGET == HWY_AVX3_DL
  (void)ones16;
  return _mm256_dpbusd_epi32(_mm256_setzero_si256(), abs_w, signed_x);
#else
  return _mm256_madd_epi16(_mm256_maddubs_epi16(abs_w, signed_x), ones16);
#endif
}

HWY_INLINE float ReduceLanes8(__m256 acc) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));  // (s0 + s2, s1 + s3)
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_movehdup_ps(t)));
}

// ReduceLanes8 of four accumulators at once: the same additions lane by lane
// (s_i = a[i] + a[i + 4], then (s0 + s2) + (s1 + s3)), returned as
// [r(a0), r(a1), r(a2), r(a3)]. Width 1 with short rows (1024 columns: one
// 4-super-block step per K-quant row): one shared reduction instead of four
// serial ones, 27 -> 24 cycles per super-block (one thread, L2, row loop
// inlined in both).
HWY_INLINE __m128 ReduceLanes8x4(__m256 a0, __m256 a1, __m256 a2, __m256 a3) {
  // [s(a0) | s(a1)] and [s(a2) | s(a3)].
  const __m256 s01 = _mm256_add_ps(_mm256_permute2f128_ps(a0, a1, 0x20), _mm256_permute2f128_ps(a0, a1, 0x31));
  const __m256 s23 = _mm256_add_ps(_mm256_permute2f128_ps(a2, a3, 0x20), _mm256_permute2f128_ps(a2, a3, 0x31));
  // [s0 + s2, s1 + s3] of a0, a2 | of a1, a3.
  const __m256 t = _mm256_add_ps(_mm256_shuffle_ps(s01, s23, _MM_SHUFFLE(1, 0, 1, 0)),
                                 _mm256_shuffle_ps(s01, s23, _MM_SHUFFLE(3, 2, 3, 2)));
  // [r(a0), r(a2), .. | r(a1), r(a3), ..].
  const __m256 r = _mm256_add_ps(_mm256_shuffle_ps(t, t, _MM_SHUFFLE(2, 0, 2, 0)),
                                 _mm256_shuffle_ps(t, t, _MM_SHUFFLE(3, 1, 3, 1)));
  return _mm256_castps256_ps128(_mm256_permutevar8x32_ps(r, _mm256_setr_epi32(0, 4, 1, 5, 0, 0, 0, 0)));
}

// Q4_1/Q5_1: out[i * NB + b] += ReduceLanes8(accm) with the canonical min
// lanes (dot_ref.h): eight blocks' m * s per vector FMA, the m of a weight
// row's eight blocks converted once for all NB activation rows; the tail
// blocks k go to lane k mod 8 one scalar FMA each. The row was just streamed
// by the level loop, so its m fields come from L1.
template <size_t kBlockBytes, int R, int NB>
HWY_INLINE void AddMinTerms(const uint8_t* wrow, size_t stride, int64_t num_blocks, const ActRow* acts,
                            float* out) {
  for (int i = 0; i < R; ++i) {
    const uint8_t* mins = wrow + i * stride + 2;  // m at byte 2 of each block
    __m256 accm[NB];
    for (int b = 0; b < NB; ++b) accm[b] = _mm256_setzero_ps();
    int64_t k = 0;
    for (; k + 8 <= num_blocks; k += 8) {
      const __m256 m = BlockScales8<kBlockBytes>(mins + k * kBlockBytes);
      for (int b = 0; b < NB; ++b) accm[b] = _mm256_fmadd_ps(m, _mm256_loadu_ps(acts[b].s + k), accm[b]);
    }
    for (int b = 0; b < NB; ++b) {
      alignas(32) float lanes[8];
      _mm256_store_ps(lanes, accm[b]);
      for (int64_t t = k; t < num_blocks; ++t) {
        const __m128 m = _mm_set_ss(BlockScale(mins + t * kBlockBytes));
        lanes[t - k] = _mm_cvtss_f32(_mm_fmadd_ss(m, _mm_set_ss(acts[b].s[t]), _mm_set_ss(lanes[t - k])));
      }
      out[i * NB + b] += ReduceLanes8(_mm256_load_ps(lanes));
    }
  }
}

// 8 x 8 transpose of 32-bit words: v[j] = block j's 32 levels (word t =
// elements 4t..4t+3) becomes v[t] = word t of blocks 0..7 (lane j = block j),
// the kQ8X order of the activations (quant_act.h). 24 shuffles.
HWY_INLINE void TransposeWords8x8(__m256i v[8]) {
  __m256i a[8], b[8];
  for (int p = 0; p < 4; ++p) {
    a[2 * p] = _mm256_unpacklo_epi32(v[2 * p], v[2 * p + 1]);      // words 0, 1 | 4, 5 of blocks 2p, 2p+1
    a[2 * p + 1] = _mm256_unpackhi_epi32(v[2 * p], v[2 * p + 1]);  // words 2, 3 | 6, 7
  }
  for (int h = 0; h < 2; ++h) {  // blocks 0..3, then 4..7
    const __m256i* q = a + 4 * h;
    b[4 * h + 0] = _mm256_unpacklo_epi64(q[0], q[2]);  // word 0 | word 4 of four blocks
    b[4 * h + 1] = _mm256_unpackhi_epi64(q[0], q[2]);  // 1 | 5
    b[4 * h + 2] = _mm256_unpacklo_epi64(q[1], q[3]);  // 2 | 6
    b[4 * h + 3] = _mm256_unpackhi_epi64(q[1], q[3]);  // 3 | 7
  }
  for (int t = 0; t < 4; ++t) {
    v[t] = _mm256_permute2x128_si256(b[t], b[4 + t], 0x20);
    v[t + 4] = _mm256_permute2x128_si256(b[t], b[4 + t], 0x31);
  }
}

// The F32 scales of blocks first..first + n - 1 of a row (n <= 8), zero past n.
template <size_t kBlockBytes>
HWY_INLINE __m256 BlockScalesUpTo8(const uint8_t* first, int n) {
  if (n >= 8) return BlockScales8<kBlockBytes>(first);
  alignas(32) float d[8] = {};
  for (int j = 0; j < n; ++j) d[j] = BlockScale(first + j * kBlockBytes);
  return _mm256_load_ps(d);
}

#if HWY_TARGET == HWY_AVX3_DL
// One weight row's group of sixteen blocks, ready for every activation row of
// a tile: words[t] lane j = word t (elements 4t..4t+3) of block j, plus 128
// on signed levels (dpbusd takes unsigned x signed bytes; the activations'
// offset_sums start the sum at -128 * their block sums), and the sixteen F32
// scales. Blocks past the row's end (the last group of a row whose block
// count is not a multiple of 16) are zero levels with scale 0, and their
// lanes are masked. Acc: the sixteen canonical lanes of one (row,
// activation row).
template <class Levels>
struct WeightGroup {
  static constexpr bool kUnsigned = IsUnsignedLevels<Levels>();
  static constexpr int kBlocks = 16;
  using Acc = __m512;
  __m512i words[8];
  __m512 dw;

  static HWY_INLINE Acc Zero() { return _mm512_setzero_ps(); }

  HWY_INLINE void Load(const uint8_t* row, int64_t first_block, int n) {
    const uint8_t* block = row + first_block * Levels::kBlockBytes;
    dw = _mm512_insertf32x8(_mm512_castps256_ps512(BlockScalesUpTo8<Levels::kBlockBytes>(block, n)),
                            BlockScalesUpTo8<Levels::kBlockBytes>(block + 8 * Levels::kBlockBytes, n - 8), 1);
    auto level = [&](int j) { return j < n ? Levels::Load(block + j * Levels::kBlockBytes) : _mm256_setzero_si256(); };
    // 16 x 8 transpose of 32-bit words in three rounds of two-source
    // permutes (24, where 256-bit shuffles take 48 for two halves). In:
    // z[q] = blocks 2q, 2q + 1 (element e: block 2q + e / 8, word e % 8).
    __m512i z[8];
    for (int q = 0; q < 8; ++q) z[q] = _mm512_inserti64x4(_mm512_castsi256_si512(level(2 * q)), level(2 * q + 1), 1);
    // Round 1: four blocks, words 0..3 or 4..7 (element f: block f % 4, word f / 4).
    const __m512i lo_words = _mm512_setr_epi32(0, 8, 16, 24, 1, 9, 17, 25, 2, 10, 18, 26, 3, 11, 19, 27);
    const __m512i hi_words = _mm512_setr_epi32(4, 12, 20, 28, 5, 13, 21, 29, 6, 14, 22, 30, 7, 15, 23, 31);
    __m512i lo[4], hi[4];  // blocks 4i..4i + 3
    for (int i = 0; i < 4; ++i) {
      lo[i] = _mm512_permutex2var_epi32(z[2 * i], lo_words, z[2 * i + 1]);
      hi[i] = _mm512_permutex2var_epi32(z[2 * i], hi_words, z[2 * i + 1]);
    }
    // Round 2: eight blocks, two words (element f: block f % 8, word w + f / 8);
    // word w of block j < 4 is element 4w + j of the first source, of block
    // j >= 4 element 4w + j - 4 of the second (index 16 + ...).
    const __m512i first_pair = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
    const __m512i second_pair = _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
    __m512i eight[2][4];  // [blocks 0..7 | 8..15][words 0-1, 2-3, 4-5, 6-7]
    for (int h = 0; h < 2; ++h) {
      eight[h][0] = _mm512_permutex2var_epi32(lo[2 * h], first_pair, lo[2 * h + 1]);
      eight[h][1] = _mm512_permutex2var_epi32(lo[2 * h], second_pair, lo[2 * h + 1]);
      eight[h][2] = _mm512_permutex2var_epi32(hi[2 * h], first_pair, hi[2 * h + 1]);
      eight[h][3] = _mm512_permutex2var_epi32(hi[2 * h], second_pair, hi[2 * h + 1]);
    }
    // Round 3: one word of sixteen blocks.
    const __m512i even_word = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
    const __m512i odd_word = _mm512_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
    for (int p = 0; p < 4; ++p) {
      words[2 * p] = _mm512_permutex2var_epi32(eight[0][p], even_word, eight[1][p]);
      words[2 * p + 1] = _mm512_permutex2var_epi32(eight[0][p], odd_word, eight[1][p]);
    }
    if constexpr (!kUnsigned) {
      for (int t = 0; t < 8; ++t) words[t] = _mm512_xor_si512(words[t], _mm512_set1_epi8(static_cast<char>(0x80)));
    }
  }

  // acc lanes j < n += exact dot of block j with the activations' block j
  // (blocks first_block.. of row x) times dw_j * dx_j. Eight dpbusd in two
  // chains (latency), one convert, one multiply, one FMA.
  HWY_INLINE void Accumulate(Acc& acc, const ActRow& x, int64_t first_block, int n) const {
    const int8_t* xs = x.qs + first_block * kQK;
    __m512i even = kUnsigned ? _mm512_setzero_si512() : _mm512_loadu_si512(x.offset_sums + first_block);
    __m512i odd = _mm512_setzero_si512();
    for (int t = 0; t < 8; t += 2) {
      even = _mm512_dpbusd_epi32(even, words[t], _mm512_loadu_si512(xs + 64 * t));
      odd = _mm512_dpbusd_epi32(odd, words[t + 1], _mm512_loadu_si512(xs + 64 * t + 64));
    }
    const __m512 dot = _mm512_cvtepi32_ps(_mm512_add_epi32(even, odd));
    const __m512 scale = _mm512_mul_ps(dw, _mm512_loadu_ps(x.d + first_block));
    acc = n == kBlocks ? _mm512_fmadd_ps(dot, scale, acc)
                       : _mm512_mask3_fmadd_ps(dot, scale, acc, static_cast<__mmask16>((1u << n) - 1));
  }

  static HWY_INLINE float Reduce(Acc acc) {
    return ReduceLanes8(_mm256_add_ps(_mm512_castps512_ps256(acc), _mm512_extractf32x8_ps(acc, 1)));
  }

  // The group as stored in a prepared row (Blocks32Kernel::Prepare): the
  // eight word vectors, then the scales; kPreparedBytes per group, 64-aligned.
  static constexpr size_t kPreparedBytes = 9 * 64;
  HWY_INLINE void Store(uint8_t* p) const {
    for (int t = 0; t < 8; ++t) _mm512_store_si512(p + 64 * t, words[t]);
    _mm512_store_ps(p + 8 * 64, dw);
  }
  HWY_INLINE void LoadPrepared(const uint8_t* p) {
    for (int t = 0; t < 8; ++t) words[t] = _mm512_load_si512(p + 64 * t);
    dw = _mm512_load_ps(p + 8 * 64);
  }
};

#else  // AVX2, AVX3: 256-bit vectors, maddubs

// One weight row's eight blocks, half of a kQ8X group: words[t] lane j =
// |word t of block j| with the signs in signs[t] (maddubs takes unsigned x
// signed bytes: |w| x sign(x, w)), and the eight F32 scales; blocks past the
// row's end are zero with scale 0 (their lanes masked). Acc: the sixteen
// canonical lanes of one (row, activation row) as two halves; a half group
// starting at block k feeds half (k / 8) mod 2.
template <class Levels>
struct WeightGroup {
  static constexpr bool kUnsigned = IsUnsignedLevels<Levels>();
  static constexpr int kBlocks = 8;
  struct Acc {
    __m256 half[2];
  };
  __m256i words[8];
  __m256i signs[8];
  __m256 dw;

  static HWY_INLINE Acc Zero() { return Acc{{_mm256_setzero_ps(), _mm256_setzero_ps()}}; }

  HWY_INLINE void Load(const uint8_t* row, int64_t first_block, int n) {
    const uint8_t* block = row + first_block * Levels::kBlockBytes;
    dw = BlockScalesUpTo8<Levels::kBlockBytes>(block, n);
    for (int j = 0; j < 8; ++j) words[j] = j < n ? Levels::Load(block + j * Levels::kBlockBytes) : _mm256_setzero_si256();
    TransposeWords8x8(words);
    if constexpr (!kUnsigned) {
      for (int t = 0; t < 8; ++t) {
        signs[t] = words[t];
        words[t] = _mm256_sign_epi8(words[t], words[t]);
      }
    }
  }

  // The half's lanes j < n += exact block dot times dw_j * dx_j; word t of
  // the half's eight blocks is at 64 t (+ 32 for the second half) of the group.
  HWY_INLINE void Accumulate(Acc& acc, const ActRow& x, int64_t first_block, int n) const {
    const int half = static_cast<int>((first_block / kBlocks) % 2);
    const int8_t* xs = x.qs + (first_block - kBlocks * half) * kQK + 32 * half;
    const __m256i ones16 = _mm256_set1_epi16(1);
    __m256i even = _mm256_setzero_si256(), odd = _mm256_setzero_si256();
    for (int t = 0; t < 8; t += 2) {
      for (int u = 0; u < 2; ++u) {
        __m256i xw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xs + 64 * (t + u)));
        if constexpr (!kUnsigned) xw = _mm256_sign_epi8(xw, signs[t + u]);
        __m256i& sum = u == 0 ? even : odd;
        sum = _mm256_add_epi32(sum, _mm256_madd_epi16(_mm256_maddubs_epi16(words[t + u], xw), ones16));
      }
    }
    __m256& a = acc.half[half];
    const __m256 next = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(even, odd)),
                                        _mm256_mul_ps(dw, _mm256_loadu_ps(x.d + first_block)), a);
    a = n == kBlocks ? next : _mm256_blendv_ps(a, next, LiveLanes(n));
  }

  static HWY_INLINE float Reduce(const Acc& acc) { return ReduceLanes8(_mm256_add_ps(acc.half[0], acc.half[1])); }

  // The group as stored in a prepared row (Blocks32Kernel::Prepare): the
  // eight transposed word vectors |w| (kAbsOffset), their signs (kSignOffset;
  // signed levels only) and the scales (kScaleOffset); kPreparedBytes per
  // group, 32-aligned. Both |w| and w are kept so that the register tile
  // (StreamTile) spends no operation on the weights: on the AVX2 ports
  // `sign` competes with maddubs/madd, and one per (row, word) cost ~10%.
  static constexpr size_t kAbsOffset = 0, kSignOffset = 8 * 32, kScaleOffset = (kUnsigned ? 8 : 16) * 32;
  static constexpr size_t kPreparedBytes = kScaleOffset + 32;
  HWY_INLINE void Store(uint8_t* p) const {
    for (int t = 0; t < 8; ++t) {
      _mm256_store_si256(reinterpret_cast<__m256i*>(p + kAbsOffset) + t, words[t]);
      if constexpr (!kUnsigned) _mm256_store_si256(reinterpret_cast<__m256i*>(p + kSignOffset) + t, signs[t]);
    }
    _mm256_store_ps(reinterpret_cast<float*>(p + kScaleOffset), dw);
  }
  HWY_INLINE void LoadPrepared(const uint8_t* p) {
    for (int t = 0; t < 8; ++t) {
      words[t] = _mm256_load_si256(reinterpret_cast<const __m256i*>(p + kAbsOffset) + t);
      if constexpr (!kUnsigned) signs[t] = _mm256_load_si256(reinterpret_cast<const __m256i*>(p + kSignOffset) + t);
    }
    dw = _mm256_load_ps(reinterpret_cast<const float*>(p + kScaleOffset));
  }

  // Register tile over prepared groups [g0, g1): R weight rows (prepared
  // rows at prepared + r * row_bytes) x A activation rows (acts[0..A)) into
  // acc[r][a] (a half-group accumulator pair, as Accumulate). Word-major:
  // per word, the A activation vectors and the R rows' |w| and signs are
  // loaded once and feed R x A exact 4-element dots; per group and (row,
  // activation row), one convert, multiply and FMA. The same integers and
  // the same float operations per (row, activation row) as Accumulate.
  // In L1, one core, AVX2 on Zen 5: 4 x 2 ~96 GMAC/s against ~82 for the
  // one-row, group-major order (Accumulate).
  template <int R, int A, class AccOf>
  static HWY_INLINE void StreamTile(const uint8_t* prepared, size_t row_bytes, const ActRow* acts, int64_t g0,
                                    int64_t g1, int64_t num_blocks, const AccOf& acc) {
    static_assert(!kUnsigned);
    const __m256i ones16 = _mm256_set1_epi16(1);
    for (int64_t g = g0; g < g1; ++g) {
      const int64_t k = g * kBlocks;
      const int n = static_cast<int>(std::min<int64_t>(kBlocks, num_blocks - k));
      const int half = static_cast<int>(g % 2);
      const uint8_t* group[R];
      for (int r = 0; r < R; ++r) group[r] = prepared + r * row_bytes + g * kPreparedBytes;
      const int8_t* xs[A];
      for (int a = 0; a < A; ++a) xs[a] = acts[a].qs + (k - kBlocks * half) * kQK + 32 * half;
      __m256i sum[R][A];
      for (int r = 0; r < R; ++r) {
        for (int a = 0; a < A; ++a) sum[r][a] = _mm256_setzero_si256();
      }
      for (int t = 0; t < 8; ++t) {
        __m256i x[A];
        for (int a = 0; a < A; ++a) x[a] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xs[a] + 64 * t));
        for (int r = 0; r < R; ++r) {
          const __m256i abs_w = _mm256_load_si256(reinterpret_cast<const __m256i*>(group[r] + kAbsOffset) + t);
          const __m256i sign_w = _mm256_load_si256(reinterpret_cast<const __m256i*>(group[r] + kSignOffset) + t);
          for (int a = 0; a < A; ++a) {
            sum[r][a] = _mm256_add_epi32(
                sum[r][a], _mm256_madd_epi16(_mm256_maddubs_epi16(abs_w, _mm256_sign_epi8(x[a], sign_w)), ones16));
          }
        }
      }
      for (int r = 0; r < R; ++r) {
        const __m256 dw_r = _mm256_load_ps(reinterpret_cast<const float*>(group[r] + kScaleOffset));
        for (int a = 0; a < A; ++a) {
          __m256& target = acc(r, a).half[half];
          const __m256 next =
              _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum[r][a]), _mm256_mul_ps(dw_r, _mm256_loadu_ps(acts[a].d + k)), target);
          target = n == kBlocks ? next : _mm256_blendv_ps(target, next, LiveLanes(n));
        }
      }
    }
  }
  // Lanes j < n all ones (a partial last group).
  static HWY_INLINE __m256 LiveLanes(int n) {
    return _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)));
  }
};

#endif  // AVX3_DL

// Register tile: one weight row x up to 8 activation rows (kQ8X
// activations). Per group of WeightGroup::kBlocks blocks (16 on AVX3_DL, 8
// elsewhere) the row's blocks are loaded, unpacked and transposed once for
// all activation rows; then per activation row the block dots and one
// convert, one multiply (dw * dx) and one FMA into lanes k mod 16: the
// canonical sequence of dot_ref.h, independent of the tile width and
// position. (2 x 4 and 1 x 16 tiles measured no faster: register spills,
// and the VNNI kernel runs near the dpbusd issue rate.)
template <class Levels>
struct Blocks32Kernel {
  using Group = WeightGroup<Levels>;
  static constexpr int kTileRows = 1;
  static constexpr int kMaxActs = 8;
  static constexpr int kWideActs = 8;

  // out[b] = dot(the row at wrow, acts[b]).
  template <int R, int NB>
  static void Tile(const uint8_t* wrow, size_t stride, int64_t cols, const ActRow* acts, float* out) {
    static_assert(R == 1 && NB >= 1 && NB <= kMaxActs);
    const int64_t num_blocks = cols / kQK;
    typename Group::Acc acc[NB];
    for (int b = 0; b < NB; ++b) acc[b] = Group::Zero();
    Group w;
    for (int64_t k = 0; k < num_blocks; k += Group::kBlocks) {
      const int n = static_cast<int>(std::min<int64_t>(Group::kBlocks, num_blocks - k));
      // Each row is streamed from memory once per tile: request the weights
      // ~1 KB (32 blocks) ahead.
      const char* ahead = reinterpret_cast<const char*>(wrow + (k + 32) * Levels::kBlockBytes);
      for (int line = 0; line < (Group::kBlocks * static_cast<int>(Levels::kBlockBytes) + 63) / 64; ++line) {
        _mm_prefetch(ahead + 64 * line, _MM_HINT_T0);
      }
      w.Load(wrow, k, n);
      for (int b = 0; b < NB; ++b) w.Accumulate(acc[b], acts[b], k, n);
    }
    for (int b = 0; b < NB; ++b) out[b] = Group::Reduce(acc[b]);
    if constexpr (HasMinTerm<Levels>()) AddMinTerms<Levels::kBlockBytes, 1, NB>(wrow, stride, num_blocks, acts, out);
  }

  // Prefill (matmul.cc's RunRowsPrepared; types without a min term): each
  // weight row's groups are unpacked and transposed once (Prepare) for every
  // activation tile, instead of once per tile; the tiles walk the groups in
  // chunks of kPreparedChunk (32 blocks), kPreparedRows rows per chunk (the
  // rows' chunks, 4 x 2 x 576 bytes on AVX3_DL, 4 x 4 x 288 on AVX2 / AVX3,
  // and the tile's activations stay in L1). Same operations per (row,
  // activation row) as Tile, in the same order.
  static constexpr bool kPreparable = !HasMinTerm<Levels>();
  static constexpr int kPreparedRows = 4;
  static constexpr int64_t kPreparedChunk = 32 / Group::kBlocks;
  struct Accumulators {
    typename Group::Acc acc[kMaxActs];
    Accumulators() {
      for (auto& a : acc) a = Group::Zero();
    }
  };

  // Groups of 16 blocks per row (the last one may be partial).
  static int64_t Blocks(int64_t cols) { return (cols / kQK + Group::kBlocks - 1) / Group::kBlocks; }
  static size_t PreparedRowBytes(int64_t cols) {
    return static_cast<size_t>(Blocks(cols)) * Group::kPreparedBytes;
  }
  static void Prepare(const uint8_t* wrow, int64_t cols, uint8_t* dst) {
    const int64_t num_blocks = cols / kQK;
    Group w;
    for (int64_t g = 0; g < Blocks(cols); ++g) {
      const int64_t k = g * Group::kBlocks;
      w.Load(wrow, k, static_cast<int>(std::min<int64_t>(Group::kBlocks, num_blocks - k)));
      w.Store(dst + g * Group::kPreparedBytes);
    }
  }
  // The activations need nothing more per tile.
  static size_t PreparedActBytes(int64_t) { return 0; }
  static void PrepareActs(const ActRow*, int, int64_t, uint8_t*) {}

  // Groups [g0, g1) of a prepared row against the tile's NB activation rows, into acc.
  template <int NB>
  static void PreparedTile(const uint8_t* prepared, const uint8_t* /*prepared_acts*/, int64_t g0, int64_t g1,
                           int64_t cols, const ActRow* acts, Accumulators& acc) {
    Group w;
    for (int64_t g = g0; g < g1; ++g) {
      w.LoadPrepared(prepared + g * Group::kPreparedBytes);
      const int64_t k = g * Group::kBlocks;
      const int n = static_cast<int>(std::min<int64_t>(Group::kBlocks, cols / kQK - k));
      for (int b = 0; b < NB; ++b) w.Accumulate(acc.acc[b], acts[b], k, n);
    }
  }
  template <int NB>
  static void StoreTile(const Accumulators& acc, float* out) {
    for (int b = 0; b < NB; ++b) out[b] = Group::Reduce(acc.acc[b]);
  }

#if HWY_TARGET != HWY_AVX3_DL
  // R prepared rows (at prepared + r * row_bytes) at once, groups [g0, g1),
  // against the tile's NB activation rows: register tiles of R rows x 2
  // activation rows (Group::StreamTile); matmul.cc's RunRowsPrepared prefers
  // this to one PreparedTile per row and picks R (1..kPreparedRows). acc[r] is
  // row r's. Same operations per (row, activation row) as PreparedTile.
  template <int R, int NB>
  static void PreparedRowsTile(const uint8_t* prepared, size_t row_bytes, const uint8_t* /*prepared_acts*/, int64_t g0,
                               int64_t g1, int64_t cols, const ActRow* acts, Accumulators* acc) {
    static_assert(R >= 1 && R <= kPreparedRows);
    const int64_t num_blocks = cols / kQK;
    for (int a0 = 0; a0 + 2 <= NB; a0 += 2) {
      Group::template StreamTile<R, 2>(prepared, row_bytes, acts + a0, g0, g1, num_blocks,
                                       [&](int r, int a) -> typename Group::Acc& { return acc[r].acc[a0 + a]; });
    }
    if constexpr (NB % 2 == 1) {
      Group::template StreamTile<R, 1>(prepared, row_bytes, acts + NB - 1, g0, g1, num_blocks,
                                       [&](int r, int) -> typename Group::Acc& { return acc[r].acc[NB - 1]; });
    }
  }
#endif
};

using Q8_0Kernel = Blocks32Kernel<Q8_0Levels>;
using Q4_0Kernel = Blocks32Kernel<Q4_0Levels>;
using Q4_1Kernel = Blocks32Kernel<Q4_1Levels>;
using Q5_0Kernel = Blocks32Kernel<Q5_0Levels>;
using Q5_1Kernel = Blocks32Kernel<Q5_1Levels>;
using IQ4NLKernel = Blocks32Kernel<IQ4NLLevels>;

#elif CAIRN_ARM_SIMD_TARGET  // NEON, and the SVE targets (AdvSIMD code)

// Levels of a 32-element block as two int8x16 (elements 0..15, 16..31).
struct Q8_0Levels {
  static constexpr size_t kBlockBytes = sizeof(BlockQ8_0);
  static HWY_INLINE void Load(const uint8_t* block, int8x16_t* lo, int8x16_t* hi) {
    *lo = vld1q_s8(reinterpret_cast<const int8_t*>(block + 2));
    *hi = vld1q_s8(reinterpret_cast<const int8_t*>(block + 18));
  }
};

struct Q4_0Levels {
  static constexpr size_t kBlockBytes = sizeof(BlockQ4_0);
  static HWY_INLINE void Load(const uint8_t* block, int8x16_t* lo, int8x16_t* hi) {
    const uint8x16_t raw = vld1q_u8(block + 2);
    const int8x16_t eight = vdupq_n_s8(8);
    *lo = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(raw, vdupq_n_u8(0x0F))), eight);
    *hi = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(raw, 4)), eight);
  }
};

// Low nibbles (elements 0..15) and high nibbles (16..31) of 16 bytes.
HWY_INLINE void Nibbles(const uint8_t* qs, uint8x16_t* lo, uint8x16_t* hi) {
  const uint8x16_t raw = vld1q_u8(qs);
  *lo = vandq_u8(raw, vdupq_n_u8(0x0F));
  *hi = vshrq_n_u8(raw, 4);
}

// 0xFF in byte j of lo (elements 0..15) / hi (16..31) where bit j of the
// little-endian uint32 at qh is set.
HWY_INLINE void FifthBitMask(const uint8_t* qh, uint8x16_t* lo, uint8x16_t* hi) {
  uint32_t bits;
  std::memcpy(&bits, qh, sizeof bits);
  const uint8x8_t b = vcreate_u8(bits);
  const uint8x16_t table = vcombine_u8(b, b);
  const uint8x16_t select = vreinterpretq_u8_u64(vdupq_n_u64(0x8040201008040201ULL));
  *lo = vtstq_u8(vqtbl1q_u8(table, vcombine_u8(vdup_n_u8(0), vdup_n_u8(1))), select);
  *hi = vtstq_u8(vqtbl1q_u8(table, vcombine_u8(vdup_n_u8(2), vdup_n_u8(3))), select);
}

struct Q4_1Levels {
  static constexpr size_t kBlockBytes = sizeof(BlockQ4_1);
  static constexpr bool kHasMin = true;
  static HWY_INLINE void Load(const uint8_t* block, int8x16_t* lo, int8x16_t* hi) {
    uint8x16_t l, h;
    Nibbles(block + 4, &l, &h);
    *lo = vreinterpretq_s8_u8(l);
    *hi = vreinterpretq_s8_u8(h);
  }
};

struct Q5_0Levels {
  static constexpr size_t kBlockBytes = sizeof(BlockQ5_0);
  static HWY_INLINE void Load(const uint8_t* block, int8x16_t* lo, int8x16_t* hi) {
    uint8x16_t l, h, ml, mh;
    Nibbles(block + 6, &l, &h);
    FifthBitMask(block + 2, &ml, &mh);
    const uint8x16_t top = vdupq_n_u8(0xF0);  // nibble - 16 where the bit is clear
    *lo = vreinterpretq_s8_u8(vorrq_u8(l, vbicq_u8(top, ml)));
    *hi = vreinterpretq_s8_u8(vorrq_u8(h, vbicq_u8(top, mh)));
  }
};

struct Q5_1Levels {
  static constexpr size_t kBlockBytes = sizeof(BlockQ5_1);
  static constexpr bool kHasMin = true;
  static HWY_INLINE void Load(const uint8_t* block, int8x16_t* lo, int8x16_t* hi) {
    uint8x16_t l, h, ml, mh;
    Nibbles(block + 8, &l, &h);
    FifthBitMask(block + 4, &ml, &mh);
    const uint8x16_t bit = vdupq_n_u8(0x10);
    *lo = vreinterpretq_s8_u8(vorrq_u8(l, vandq_u8(ml, bit)));
    *hi = vreinterpretq_s8_u8(vorrq_u8(h, vandq_u8(mh, bit)));
  }
};

struct IQ4NLLevels {
  static constexpr size_t kBlockBytes = sizeof(BlockIQ4NL);
  static HWY_INLINE void Load(const uint8_t* block, int8x16_t* lo, int8x16_t* hi) {
    uint8x16_t l, h;
    Nibbles(block + 2, &l, &h);
    const int8x16_t codebook = vld1q_s8(kIQ4NLValues);
    *lo = vqtbl1q_s8(codebook, l);
    *hi = vqtbl1q_s8(codebook, h);
  }
};

template <class Levels>
constexpr bool HasMinTerm() {
  if constexpr (requires { Levels::kHasMin; }) return Levels::kHasMin;
  return false;
}

// Lane i = exact sum of w[j] * x[j] for j in 4i..4i+3 of 16 elements.
HWY_INLINE int32x4_t DotLanes(int8x16_t w, int8x16_t x) {
#if defined(__ARM_FEATURE_DOTPROD)
  return vdotq_s32(vdupq_n_s32(0), w, x);
#else
  const int32x4_t lo = vpaddlq_s16(vmull_s8(vget_low_s8(w), vget_low_s8(x)));
  const int32x4_t hi = vpaddlq_s16(vmull_high_s8(w, x));
  return vpaddq_s32(lo, hi);
#endif
}

// The canonical sequence of dot_ref.h on natural (kQ8, kQ8_1) activations:
// per block two 16-byte dots leave four partial lanes, pairwise adds of four
// blocks' lanes give one exact block dot per lane, and one multiply and one
// FMA per four blocks feed lanes k mod 16 (acc[q]: lanes 4q..4q + 3). The
// tail (< 4 blocks) takes one scalar FMA per block.
template <class Levels>
struct Blocks32Kernel {
  template <int NB>
  static void Rows(const uint8_t* wrow, int64_t cols, const ActRow* acts, float* out) {
    float32x4_t acc[NB][4];
    for (int b = 0; b < NB; ++b) {
      for (int q = 0; q < 4; ++q) acc[b][q] = vdupq_n_f32(0.0f);
    }
    const int64_t num_blocks = cols / kQK;
    int64_t k = 0;
    for (; k + 4 <= num_blocks; k += 4) {
      int8x16_t w_lo[4], w_hi[4];
      alignas(16) float dw[4];
      for (int j = 0; j < 4; ++j) {
        const uint8_t* block = wrow + (k + j) * Levels::kBlockBytes;
        Levels::Load(block, &w_lo[j], &w_hi[j]);
        dw[j] = F16ToF32(LoadHalfBits(block));
      }
      const float32x4_t dwv = vld1q_f32(dw);
      const int quarter = static_cast<int>((k % 16) / 4);
      for (int b = 0; b < NB; ++b) {
        int32x4_t p[4];
        for (int j = 0; j < 4; ++j) {
          const int8_t* x = acts[b].qs + (k + j) * kQK;
          p[j] = vaddq_s32(DotLanes(w_lo[j], vld1q_s8(x)), DotLanes(w_hi[j], vld1q_s8(x + 16)));
        }
        const int32x4_t sums = vpaddq_s32(vpaddq_s32(p[0], p[1]), vpaddq_s32(p[2], p[3]));
        acc[b][quarter] =
            vfmaq_f32(acc[b][quarter], vcvtq_f32_s32(sums), vmulq_f32(dwv, vld1q_f32(acts[b].d + k)));
      }
    }
    float lanes[NB][16];
    for (int b = 0; b < NB; ++b) {
      for (int q = 0; q < 4; ++q) vst1q_f32(lanes[b] + 4 * q, acc[b][q]);
    }
    for (; k < num_blocks; ++k) {
      const uint8_t* block = wrow + k * Levels::kBlockBytes;
      int8x16_t w_lo, w_hi;
      Levels::Load(block, &w_lo, &w_hi);
      const float dw = F16ToF32(LoadHalfBits(block));
      for (int b = 0; b < NB; ++b) {
        const int8_t* x = acts[b].qs + k * kQK;
        const int isum = vaddvq_s32(vaddq_s32(DotLanes(w_lo, vld1q_s8(x)), DotLanes(w_hi, vld1q_s8(x + 16))));
        lanes[b][k % 16] = std::fma(static_cast<float>(isum), dw * acts[b].d[k], lanes[b][k % 16]);
      }
    }
    for (int b = 0; b < NB; ++b) out[b] = ::cairn::kernels::ReduceLanes16(lanes[b]);
    if constexpr (HasMinTerm<Levels>()) {
      // The canonical min lanes (dot_ref.h), block k in lane k mod 8: two
      // 4-lane FMAs per eight blocks, the tail one scalar FMA per block.
      const int64_t num_blocks = cols / kQK;
      for (int b = 0; b < NB; ++b) {
        float32x4_t m_lo = vdupq_n_f32(0.0f), m_hi = vdupq_n_f32(0.0f);
        int64_t k = 0;
        for (; k + 8 <= num_blocks; k += 8) {
          float m[8];
          for (int j = 0; j < 8; ++j) m[j] = F16ToF32(LoadHalfBits(wrow + (k + j) * Levels::kBlockBytes + 2));
          m_lo = vfmaq_f32(m_lo, vld1q_f32(m), vld1q_f32(acts[b].s + k));
          m_hi = vfmaq_f32(m_hi, vld1q_f32(m + 4), vld1q_f32(acts[b].s + k + 4));
        }
        float lanes[8];
        vst1q_f32(lanes, m_lo);
        vst1q_f32(lanes + 4, m_hi);
        for (int64_t t = k; t < num_blocks; ++t) {
          const float m = F16ToF32(LoadHalfBits(wrow + t * Levels::kBlockBytes + 2));
          lanes[t - k] = vgetq_lane_f32(vfmaq_f32(vdupq_n_f32(lanes[t - k]), vdupq_n_f32(m), vdupq_n_f32(acts[b].s[t])), 0);
        }
        out[b] += ::cairn::kernels::ReduceLanes8(lanes);
      }
    }
  }
};

using Q8_0Kernel = Blocks32Kernel<Q8_0Levels>;
using Q4_0Kernel = Blocks32Kernel<Q4_0Levels>;
using Q4_1Kernel = Blocks32Kernel<Q4_1Levels>;
using Q5_0Kernel = Blocks32Kernel<Q5_0Levels>;
using Q5_1Kernel = Blocks32Kernel<Q5_1Levels>;
using IQ4NLKernel = Blocks32Kernel<IQ4NLLevels>;

#else  // Portable targets: the scalar reference is the kernel.
using Q8_0Kernel = RefKernel<DType::kQ8_0>;
using Q4_0Kernel = RefKernel<DType::kQ4_0>;
using Q4_1Kernel = RefKernel<DType::kQ4_1>;
using Q5_0Kernel = RefKernel<DType::kQ5_0>;
using Q5_1Kernel = RefKernel<DType::kQ5_1>;
using IQ4NLKernel = RefKernel<DType::kIQ4_NL>;

#endif

}  // namespace HWY_NAMESPACE
}  // namespace cairn::kernels
HWY_AFTER_NAMESPACE();

#endif  // toggle guard
