// AVX2 prefill kernels for Q4_K, Q5_K and Q6_K weights (matmul.cc's
// RunRowsPrepared, widths above kKQuantMaxActs), with the activation rows of
// a tile in the vector lanes. Included by matmul.cc once per Highway target,
// after gemm_kquant-inl.h, whose kernels keep decode (width 1) and the
// verification widths (Tile, 2..8).
//
// gemm_kquant-inl.h's tile puts 32 levels of one weight row in a vector and
// needs, per (row, activation row, super-block), a horizontal reduction of
// its int32 lanes to the exact sumi / summ (hadds: about a fifth of the
// tile's vector work). Here lane a of every vector is activation row a of
// the tile (eight lanes). The tile's activations are rearranged once per
// call (PrepareActs) so that one 32-byte load holds four consecutive levels
// of each of the eight rows; the weight row's four matching levels are
// broadcast from memory (a load, no shuffle), and maddubs(weights, acts)
// gives, in the two int16 lanes of activation row a, the sums of two
// products. Adding those over a sub-block and one madd with the sub-block's
// scale (broadcast) leaves in int32 lane a that row's scaled sub-block dot:
// the per-row sums come out in lanes, with no reduction. The min / offset
// term is the same shape: the tile's bsums in pairs of sub-blocks, one madd
// with the row's pair of mins (scales) per pair.
//
// The integers are exact (bounds below), so sumi and summ are those of
// dot_ref.h; the F32 operations are the reference's per (row, activation
// row): factors dx * d and dx * dmin (one rounding each), one FMA each into
// the lane pair of super-block i mod 4 (the min term as fnmadd, the same
// value as fma with the negated factor), and ReduceLanes8's additions at
// the end. So the results are bit-identical to MatMulReference and to the
// narrower widths.
//
// Per 256 levels of one weight row and eight activation rows (Q4_K): 64
// maddubs, 56 16-bit adds, 8 + 4 madds and ~12 32-bit adds, against 64
// maddubs, 48 adds, 24 madds and ~40 reduction and scale operations in the
// tile; one-core MatMul (Q4_K, width 512) 59 -> 88 GMAC/s on Intel Emerald
// Rapids (docs/kernels-matmul.md).
#if defined(CAIRN_KERNELS_GEMM_KQUANT_AVX2_PREFILL_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CAIRN_KERNELS_GEMM_KQUANT_AVX2_PREFILL_INL_H_
#undef CAIRN_KERNELS_GEMM_KQUANT_AVX2_PREFILL_INL_H_
#else
#define CAIRN_KERNELS_GEMM_KQUANT_AVX2_PREFILL_INL_H_
#endif

#include <hwy/highway.h>

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

#if HWY_TARGET == HWY_AVX2

// Activation rows per prefill tile: one per 32-bit lane.
inline constexpr int kActLanes = 8;
static_assert(kActLanes == kKQuantMaxActs);

// The 32-bit word at p in every lane (vpbroadcastd from memory: a load-port
// operation, no shuffle).
HWY_INLINE __m256i BroadcastWord32(const void* p) {
  int32_t word;
  std::memcpy(&word, p, 4);
  return _mm256_set1_epi32(word);
}

// An optimization barrier on one vector (emits no instruction): GCC
// reassociates a chain of integer adds into a tree, which keeps every
// product of a sub-block live at once; in ActLaneRows that spilled half of
// them to the stack (71 against 88 GMAC/s on one core with the barrier).
HWY_INLINE void KeepChain(__m256i& v) { __asm__("" : "+x"(v)); }

// Two int16 values as one 32-bit word (low: first), the operand of a madd
// broadcast.
inline int32_t Int16Pair(int first, int second) {
  return static_cast<int32_t>((static_cast<uint32_t>(static_cast<uint16_t>(second)) << 16) |
                              static_cast<uint16_t>(first));
}

