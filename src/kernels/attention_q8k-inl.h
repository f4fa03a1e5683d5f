// Attention scores against a Q8_0 K cache (`--cache-type-k q8_0`; layout:
// core/kv_block.h, KvQ8Geometry). Included by attention.cc once per Highway
// target.
//
// Numeric class (llama.cpp's q8_0 K cache: K and the query both Q8_0). The
// query row (pre-multiplied by the attention scale) is quantized per 32
// elements by kv_write.h's QuantizeQ8Block, d kept in F32; each key's blocks
// are the cache's levels and F16 d. Per (query, key), on every target:
//   isum_b = sum over the block's 32 elements of qlevel * klevel   (exact int32)
//   s = 0; for b ascending: s = fma(dq_b * dk_b, float(isum_b), s)
// The integer sums are exact whatever order computes them, and the float
// chain is per pair, so a score is the same bits in every micro-tile, in
// decode and in prefill, and on every target with a fused multiply-add (not
// Highway's EMU128, whose MulAdd rounds twice): unlike the F16 cache's
// scores, these do not depend on the SIMD width.
//
// The cache stores klevel + 128 (unsigned bytes, for VNNI's u8 x s8 products):
// sum qlevel * (klevel + 128) = isum + 128 sum qlevel, so a query block's
// correction -128 * sum qlevel is added (QueriesQ8::corr). Vector lanes are
// keys: a 32-bit lane holds one key's 4 levels of a quad, so there are no
// horizontal reductions. AVX3_DL adds a quad with one vpdpbusd (the query's 4
// levels broadcast); other targets split the bytes into int16 pairs and use
// ReorderWidenMulAccumulate (pmaddwd on x86); HWY_SCALAR, SVE and RVV run the
// scalar loop (correct, slow: not yet measured on such a machine).
#if defined(CAIRN_KERNELS_ATTENTION_Q8K_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CAIRN_KERNELS_ATTENTION_Q8K_INL_H_
#undef CAIRN_KERNELS_ATTENTION_Q8K_INL_H_
#else
#define CAIRN_KERNELS_ATTENTION_Q8K_INL_H_
#endif

#include <hwy/highway.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/half.h"
#include "core/kv_block.h"

HWY_BEFORE_NAMESPACE();
namespace cairn::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// A task's queries quantized for Q8_0 keys; query i's arrays at i * hd / i * nb.
struct QueriesQ8 {
  const int8_t* levels = nullptr;   // [n][hd]
  const float* d = nullptr;         // [n][nb]: F32 scale of each 32-element block
  const int32_t* corr = nullptr;    // [n][nb]: -128 * sum of the block's levels
  // [n][hd / 4][2]: each quad's levels as int16 pairs (l0, l2) and (l1, l3)
  // for ReorderWidenMulAccumulate (PackPair), so the kernels broadcast them from memory.
  const uint32_t* pairs = nullptr;
  int64_t hd = 0;
  int nb = 0;                       // hd / 32
};

// The canonical score of query i against key j of a region (the file comment's
// formula, one pair at a time): the kernel of HWY_SCALAR and of the scalable
// targets (SVE, RVV; see below).
HWY_INLINE float ScoreQ8Pair(const QueriesQ8& q, int64_t i, const uint8_t* region, const KvQ8Geometry& g,
                             int64_t j) {
  float s = 0.0f;
  for (int b = 0; b < q.nb; ++b) {
    int32_t isum = q.corr[i * q.nb + b];
    for (int t = 0; t < KvQ8Geometry::kBlock / 4; ++t) {
      const uint8_t* quad = region + g.QuadOffset(b * (KvQ8Geometry::kBlock / 4) + t, j);
      const int8_t* ql = q.levels + i * q.hd + b * KvQ8Geometry::kBlock + 4 * t;
      for (int e = 0; e < 4; ++e) isum += static_cast<int32_t>(ql[e]) * static_cast<int32_t>(quad[e]);
    }
    uint16_t h;
    std::memcpy(&h, region + g.ScaleOffset(b, j), sizeof h);
    s = std::fma(q.d[i * q.nb + b] * F16ToF32(h), static_cast<float>(isum), s);
  }
  return s;
}