// One super-block of a tile's activations (kActLanes rows), 32-aligned:
// quads[k] lane a = levels 4k .. 4k + 3 of row a (natural order); pairs[k]
// lane a = the int16 pair of row a that the type's offset term reads
// (Q4_K/Q5_K: the bsums of 32-element sub-blocks 2k, 2k + 1; Q6_K: of
// 16-element sub-blocks 2k, 2k + 1); dx[a] = the row's scale. Rows past the
// tile's count are zero (their lanes compute zeros nobody reads).
template <int kPairs>
struct alignas(32) ActLaneBlock {
  int32_t quads[kQKK / 4][kActLanes];
  int32_t pairs[kPairs][kActLanes];
  float dx[kActLanes];
};

// The eight int32 vectors v[0..7] transposed (v[k] lane a -> v[a] lane k).
HWY_INLINE void Transpose8x32(__m256i v[8]) {
  __m256i t[8], u[8];
  for (int k = 0; k < 8; k += 2) {
    t[k] = _mm256_unpacklo_epi32(v[k], v[k + 1]);      // a0 b0 a1 b1 | a4 b4 a5 b5
    t[k + 1] = _mm256_unpackhi_epi32(v[k], v[k + 1]);  // a2 b2 a3 b3 | a6 b6 a7 b7
  }
  for (int k = 0; k < 8; k += 4) {
    for (int h = 0; h < 2; ++h) {
      u[k + h] = _mm256_unpacklo_epi64(t[k + h], t[k + 2 + h]);      // a0 b0 c0 d0 | a4 .. (h = 0)
      u[k + 2 + h] = _mm256_unpackhi_epi64(t[k + h], t[k + 2 + h]);  // a1 b1 c1 d1 | a5 .. (h = 0)
    }
  }
  // u[0]: column 0 | 4 of rows 0-3, u[2]: 1 | 5, u[1]: 2 | 6, u[3]: 3 | 7; u[4..7] the same of rows 4-7.
  const int column_of[4] = {0, 2, 1, 3};
  for (int c = 0; c < 4; ++c) {
    const __m256i lo = u[column_of[c]], hi = u[4 + column_of[c]];
    v[c] = _mm256_permute2x128_si256(lo, hi, 0x20);
    v[c + 4] = _mm256_permute2x128_si256(lo, hi, 0x31);
  }
}

// One super-block of a prepared weight row (32-aligned, padded to a
// multiple of 32 bytes): the 256 levels in natural order, one madd
// multiplier per sub-block as an int16 pair (broadcast as a 32-bit word),
// kPairs offset-term multiplier pairs, and the F32 d and dmin.
template <int kSubBlocks, int kPairs>
struct alignas(32) PreparedLanes {
  uint8_t levels[kQKK];
  int32_t mult[kSubBlocks];
  int32_t offset[kPairs];
  float d, dmin;
};

// Q4_K / Q5_K: 8 sub-blocks of 32 with 6-bit scales and mins.
template <bool kFiveBit>
struct ScaleMinLanes {
  using Block = std::conditional_t<kFiveBit, BlockQ5K, BlockQ4K>;
  static constexpr int kSubBlocks = 8;
  // Quads (4 levels) per int16 sum: each lane adds 2 products per quad,
  // |levels| <= 15 (31 with the fifth bit), |activations| <= 127:
  // 16 * 15 * 127 = 30480 and 8 * 31 * 127 = 31496, both < 2^15.
  static constexpr int kQuadsPerSum = kFiveBit ? 4 : 8;
  static constexpr int kPairs = 4;
  static constexpr bool kHasMin = true;

  // mult[j] = (scale j, scale j); offset[k] = (min 2k, min 2k + 1).
  using Prepared = PreparedLanes<kSubBlocks, kPairs>;

  static void Prepare(const Block& block, Prepared* p) {
    __m256i qh = _mm256_setzero_si256();
    if constexpr (kFiveBit) qh = LoadBytes32(block.qh);
    for (int g = 0; g < 4; ++g) {
      __m256i lo, hi;
      LoadKLevels<kFiveBit>(block.qs, qh, g, &lo, &hi);
      _mm256_store_si256(reinterpret_cast<__m256i*>(p->levels + 64 * g), lo);
      _mm256_store_si256(reinterpret_cast<__m256i*>(p->levels + 64 * g + 32), hi);
    }
    int sc[kSubBlocks], m[kSubBlocks];
    for (int j = 0; j < kSubBlocks; ++j) UnpackKScaleMin(block.scales, j, &sc[j], &m[j]);
    for (int j = 0; j < kSubBlocks; ++j) p->mult[j] = Int16Pair(sc[j], sc[j]);
    for (int k = 0; k < kPairs; ++k) p->offset[k] = Int16Pair(m[2 * k], m[2 * k + 1]);
    p->d = _cvtsh_ss(LoadHalfBits(block.d));
    p->dmin = _cvtsh_ss(LoadHalfBits(block.dmin));
  }

  // Pair k of one activation row's super-block (16 bsums of 16 elements):
  // the sums of its 32-element sub-blocks 2k and 2k + 1 (|sum| <= 32 * 127).
  static int32_t OffsetPair(const int16_t* bsums, int k) {
    return Int16Pair(bsums[4 * k] + bsums[4 * k + 1], bsums[4 * k + 2] + bsums[4 * k + 3]);
  }
};

// Q6_K: 16 sub-blocks of 16, int8 scales, levels 0..63 with offset 32.
struct Q6Lanes {
  using Block = BlockQ6K;
  static constexpr int kSubBlocks = 16;
  // 2 quads per int16 sum: 4 * 63 * 127 = 32004 < 2^15.
  static constexpr int kQuadsPerSum = 2;
  static constexpr int kPairs = 8;
  static constexpr bool kHasMin = false;

  // mult[k] = (scale k, scale k); offset[k] = (scale 2k, scale 2k + 1), the
  // offset-32 term's multipliers; dmin unused (0).
  using Prepared = PreparedLanes<kSubBlocks, kPairs>;

  static void Prepare(const Block& block, Prepared* p) {
    for (int g = 0; g < 4; ++g) {
      __m256i first, second;
      LoadQ6Levels(block, g, &first, &second);
      _mm256_store_si256(reinterpret_cast<__m256i*>(p->levels + 64 * g), first);
      _mm256_store_si256(reinterpret_cast<__m256i*>(p->levels + 64 * g + 32), second);
    }
    for (int k = 0; k < kSubBlocks; ++k) p->mult[k] = Int16Pair(block.scales[k], block.scales[k]);
    for (int k = 0; k < kPairs; ++k) p->offset[k] = Int16Pair(block.scales[2 * k], block.scales[2 * k + 1]);
    p->d = _cvtsh_ss(LoadHalfBits(block.d));
    p->dmin = 0.0f;
  }

  // Pair k: the bsums of 16-element sub-blocks 2k and 2k + 1.
  static int32_t OffsetPair(const int16_t* bsums, int k) { return Int16Pair(bsums[2 * k], bsums[2 * k + 1]); }
};

// Per (weight row, tile): the reference's lane accumulators with the tile's
// activation rows in the lanes: d[k] lane a = lane 2k of row a's eight, m[k]
// lane a = lane 2k + 1 (Q6_K: never written, +0 as in the reference).
struct ActLaneAccumulators {
  alignas(32) float d[4][kActLanes] = {};
  alignas(32) float m[4][kActLanes] = {};
};