// The vector kernels keep their sums in arrays of vectors, which sizeless
// vector types (SVE, RVV) cannot form: those targets run the scalar loop.
#if HWY_TARGET != HWY_SCALAR && !HWY_HAVE_SCALABLE

// Keys as lanes: at most 16, so a vector never leaves a region (T is a multiple of 16).
using DQ8 = hn::CappedTag<float, 16>;

// s[i * s_stride + j0 + lane] for kQ queries (from i0) and kG vectors of keys
// (from j0): the file comment's arithmetic, lane = key.
template <int kQ, int kG>
HWY_INLINE void ScoreKeysQ8(const QueriesQ8& q, int64_t i0, const uint8_t* region, const KvQ8Geometry& g,
                            int64_t j0, float* s, int64_t s_stride) {
  const DQ8 df;
  const hn::RebindToSigned<DQ8> di;
  const hn::RebindToUnsigned<DQ8> du;
  const hn::Rebind<hwy::float16_t, DQ8> dh;
  const int64_t n = static_cast<int64_t>(hn::Lanes(df));
  using VI = hn::Vec<decltype(di)>;
  hn::Vec<DQ8> acc[kQ * kG];
  for (auto& a : acc) a = hn::Zero(df);
  for (int b = 0; b < q.nb; ++b) {
    // VNNI: the sums start at the correction. Otherwise at 0:
    // ReorderWidenMulAccumulate may put a pair's two products in different
    // lanes of sum0 (NEON, SVE), which RearrangeToOddPlusEven adds, so a start
    // value would count twice; the correction is added after.
    VI sum0[kQ * kG], sum1[kQ * kG];
    for (int i = 0; i < kQ; ++i) {
      for (int k = 0; k < kG; ++k) {
#if HWY_TARGET == HWY_AVX3_DL
        sum0[i * kG + k] = hn::Set(di, q.corr[(i0 + i) * q.nb + b]);
#else
        sum0[i * kG + k] = hn::Zero(di);
#endif
        sum1[i * kG + k] = hn::Zero(di);
      }
    }
    for (int t = 0; t < KvQ8Geometry::kBlock / 4; ++t) {
      const uint8_t* quads = region + g.QuadOffset(b * (KvQ8Geometry::kBlock / 4) + t, j0);
#if HWY_TARGET == HWY_AVX3_DL
      __m512i x[kG];
      for (int k = 0; k < kG; ++k) x[k] = _mm512_loadu_si512(quads + 4 * n * k);
      for (int i = 0; i < kQ; ++i) {
        int32_t word;
        std::memcpy(&word, q.levels + (i0 + i) * q.hd + b * KvQ8Geometry::kBlock + 4 * t, sizeof word);
        const __m512i qv = _mm512_set1_epi32(word);
        for (int k = 0; k < kG; ++k) sum0[i * kG + k].raw = _mm512_dpbusd_epi32(sum0[i * kG + k].raw, x[k], qv);
      }
#else
      const hn::Repartition<int16_t, decltype(di)> d16;
      const auto low_bytes = hn::Set(du, 0x00FF00FFu);
      hn::Vec<decltype(d16)> even[kG], odd[kG];
      for (int k = 0; k < kG; ++k) {
        const auto x = hn::LoadU(du, reinterpret_cast<const uint32_t*>(quads + 4 * n * k));
        even[k] = hn::BitCast(d16, hn::And(x, low_bytes));                    // bytes 0 and 2
        odd[k] = hn::BitCast(d16, hn::And(hn::ShiftRight<8>(x), low_bytes));  // bytes 1 and 3
      }
      for (int i = 0; i < kQ; ++i) {
        const uint32_t* pair = q.pairs + ((i0 + i) * (q.hd / 4) + b * (KvQ8Geometry::kBlock / 4) + t) * 2;
        const auto q_even = hn::BitCast(d16, hn::Set(du, pair[0]));
        const auto q_odd = hn::BitCast(d16, hn::Set(du, pair[1]));
        for (int k = 0; k < kG; ++k) {
          VI& s0 = sum0[i * kG + k];
          s0 = hn::ReorderWidenMulAccumulate(di, even[k], q_even, s0, sum1[i * kG + k]);
          s0 = hn::ReorderWidenMulAccumulate(di, odd[k], q_odd, s0, sum1[i * kG + k]);
        }
      }
#endif
    }
    for (int k = 0; k < kG; ++k) {
      const auto dk = hn::PromoteTo(
          df, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(region + g.ScaleOffset(b, j0 + n * k))));
      for (int i = 0; i < kQ; ++i) {
#if HWY_TARGET == HWY_AVX3_DL
        const auto isum = sum0[i * kG + k];
#else
        const auto isum = hn::Add(hn::RearrangeToOddPlusEven(sum0[i * kG + k], sum1[i * kG + k]),
                                  hn::Set(di, q.corr[(i0 + i) * q.nb + b]));
#endif
        const auto f = hn::Mul(hn::Set(df, q.d[(i0 + i) * q.nb + b]), dk);
        acc[i * kG + k] = hn::MulAdd(f, hn::ConvertTo(df, isum), acc[i * kG + k]);
      }
    }
  }
  for (int i = 0; i < kQ; ++i) {
    for (int k = 0; k < kG; ++k) hn::StoreU(acc[i * kG + k], df, s + i * s_stride + j0 + n * k);
  }
}