// Super-blocks [i0, i1) of R prepared weight rows (row r at
// prepared + r * row_bytes) against one prepared activation tile, into acc[r].
template <class Type, int R>
HWY_NOINLINE void ActLaneRows(const uint8_t* prepared, size_t row_bytes, const uint8_t* prepared_acts, int64_t i0,
                              int64_t i1, ActLaneAccumulators* acc) {
  using Prepared = typename Type::Prepared;
  using Acts = ActLaneBlock<Type::kPairs>;
  constexpr int kQuadsPerSubBlock = kQKK / 4 / Type::kSubBlocks;
  const auto* x_blocks = reinterpret_cast<const Acts*>(prepared_acts);
  for (int64_t i = i0; i < i1; ++i) {
    const Acts& x = x_blocks[i];
    const Prepared* w[R];
    for (int r = 0; r < R; ++r) w[r] = reinterpret_cast<const Prepared*>(prepared + r * row_bytes) + i;
    // dots[r] lane a: sum_j scale_j * dot_j (exact; |sum| < 2^31).
    __m256i dots[R];
    for (int r = 0; r < R; ++r) dots[r] = _mm256_setzero_si256();
    for (int j = 0; j < Type::kSubBlocks; ++j) {
      for (int part = 0; part < kQuadsPerSubBlock / Type::kQuadsPerSum; ++part) {
        const int q0 = j * kQuadsPerSubBlock + part * Type::kQuadsPerSum;
        __m256i sum[R];
        for (int q = 0; q < Type::kQuadsPerSum; ++q) {
          const __m256i acts = _mm256_load_si256(reinterpret_cast<const __m256i*>(x.quads[q0 + q]));
          for (int r = 0; r < R; ++r) {
            const __m256i p = _mm256_maddubs_epi16(BroadcastWord32(w[r]->levels + 4 * (q0 + q)), acts);
            sum[r] = q == 0 ? p : _mm256_add_epi16(sum[r], p);
            KeepChain(sum[r]);
          }
        }
        for (int r = 0; r < R; ++r) {
          dots[r] = _mm256_add_epi32(dots[r], _mm256_madd_epi16(sum[r], BroadcastWord32(&w[r]->mult[j])));
        }
      }
    }
    __m256i pairs[Type::kPairs];
    for (int k = 0; k < Type::kPairs; ++k) {
      pairs[k] = _mm256_load_si256(reinterpret_cast<const __m256i*>(x.pairs[k]));
    }
    const __m256 dx = _mm256_load_ps(x.dx);
    const int lane = static_cast<int>(i % 4);
    for (int r = 0; r < R; ++r) {
      // offset lane a: sum_k of the pair products (Q4_K/Q5_K: summ; Q6_K: the offset sum).
      __m256i offset = _mm256_madd_epi16(pairs[0], BroadcastWord32(&w[r]->offset[0]));
      for (int k = 1; k < Type::kPairs; ++k) {
        offset = _mm256_add_epi32(offset, _mm256_madd_epi16(pairs[k], BroadcastWord32(&w[r]->offset[k])));
      }
      float* d_lanes = acc[r].d[lane];
      const __m256 factor = _mm256_mul_ps(dx, _mm256_broadcast_ss(&w[r]->d));
      if constexpr (Type::kHasMin) {
        _mm256_store_ps(d_lanes, _mm256_fmadd_ps(factor, _mm256_cvtepi32_ps(dots[r]), _mm256_load_ps(d_lanes)));
        float* m_lanes = acc[r].m[lane];
        const __m256 min_factor = _mm256_mul_ps(dx, _mm256_broadcast_ss(&w[r]->dmin));
        _mm256_store_ps(m_lanes,
                        _mm256_fnmadd_ps(min_factor, _mm256_cvtepi32_ps(offset), _mm256_load_ps(m_lanes)));
      } else {
        // sumi = dots - 32 * offset sum (exact).
        const __m256i sumi = _mm256_sub_epi32(dots[r], _mm256_slli_epi32(offset, 5));
        _mm256_store_ps(d_lanes, _mm256_fmadd_ps(factor, _mm256_cvtepi32_ps(sumi), _mm256_load_ps(d_lanes)));
      }
    }
  }
}

// The kernel interface of matmul.cc for one type: Base (gemm_kquant-inl.h's
// AVX2 kernel) keeps decode and the verification widths; prefill reads
// natural Q8K (matmul.cc's TargetActFormat) through the prepared interface
// below.
template <class Base, class Type>
struct KQuantAvx2Kernel : Base {
  using Prepared = typename Type::Prepared;
  using Acts = ActLaneBlock<Type::kPairs>;
  static_assert(sizeof(Prepared) % 32 == 0 && sizeof(Acts) % 32 == 0);

  // RunRowsPrepared: kPreparedRows weight rows prepared once for every
  // activation tile; each tile walks the columns in chunks of kPreparedChunk
  // super-blocks, all the rows per chunk (4 x 6 x 320-384 bytes of weights
  // and 6 x 2.2 KB of activations together in L1).
  static constexpr bool kPreparable = true;
  static constexpr int kPreparedRows = 4;
  static constexpr int64_t kPreparedChunk = 6;
  using Accumulators = ActLaneAccumulators;

  static int64_t Blocks(int64_t cols) { return cols / kQKK; }
  static size_t PreparedRowBytes(int64_t cols) { return static_cast<size_t>(cols / kQKK) * sizeof(Prepared); }
  static void Prepare(const uint8_t* wrow, int64_t cols, uint8_t* dst) {
    const auto* blocks = reinterpret_cast<const typename Type::Block*>(wrow);
    auto* out = reinterpret_cast<Prepared*>(dst);
    for (int64_t i = 0; i < cols / kQKK; ++i) Type::Prepare(blocks[i], out + i);
  }

  static size_t PreparedActBytes(int64_t cols) { return static_cast<size_t>(cols / kQKK) * sizeof(Acts); }

  // The nb (<= kActLanes) natural Q8K rows at acts, super-block by
  // super-block, into ActLaneBlocks at dst (32-aligned).
  static void PrepareActs(const ActRow* acts, int nb, int64_t cols, uint8_t* dst) {
    auto* out = reinterpret_cast<Acts*>(dst);
    for (int64_t i = 0; i < cols / kQKK; ++i) {
      Acts& x = out[i];
      for (int c = 0; c < kQKK / 32; ++c) {  // 8 quads (32 bytes) of each row at a time
        __m256i v[kActLanes];
        for (int a = 0; a < kActLanes; ++a) {
          v[a] = a < nb ? LoadBytes32(acts[a].qs + i * kQKK + 32 * c) : _mm256_setzero_si256();
        }
        Transpose8x32(v);
        for (int k = 0; k < 8; ++k) _mm256_store_si256(reinterpret_cast<__m256i*>(x.quads[8 * c + k]), v[k]);
      }
      for (int a = 0; a < kActLanes; ++a) {
        for (int k = 0; k < Type::kPairs; ++k) x.pairs[k][a] = a < nb ? Type::OffsetPair(acts[a].bsums + i * 16, k) : 0;
        x.dx[a] = a < nb ? acts[a].d[i] : 0.0f;
      }
    }
  }

  template <int R, int NB>
  static void PreparedRowsTile(const uint8_t* prepared, size_t row_bytes, const uint8_t* prepared_acts, int64_t i0,
                               int64_t i1, int64_t /*cols*/, const ActRow* /*acts*/, Accumulators* acc) {
    ActLaneRows<Type, R>(prepared, row_bytes, prepared_acts, i0, i1, acc);
  }

  // out[a] = ReduceLanes8 of row a's lanes: ((d0 + d2) + (d1 + d3)) + ((m0 + m2) + (m1 + m3)).
  template <int NB>
  static void StoreTile(const Accumulators& acc, float* out) {
    const auto ld = [](const float* p) { return _mm256_load_ps(p); };
    const __m256 d = _mm256_add_ps(_mm256_add_ps(ld(acc.d[0]), ld(acc.d[2])), _mm256_add_ps(ld(acc.d[1]), ld(acc.d[3])));
    const __m256 m = _mm256_add_ps(_mm256_add_ps(ld(acc.m[0]), ld(acc.m[2])), _mm256_add_ps(ld(acc.m[1]), ld(acc.m[3])));
    alignas(32) float lanes[kActLanes];
    _mm256_store_ps(lanes, _mm256_add_ps(d, m));
    for (int a = 0; a < NB; ++a) out[a] = lanes[a];
  }
};

using Q4KKernel = KQuantAvx2Kernel<ScaleMinKernel<false>, ScaleMinLanes<false>>;
using Q5KKernel = KQuantAvx2Kernel<ScaleMinKernel<true>, ScaleMinLanes<true>>;
using Q6KKernel = KQuantAvx2Kernel<Q6KKernelAvx2, Q6Lanes>;

#endif  // HWY_AVX2

}  // namespace HWY_NAMESPACE
}  // namespace cairn::kernels
HWY_AFTER_NAMESPACE();

#endif  // toggle guard