// Key vectors per micro-tile: AVX3_DL's 32 registers hold 4 queries x 2
// vectors (8 int32 sums, 8 float scores, 2 key vectors); 16-register targets one.
#if HWY_TARGET == HWY_AVX3_DL
constexpr int kQ8KeyVectors = 2;
#else
constexpr int kQ8KeyVectors = 1;
#endif

template <int kQ, class Prefetch>
HWY_INLINE void ScoreQueriesQ8(const QueriesQ8& q, int64_t i0, const uint8_t* region, const KvQ8Geometry& g,
                               int64_t nk, float* s, int64_t s_stride, const Prefetch* prefetch) {
  const int64_t n = static_cast<int64_t>(hn::Lanes(DQ8()));
  const int64_t nk_vectors = (nk + n - 1) / n * n;   // <= T: n divides 16
  int64_t j0 = 0;
  for (; j0 + kQ8KeyVectors * n <= nk_vectors; j0 += kQ8KeyVectors * n) {
    if (prefetch != nullptr) prefetch->Rows(j0, kQ8KeyVectors * n);
    ScoreKeysQ8<kQ, kQ8KeyVectors>(q, i0, region, g, j0, s, s_stride);
  }
  for (; j0 < nk_vectors; j0 += n) {
    if (prefetch != nullptr) prefetch->Rows(j0, n);
    ScoreKeysQ8<kQ, 1>(q, i0, region, g, j0, s, s_stride);
  }
}

#endif  // HWY_TARGET != HWY_SCALAR && !HWY_HAVE_SCALABLE

// Scores of queries [0, nq) against the region's keys [0, nk) into
// s[i * s_stride + j]; may write up to the next multiple of 16 keys (the
// scores' slack, which nothing reads). The first query block issues the prefetches.
template <class Prefetch>
void ScoresQ8(const QueriesQ8& q, int64_t nq, const uint8_t* region, const KvQ8Geometry& g, int64_t nk, float* s,
              int64_t s_stride, const Prefetch& prefetch) {
#if HWY_TARGET != HWY_SCALAR && !HWY_HAVE_SCALABLE
  if (16 % hn::Lanes(DQ8()) == 0) {
    const Prefetch* pf = &prefetch;
    int64_t i = 0;
    for (; i + 4 <= nq; i += 4, pf = nullptr) ScoreQueriesQ8<4>(q, i, region, g, nk, s + i * s_stride, s_stride, pf);
    for (; i + 2 <= nq; i += 2, pf = nullptr) ScoreQueriesQ8<2>(q, i, region, g, nk, s + i * s_stride, s_stride, pf);
    for (; i < nq; ++i, pf = nullptr) ScoreQueriesQ8<1>(q, i, region, g, nk, s + i * s_stride, s_stride, pf);
    return;
  }
#endif
  prefetch.Rows(0, nk);
  for (int64_t i = 0; i < nq; ++i) {
    for (int64_t j = 0; j < nk; ++j) s[i * s_stride + j] = ScoreQ8Pair(q, i, region, g, j);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace cairn::kernels
HWY_AFTER_NAMESPACE();

#endif  // CAIRN_KERNELS_ATTENTION_Q8K_INL_H_ toggle
