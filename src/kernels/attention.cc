// Highway implementation of kernels/attention.h.
//
// Per query vector q (one row, one head, pre-multiplied by scale) and one
// partition of the keys:
//   for each tile (= KV block) in order:
//     s_j   = Dot(q, k_j)                          j over the tile's visible keys
//     m'    = max(m, max_j s_j);  rho = exp(m - m')   (rho = 0 while m = -inf)
//     p_j   = exp(s_j - m')
//     l     = rho * l + sum_j p_j                  (vector lanes, fixed order)
//     o     = rho * o;  o += p_j v_j               (j ascending, FMA per element)
// Partitions are merged left to right: M = max, a = exp(M_old - M),
// b = exp(m - M), L = a L + b l, O = a O + b o; output = O / L.
//
// Dot(q, k) — the canonical score, the same whichever micro-tile computes it:
// lane i of one vector accumulator runs the FMA chain over d = i, i + N,
// i + 2N, ... (N = vector lanes of the target, d ascending, starting from 0);
// the N lanes are then added by one fixed tree (ReduceLanes4); elements
// d >= N * floor(head_dim / N) are then added with a scalar FMA chain, d
// ascending. A micro-tile computes several (query, key) pairs at once only so
// that each K vector and q vector loaded is used several times; every pair has
// its own accumulator and its own chain.
//
// No implicit FMA contraction: every fused multiply-add is an explicit
// MulAdd/std::fma, so the arithmetic is what the source says on every target.
#pragma GCC optimize("fp-contract=off")

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/attention.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <vector>

#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include "core/aligned_buffer.h"
#include "core/error.h"
#include "core/half.h"
#include "core/kv_block.h"
#include "kernels/activation-inl.h"
#include "kernels/attention.h"
#include "kernels/attention_q8k-inl.h"
#include "kernels/kv_write.h"

HWY_BEFORE_NAMESPACE();
namespace cairn::kernels {
namespace HWY_NAMESPACE {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
// Query rows per task: at least 8, and at least 128 queries (rows x GQA
// group) so each K/V row read serves enough FMAs in prefill: a long prompt's
// tasks stream their head's whole K/V prefix (16 MB at 16k tokens, head dim
// 256) from L3/DRAM once per task. attention_bench, 512 rows at 4096 / 16384
// cached, 2 threads, 0.8B shape: 46.5 / 184 ms with 32 queries, 44.6 / 171
// with 128 (64: between). Since a task also widens every tile it reads (see
// kWidenQueries), 256 queries halve that work: 0.8B shape, Intel Emerald
// Rapids, 2 threads, 512 rows at 4096 / 16384: 226-228 / 221-235 GFLOP/s with
// 128, 235-237 / 232-237 with 256 (512: 226-237 / 243). A task's rows do not
// change any row's arithmetic.
constexpr int64_t kMinRowsPerTask = 8;
constexpr int64_t kMinQueriesPerTask = 256;
// Tiles read by at least this many queries (prefill: rows x GQA group) are
// widened to F32 once per (tile, KV head) before their micro-tiles run:
// widening F16 costs an FMA-port operation per vector on x86, paid once
// instead of once per micro-tile that loads the row (every block of 4 queries
// loads every key: 64 times per key for a 256-query task). Decode (one row: `group` queries) reads each row once or twice
// and keeps the direct loads and their prefetch. Either path gives a row the
// same F32 values, so the threshold never changes a bit. attention_bench,
// 0.8B shape (head dim 256, GQA 4), 512 rows at 4096 / 16384, 2 threads,
// Intel Emerald Rapids, AVX-512, alternated: 177-180 -> 223-232 GFLOP/s.
constexpr int64_t kWidenQueries = 16;

// Micro-tiles hold 8 independent vector accumulators on 16-register targets:
// enough FMAs in flight to cover the FMA latency (4 cycles x 2 ports on Zen
// 3), few enough to leave registers for the K/V and q operands. AVX-512 has
// 32 registers: 16 accumulators, so each K/V vector loaded (and widened from
// F16) serves twice the FMAs.
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
constexpr int kAccumulators = 16;
#else
constexpr int kAccumulators = 8;
#endif

using DF = hn::ScalableTag<float>;

// ---------------------------------------------------------------------------
// K/V element access. KvT is hwy::float16_t or hwy::bfloat16_t (the cache's
// storage type), or float for a tile widened once into scratch (WidenRows);
// every load widens to F32 exactly, so both give the same values.

template <typename KvT>
HWY_INLINE hn::Vec<DF> LoadKv(DF df, const KvT* HWY_RESTRICT p) {
  const hn::Rebind<KvT, DF> dh;
  return hn::PromoteTo(df, hn::LoadU(dh, p));
}

HWY_INLINE float KvToF32(const hwy::float16_t* p) {
  uint16_t bits;
  std::memcpy(&bits, p, sizeof bits);
  return F16ToF32(bits);
}
HWY_INLINE float KvToF32(const hwy::bfloat16_t* p) {
  uint16_t bits;
  std::memcpy(&bits, p, sizeof bits);
  return Bf16ToF32(bits);
}
// Rows already widened to F32 (a prefill tile, see WidenRows).
HWY_INLINE hn::Vec<DF> LoadKv(DF df, const float* HWY_RESTRICT p) { return hn::LoadU(df, p); }
HWY_INLINE float KvToF32(const float* p) { return *p; }

// dst[j * hd + c] = the F32 value of row j's element c (rows `stride`
// elements apart in src), by the same exact widening as LoadKv / KvToF32.
template <typename KvT>
void WidenRows(const KvT* HWY_RESTRICT src, int64_t stride, int64_t n, int64_t hd, float* HWY_RESTRICT dst) {
  const DF d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t j = 0; j < n; ++j) {
    const KvT* row = src + j * stride;
    float* out = dst + j * hd;
    int64_t c = 0;
    for (; c + lanes <= hd; c += lanes) hn::StoreU(LoadKv(d, row + c), d, out + c);
    for (; c < hd; ++c) out[c] = KvToF32(row + c);
  }
}

// ---------------------------------------------------------------------------
// Micro-tile kernels. Sizeless vector types (SVE, RVV) cannot be array
// elements, so on those targets a micro-tile is computed one pair (one query
// and one column vector for P.V) at a time, with the same per-pair
// arithmetic; fixed-size targets keep the micro-tile's accumulators in
// registers.

#if HWY_HAVE_SCALABLE

// s[i * s_stride + j] = Dot(q_i, k_j), i < kQ, j < kK (see the file comment).
template <int kQ, int kK, typename KvT>
HWY_INLINE void ScoreMicroTile(const float* HWY_RESTRICT q, int64_t hd, const KvT* const* k, float* s,
                               int64_t s_stride) {
  const DF d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int i = 0; i < kQ; ++i) {
    for (int j = 0; j < kK; ++j) {
      auto acc = hn::Zero(d);
      int64_t c = 0;
      for (; c + lanes <= hd; c += lanes) acc = hn::MulAdd(hn::LoadU(d, q + i * hd + c), LoadKv(d, k[j] + c), acc);
      float sum = hn::GetLane(hn::SumOfLanes(d, acc));
      for (; c < hd; ++c) sum = std::fma(q[i * hd + c], KvToF32(k[j] + c), sum);
      s[i * s_stride + j] = sum;
    }
  }
}

// P.V: for kQ queries, o_i[c, c + kV * lanes) = rho_i * o_i + sum_{j < n} p_i[j] v_j,
// element-wise j ascending.
template <int kQ, int kV, typename KvT>
HWY_INLINE void PvBlock(const float* HWY_RESTRICT p, int64_t p_stride, const float* rho, const KvT* v0,
                        int64_t v_stride, int64_t n, int64_t c, float* o, int64_t o_stride) {
  const DF d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int i = 0; i < kQ; ++i) {
    for (int t = 0; t < kV; ++t) {
      float* oc = o + i * o_stride + c + t * lanes;
      auto acc = hn::Mul(hn::LoadU(d, oc), hn::Set(d, rho[i]));
      for (int64_t j = 0; j < n; ++j) {
        acc = hn::MulAdd(hn::Set(d, p[i * p_stride + j]), LoadKv(d, v0 + j * v_stride + c + t * lanes), acc);
      }
      hn::StoreU(acc, d, oc);
    }
  }
}

#else  // fixed-size vectors

#if HWY_TARGET != HWY_SCALAR
// Sum of lanes of a vector whose 128-bit blocks each hold 4 partial sums:
// adds the upper half to the lower half until one block is left.
template <class D>
HWY_INLINE hn::Vec<hn::Simd<float, 4, 0>> AddBlocks(D d, hn::Vec<D> v) {
  if constexpr (hn::MaxLanes(D()) > 4) {
    const hn::Half<D> dh;
    return AddBlocks(dh, hn::Add(hn::LowerHalf(dh, v), hn::UpperHalf(dh, v)));
  } else {
    (void)d;
    return v;
  }
}
#endif

// out[i] = sum of the lanes of acc[i], i < 4, each by the same tree:
// per 128-bit block (l0 + l2) + (l1 + l3), then the blocks added by halves.
// (HWY_SCALAR: one lane.)
HWY_INLINE void ReduceLanes4(const hn::Vec<DF>* acc, float* out) {
  const DF d;
#if HWY_TARGET != HWY_SCALAR
  if constexpr (hn::MaxLanes(DF()) >= 4) {
    const hn::Repartition<uint64_t, DF> d64;
    // ab = [a0+a2, b0+b2, a1+a3, b1+b3] per block; cd likewise.
    const auto ab = hn::Add(hn::InterleaveLower(d, acc[0], acc[1]), hn::InterleaveUpper(d, acc[0], acc[1]));
    const auto cd = hn::Add(hn::InterleaveLower(d, acc[2], acc[3]), hn::InterleaveUpper(d, acc[2], acc[3]));
    const auto ab64 = hn::BitCast(d64, ab);
    const auto cd64 = hn::BitCast(d64, cd);
    // [(a0+a2)+(a1+a3), (b0+b2)+(b1+b3), c.., d..] per block.
    const auto sums = hn::Add(hn::BitCast(d, hn::InterleaveLower(d64, ab64, cd64)),
                              hn::BitCast(d, hn::InterleaveUpper(d64, ab64, cd64)));
    hn::StoreU(AddBlocks(d, sums), hn::Simd<float, 4, 0>(), out);
    return;
  }
#endif
  for (int i = 0; i < 4; ++i) out[i] = hn::GetLane(hn::SumOfLanes(d, acc[i]));
}

// Scores: s[i][j] = Dot(q_i, k_j) for a micro-tile of kQ queries x kK keys.
// q_i at q + i * hd (F32), k_j at k[j] (KvT rows of hd elements); writes
// s[i * s_stride + j].
template <int kQ, int kK, typename KvT>
HWY_INLINE void ScoreMicroTile(const float* HWY_RESTRICT q, int64_t hd, const KvT* const* k, float* s,
                               int64_t s_stride) {
  static_assert(kQ * kK == kAccumulators && kAccumulators % 4 == 0);
  const DF d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  hn::Vec<DF> acc[kQ * kK];
  for (int a = 0; a < kQ * kK; ++a) acc[a] = hn::Zero(d);
  int64_t c = 0;
  for (; c + lanes <= hd; c += lanes) {
    hn::Vec<DF> kv[kK];
    for (int j = 0; j < kK; ++j) kv[j] = LoadKv(d, k[j] + c);
    for (int i = 0; i < kQ; ++i) {
      const auto qv = hn::LoadU(d, q + i * hd + c);
      for (int j = 0; j < kK; ++j) acc[i * kK + j] = hn::MulAdd(qv, kv[j], acc[i * kK + j]);
    }
  }
  float sums[kQ * kK];
  for (int a = 0; a < kQ * kK; a += 4) ReduceLanes4(acc + a, sums + a);
  for (; c < hd; ++c) {   // head_dim not a multiple of the lanes
    for (int i = 0; i < kQ; ++i) {
      for (int j = 0; j < kK; ++j) sums[i * kK + j] = std::fma(q[i * hd + c], KvToF32(k[j] + c), sums[i * kK + j]);
    }
  }
  for (int i = 0; i < kQ; ++i) {
    for (int j = 0; j < kK; ++j) s[i * s_stride + j] = sums[i * kK + j];
  }
}

// P.V: for kQ queries, o_i[c, c + kV * lanes) = rho_i * o_i + sum_{j < n} p_i[j] v_j,
// element-wise j ascending. The kQ x kV accumulators stay in registers over j.
template <int kQ, int kV, typename KvT>
HWY_INLINE void PvBlock(const float* HWY_RESTRICT p, int64_t p_stride, const float* rho, const KvT* v0,
                        int64_t v_stride, int64_t n, int64_t c, float* o, int64_t o_stride) {
  const DF d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  hn::Vec<DF> acc[kQ * kV];
  for (int i = 0; i < kQ; ++i) {
    const auto vrho = hn::Set(d, rho[i]);
    for (int t = 0; t < kV; ++t) acc[i * kV + t] = hn::Mul(hn::LoadU(d, o + i * o_stride + c + t * lanes), vrho);
  }
  for (int64_t j = 0; j < n; ++j) {
    const KvT* vj = v0 + j * v_stride + c;
    hn::Vec<DF> vv[kV];
    for (int t = 0; t < kV; ++t) vv[t] = LoadKv(d, vj + t * lanes);
    for (int i = 0; i < kQ; ++i) {
      const auto pj = hn::Set(d, p[i * p_stride + j]);
      for (int t = 0; t < kV; ++t) acc[i * kV + t] = hn::MulAdd(pj, vv[t], acc[i * kV + t]);
    }
  }
  for (int i = 0; i < kQ; ++i) {
    for (int t = 0; t < kV; ++t) hn::StoreU(acc[i * kV + t], d, o + i * o_stride + c + t * lanes);
  }
}

#endif  // HWY_HAVE_SCALABLE

// Software prefetch while a tile's scores are computed: the tile's V rows
// (read next by P.V) and the next tile's K rows (read after that). Decode
// reads each K/V row once from memory, and P.V walks the V rows column block
// by column block, which the hardware prefetchers do not follow. Decode
// attention_bench: 1.3-2.6x the rate without it, from memory and from L3
// (docs/benchmarks.md, "Software prefetch really emitted").
struct TilePrefetch {
  const uint8_t* v = nullptr;        // this tile's V row 0
  const uint8_t* k_next = nullptr;   // next tile's K row 0 (nullptr: none)
  int64_t n = 0, n_next = 0;         // rows of each
  int64_t stride = 0, row = 0;       // V: bytes between rows / per row
  int64_t k_stride = 0, k_row = 0;   // K likewise (a Q8_0 region: its bytes / T per key)

  // Must be inlined: GCC 12 finds an out-of-line function whose only effects
  // are prefetches "pure" and deletes its calls (no prefetch was emitted).
  HWY_INLINE void Rows(int64_t j0, int64_t count) const {
    for (int64_t j = j0; j < j0 + count; ++j) {
      for (int64_t b = 0; b < row; b += 64) {
        if (j < n) hwy::Prefetch(v + j * stride + b);
      }
      for (int64_t b = 0; b < k_row; b += 64) {
        if (j < n_next) hwy::Prefetch(k_next + j * k_stride + b);
      }
    }
  }
};

// Scores of queries [0, nq) (at q + i * hd) against keys [0, nk) (row j at
// k0 + j * k_stride) into s[i * s_stride + j]. A key micro-tile running past
// nk repeats key nk - 1 and writes scores into the slack after nk (s_stride
// >= nk + kAccumulators), which nothing reads.
template <int kQ, typename KvT>
HWY_INLINE void ScoreQueries(const float* q, int64_t hd, const KvT* k0, int64_t k_stride, int64_t nk, float* s,
                             int64_t s_stride, const TilePrefetch* prefetch) {
  constexpr int kK = kAccumulators / kQ;
  for (int64_t j = 0; j < nk; j += kK) {
    if (prefetch != nullptr) prefetch->Rows(j, kK);
    const KvT* k[kK];
    for (int t = 0; t < kK; ++t) k[t] = k0 + std::min<int64_t>(j + t, nk - 1) * k_stride;
    ScoreMicroTile<kQ, kK>(q, hd, k, s + j, s_stride);
  }
}

// The first query block issues the prefetches.
template <typename KvT>
void Scores(const float* q, int64_t nq, int64_t hd, const KvT* k0, int64_t k_stride, int64_t nk, float* s,
            int64_t s_stride, const TilePrefetch& prefetch) {
  const TilePrefetch* pf = &prefetch;
  int64_t i = 0;
  for (; i + 4 <= nq; i += 4, pf = nullptr) {
    ScoreQueries<4>(q + i * hd, hd, k0, k_stride, nk, s + i * s_stride, s_stride, pf);
  }
  for (; i + 2 <= nq; i += 2, pf = nullptr) {
    ScoreQueries<2>(q + i * hd, hd, k0, k_stride, nk, s + i * s_stride, s_stride, pf);
  }
  for (; i < nq; ++i, pf = nullptr) ScoreQueries<1>(q + i * hd, hd, k0, k_stride, nk, s + i * s_stride, s_stride, pf);
}

// ---------------------------------------------------------------------------
// Online softmax of one query over one tile: scores s[0, n) become p_j in
// place; (m, l) are updated; returns rho, the factor for the old o.
HWY_INLINE float SoftmaxTile(float* HWY_RESTRICT s, int64_t n, float& m, float& l) {
  const DF d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  // s has slack to a whole vector past n (see Scratch::scores).
  auto vmax = hn::Set(d, kNegInf);
  for (int64_t j = 0; j < n; j += lanes) {
    const auto valid = hn::FirstN(d, static_cast<size_t>(n - j));
    vmax = hn::Max(vmax, hn::IfThenElse(valid, hn::LoadU(d, s + j), hn::Set(d, kNegInf)));
  }
  const float m_new = std::max(m, hn::GetLane(hn::MaxOfLanes(d, vmax)));
  const float rho = m == kNegInf ? 0.0f : std::exp(m - m_new);
  const auto vm = hn::Set(d, m_new);
  auto vsum = hn::Zero(d);
  for (int64_t j = 0; j < n; j += lanes) {
    const auto valid = hn::FirstN(d, static_cast<size_t>(n - j));
    const auto e = hn::IfThenElseZero(valid, ExpV(d, hn::Sub(hn::LoadU(d, s + j), vm)));
    vsum = hn::Add(vsum, e);
    hn::StoreU(e, d, s + j);
  }
  l = rho * l + hn::GetLane(hn::SumOfLanes(d, vsum));
  m = m_new;
  return rho;
}

// Keys per P.V pass: the pass walks its V rows once per column block, so
// they should stay in L1 (32 rows x 256 F16 = 16 KB); between passes o goes
// through memory unchanged (F32 store and load), so the per-element chain
// is the same as one pass over all keys.
constexpr int64_t kPvKeys = 32;

// Column vectors per P.V micro-tile: kAccumulators / kQ, except for four
// queries (GQA group 4: Qwen3.5), which take 3: 12 accumulators + 3 V
// vectors + the p broadcast still fit 16 registers, and each key costs 7
// loads per 12 FMAs instead of 6 per 8 (decode attention, head dim 256,
// 2 threads, measured in one process with the variants alternating: -2 to
// +13% at 4k tokens, +7 to +10% at 16k). Bits do not change: each output element's chain is the same
// whatever the column tiling.
template <int kQ>
constexpr int PvColumnVectors() {
  if constexpr (kAccumulators == 8) return kQ == 4 ? 3 : kAccumulators / kQ;
  return std::min(kAccumulators / kQ, 8);
}

template <int kQ, typename KvT>
HWY_INLINE void PvQueries(const float* p, int64_t p_stride, const float* rho, const KvT* v0, int64_t v_stride,
                          int64_t n, int64_t hd, float* o, int64_t o_stride) {
  constexpr int kV = PvColumnVectors<kQ>();
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(DF()));
  float one[kQ];   // passes after the first scale o by 1 (exact)
  for (int i = 0; i < kQ; ++i) one[i] = 1.0f;
  for (int64_t j0 = 0; j0 < n; j0 += kPvKeys) {
    const int64_t nj = std::min(kPvKeys, n - j0);
    const float* scale = j0 == 0 ? rho : one;
    const float* pj = p + j0;
    const KvT* vj = v0 + j0 * v_stride;
    int64_t c = 0;
    for (; c + kV * lanes <= hd; c += kV * lanes) PvBlock<kQ, kV>(pj, p_stride, scale, vj, v_stride, nj, c, o, o_stride);
    if constexpr (kV > 2) {   // e.g. head dim 256 with 3 x 8 columns: 10 blocks, then 16 columns
      for (; c + 2 * lanes <= hd; c += 2 * lanes) PvBlock<kQ, 2>(pj, p_stride, scale, vj, v_stride, nj, c, o, o_stride);
    }
    for (; c + lanes <= hd; c += lanes) PvBlock<kQ, 1>(pj, p_stride, scale, vj, v_stride, nj, c, o, o_stride);
    for (; c < hd; ++c) {   // head_dim not a multiple of the lanes: same order, scalar fma
      for (int i = 0; i < kQ; ++i) {
        float oc = o[i * o_stride + c] * scale[i];
        for (int64_t j = 0; j < nj; ++j) oc = std::fma(pj[i * p_stride + j], KvToF32(vj + j * v_stride + c), oc);
        o[i * o_stride + c] = oc;
      }
    }
  }
}

// Queries [0, nq) that all see keys [0, n) of the tile.
template <typename KvT>
void Pv(const float* p, int64_t p_stride, const float* rho, int64_t nq, const KvT* v0, int64_t v_stride, int64_t n,
        int64_t hd, float* o, int64_t o_stride) {
  int64_t i = 0;
  for (; i + 4 <= nq; i += 4)
    PvQueries<4>(p + i * p_stride, p_stride, rho + i, v0, v_stride, n, hd, o + i * o_stride, o_stride);
  for (; i + 2 <= nq; i += 2)
    PvQueries<2>(p + i * p_stride, p_stride, rho + i, v0, v_stride, n, hd, o + i * o_stride, o_stride);
  for (; i < nq; ++i) PvQueries<1>(p + i * p_stride, p_stride, rho + i, v0, v_stride, n, hd, o + i * o_stride, o_stride);
}

// ---------------------------------------------------------------------------
// Tasks.

// Everything a task needs, resolved once per call.
struct Plan {
  const AttentionParams* p;
  const KvView* kv;
  const float* q;
  int64_t q_pos0;
  int64_t q_row_stride, q_head_stride;
  int group;               // query heads per KV head
  int64_t part_tokens;     // partition length (multiple of block_tokens)
  int64_t kv_row_stride;   // elements between consecutive positions of one head
  int64_t s_stride;        // floats per query row of Scratch::scores

  int64_t Parts(int64_t pos) const { return pos / part_tokens + 1; }   // partitions row at pos sees
  // First key a row at pos sees, and the first partition holding one.
  int64_t FirstKey(int64_t pos) const { return p->window > 0 ? std::max<int64_t>(0, pos - p->window + 1) : 0; }
  int64_t FirstPart(int64_t pos) const { return FirstKey(pos) / part_tokens; }
  int64_t State() const { return p->head_dim + 2; }                    // o[hd], m, l per query
};

// Per-thread scratch, grown on demand and kept across calls (pool threads persist).
// Queries of a task are numbered (row - r0) * group + g.
struct Scratch {
  AlignedBuffer<float> q;        // [n_queries][head_dim], scaled
  AlignedBuffer<float> scores;   // [n_queries][s_stride]: s_j, then p_j
  AlignedBuffer<float> rho;      // [n_queries]
  AlignedBuffer<float> part;     // [n_queries][head_dim + 2]: o, m, l of one partition
  AlignedBuffer<float> acc;      // [n_queries][head_dim + 2]: merged O, M, L
  AlignedBuffer<float> k_wide;   // [block_tokens][head_dim]: one tile's K rows as F32
  AlignedBuffer<float> v_wide;   // [block_tokens][head_dim]: its V rows
  // Q8_0 K cache: the scaled queries quantized (attention_q8k-inl.h's QueriesQ8).
  AlignedBuffer<int8_t> q_levels;   // [n_queries][head_dim]
  AlignedBuffer<float> q_d;         // [n_queries][head_dim / 32]
  AlignedBuffer<int32_t> q_corr;    // [n_queries][head_dim / 32]
  AlignedBuffer<uint32_t> q_pairs;  // [n_queries][head_dim / 4][2]

  QueriesQ8 Q8(int64_t first_query, int64_t hd) const {
    const int nb = static_cast<int>(hd / KvQ8Geometry::kBlock);
    return QueriesQ8{q_levels.data() + first_query * hd, q_d.data() + first_query * nb,
                     q_corr.data() + first_query * nb, q_pairs.data() + first_query * (hd / 2), hd, nb};
  }

  template <typename T>
  static void Ensure(AlignedBuffer<T>& b, size_t n) {
    if (b.size() < n) b.Resize(n);
  }
};

Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

// Reduces partition `part` for rows [r0, r1) and the `group` query heads of
// each KV head in [kvh0, kvh1). Queries are numbered
// (kvh - kvh0) * n_head_queries + (r - r0) * group + g, n_head_queries =
// (r1 - r0) * group (s.q, s.scores, s.rho and `out` use that order). Writes per
// query its o, m, l to `out` ([n_queries][hd + 2]); queries whose row does not
// reach the partition are left untouched.
// Tiles are the outer loop and heads the inner one: the heads' runs of a KV
// block slab are adjacent (head-major), so a task over several heads streams
// one long contiguous run of K and one of V per tile instead of one short run
// per head (see AttentionImpl). Each (query, head) sees exactly the same
// operations in the same order whatever the head range.
template <typename KvT>
void RunPartition(const Plan& plan, int kvh0, int kvh1, int64_t r0, int64_t r1, int64_t part, Scratch& s,
                  float* out) {
  const KvView& kv = *plan.kv;
  const int64_t hd = plan.p->head_dim;
  const int64_t bt = kv.block_tokens;
  const int64_t group = plan.group;
  const int64_t stride = plan.State();
  const int64_t head_queries = (r1 - r0) * group;
  const int64_t p_max = plan.q_pos0 + r1 - 1;
  const int64_t part_begin = part * plan.part_tokens;
  const int64_t part_end = std::min(part_begin + plan.part_tokens, p_max + 1);
  const int64_t row_bytes = hd * static_cast<int64_t>(sizeof(KvT));
  const KvQ8Geometry q8{kv.block_tokens, kv.head_dim};
  // Fresh accumulators for the queries this partition reaches.
  for (int kvh = kvh0; kvh < kvh1; ++kvh) {
    for (int64_t r = std::max(r0, part_begin - plan.q_pos0); r < r1; ++r) {
      for (int64_t g = 0; g < group; ++g) {
        float* st = out + ((kvh - kvh0) * head_queries + (r - r0) * group + g) * stride;
        std::fill(st, st + hd, 0.0f);
        st[hd] = kNegInf;
        st[hd + 1] = 0.0f;
      }
    }
  }
  for (int64_t ts = part_begin; ts < part_end; ts += bt) {
    const int64_t te = std::min(ts + bt, part_end);
    const int64_t block = ts / bt;
    const int64_t r_lo = std::max(r0, ts - plan.q_pos0);   // rows before ts do not see the tile
    // Sliding window: rows at p >= te + window - 1 see nothing of the tile.
    const int64_t r_hi = plan.p->window > 0 ? std::min(r1, te + plan.p->window - 1 - plan.q_pos0) : r1;
    if (r_lo >= r_hi) continue;
    for (int kvh = kvh0; kvh < kvh1; ++kvh) {
      const int64_t first = (kvh * bt + (ts - block * bt)) * hd;   // element offset in the head-major slab
      const KvT* k0 = kv.k_q8 ? nullptr : reinterpret_cast<const KvT*>(kv.k_blocks[block]) + first;
      const KvT* v0 = reinterpret_cast<const KvT*>(kv.v_blocks[block]) + first;
      // Q8_0 K: the head's region (a tile starts at its block's first token).
      const uint8_t* k_region = kv.k_q8 ? kv.k_blocks[block] + kvh * q8.RegionBytes() : nullptr;
      const int64_t q_base = (kvh - kvh0) * head_queries;
      const int64_t q_lo = q_base + (r_lo - r0) * group;
      float* head_out = out + q_base * stride;
      // Scores, softmax and P.V of the tile, K/V rows at k, v (kv_stride
      // elements apart): the cache's rows, or the same rows widened to F32.
      // (k is unused with a Q8_0 K cache: the scores read k_region.)
      const auto run_tile = [&](const auto* k, const auto* v, int64_t kv_stride, const TilePrefetch& prefetch) {
        if (kv.k_q8) {
          ScoresQ8(s.Q8(q_lo, hd), (r_hi - r_lo) * group, k_region, q8, te - ts,
                   s.scores.data() + q_lo * plan.s_stride, plan.s_stride, prefetch);
        } else {
          Scores(s.q.data() + q_lo * hd, (r_hi - r_lo) * group, hd, k, kv_stride, te - ts,
                 s.scores.data() + q_lo * plan.s_stride, plan.s_stride, prefetch);
        }
        for (int64_t r = r_lo; r < r_hi; ++r) {
          const int64_t n = std::min(te, plan.q_pos0 + r + 1) - ts;
          // Keys left of the row's window: score -inf, probability exactly 0
          // (the row sees at least key te - 1 or its own position, so m' is finite).
          const int64_t masked = std::min(n, plan.FirstKey(plan.q_pos0 + r) - ts);
          for (int64_t qi = (r - r0) * group; qi < (r - r0 + 1) * group; ++qi) {
            float* st = head_out + qi * stride;
            float* sc = s.scores.data() + (q_base + qi) * plan.s_stride;
            for (int64_t j = 0; j < masked; ++j) sc[j] = kNegInf;
            s.rho[q_base + qi] = SoftmaxTile(s.scores.data() + (q_base + qi) * plan.s_stride, n, st[hd], st[hd + 1]);
          }
        }
        // P.V over runs of rows that see the same keys (all rows except on the
        // diagonal tile), so V loads are shared by the run's queries.
        for (int64_t ra = r_lo; ra < r_hi;) {
          const int64_t n = std::min(te, plan.q_pos0 + ra + 1) - ts;
          int64_t rb = ra + 1;
          while (rb < r_hi && std::min(te, plan.q_pos0 + rb + 1) - ts == n) ++rb;
          const int64_t qa = (ra - r0) * group;
          Pv(s.scores.data() + (q_base + qa) * plan.s_stride, plan.s_stride, s.rho.data() + q_base + qa,
             (rb - ra) * group, v, kv_stride, n, hd, head_out + qa * stride, stride);
          ra = rb;
        }
      };
      if ((r_hi - r_lo) * group >= kWidenQueries) {
        // Prefill: the tile's rows are read by many queries, so widen them
        // once instead of in every micro-tile (the widening shares the FMA
        // ports on x86). Same F32 values, so the same bits.
        if (!kv.k_q8) WidenRows(k0, plan.kv_row_stride, te - ts, hd, s.k_wide.data());
        WidenRows(v0, plan.kv_row_stride, te - ts, hd, s.v_wide.data());
        run_tile(static_cast<const float*>(s.k_wide.data()), static_cast<const float*>(s.v_wide.data()), hd,
                 TilePrefetch{});
        continue;
      }
      TilePrefetch prefetch;
      prefetch.v = reinterpret_cast<const uint8_t*>(v0);
      prefetch.n = te - ts;
      prefetch.stride = plan.kv_row_stride * static_cast<int64_t>(sizeof(KvT));
      prefetch.row = row_bytes;
      prefetch.k_stride = prefetch.stride;
      prefetch.k_row = row_bytes;
      // The K rows this task reads next: the next head's in this tile, or the
      // first head's in the next tile.
      if (kv.k_q8) {   // a region as T rows of RegionBytes / T
        prefetch.k_stride = prefetch.k_row = q8.RegionBytes() / q8.Tokens();
        if (kvh + 1 < kvh1) {
          prefetch.k_next = k_region + q8.RegionBytes();
          prefetch.n_next = q8.Tokens();
        } else if (te < part_end) {
          prefetch.k_next = kv.k_blocks[block + 1] + kvh0 * q8.RegionBytes();
          prefetch.n_next = q8.Tokens();
        }
      } else if (kvh + 1 < kvh1) {
        prefetch.k_next = kv.k_blocks[block] + (first + bt * hd) * static_cast<int64_t>(sizeof(KvT));
        prefetch.n_next = te - ts;
      } else if (te < part_end) {
        prefetch.k_next = kv.k_blocks[block + 1] + kvh0 * bt * row_bytes;
        prefetch.n_next = std::min(bt, part_end - te);
      }
      run_tile(k0, v0, plan.kv_row_stride, prefetch);
    }
  }
}

void RunPartitionAnyType(const Plan& plan, int kvh0, int kvh1, int64_t r0, int64_t r1, int64_t part, Scratch& s,
                         float* out) {
  if (plan.kv->dtype == DType::kF16) {
    RunPartition<hwy::float16_t>(plan, kvh0, kvh1, r0, r1, part, s, out);
  } else {
    RunPartition<hwy::bfloat16_t>(plan, kvh0, kvh1, r0, r1, part, s, out);
  }
}

// acc (O, M, L) <- merge(acc, part); `first` copies.
HWY_INLINE void MergePartition(const float* part, int64_t hd, bool first, float* acc) {
  if (first) {
    std::copy(part, part + hd + 2, acc);
    return;
  }
  const float m = std::max(acc[hd], part[hd]);
  const float a = std::exp(acc[hd] - m);
  const float b = std::exp(part[hd] - m);
  acc[hd + 1] = a * acc[hd + 1] + b * part[hd + 1];
  const DF d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto va = hn::Set(d, a);
  const auto vb = hn::Set(d, b);
  int64_t i = 0;
  for (; i + lanes <= hd; i += lanes) {
    hn::StoreU(hn::MulAdd(va, hn::LoadU(d, acc + i), hn::Mul(vb, hn::LoadU(d, part + i))), d, acc + i);
  }
  for (; i < hd; ++i) acc[i] = std::fma(a, acc[i], b * part[i]);
  acc[hd] = m;
}

HWY_INLINE void Finish(const float* acc, int64_t hd, float* out) {
  const float l = acc[hd + 1];
  for (int64_t i = 0; i < hd; ++i) out[i] = acc[i] / l;
}

// q_scaled[(r - r0) * group + g][:] = scale * q(row r, head kvh * group + g).
void LoadQueries(const Plan& plan, int kvh, int64_t r0, int64_t r1, float* dst) {
  const int64_t hd = plan.p->head_dim;
  const float scale = plan.p->scale;
  for (int64_t r = r0; r < r1; ++r) {
    for (int g = 0; g < plan.group; ++g) {
      const float* src = plan.q + r * plan.q_row_stride + (kvh * plan.group + g) * plan.q_head_stride;
      float* d = dst + ((r - r0) * plan.group + g) * hd;
      for (int64_t i = 0; i < hd; ++i) d[i] = src[i] * scale;
    }
  }
}

// The int16 pair (a, b) as one 32-bit word (a in the low half).
HWY_INLINE uint32_t PackPair(int8_t a, int8_t b) {
  return static_cast<uint32_t>(static_cast<uint16_t>(static_cast<int16_t>(a))) |
         static_cast<uint32_t>(static_cast<uint16_t>(static_cast<int16_t>(b))) << 16;
}

// Q8_0 K cache: queries [first, first + n) of s.q quantized into s.q_levels /
// q_d / q_corr (QueriesQ8; kv_write.h's QuantizeQ8Block, d kept in F32).
void QuantizeQueries(int64_t first, int64_t n, int64_t hd, Scratch& s) {
  const int64_t nb = hd / KvQ8Geometry::kBlock;
  for (int64_t i = first; i < first + n; ++i) {
    // Rotated like the keys (kv_write.h): in place, the Q8_0 path reads s.q
    // only here.
    RotateForQ8K(s.q.data() + i * hd, static_cast<int>(hd), /*query=*/true);
    for (int64_t b = 0; b < nb; ++b) {
      int8_t* levels = s.q_levels.data() + i * hd + b * KvQ8Geometry::kBlock;
      s.q_d[i * nb + b] = QuantizeQ8Block(s.q.data() + i * hd + b * KvQ8Geometry::kBlock, levels);
      int32_t sum = 0;
      for (int e = 0; e < KvQ8Geometry::kBlock; ++e) sum += levels[e];
      s.q_corr[i * nb + b] = -128 * sum;
    }
    const int8_t* levels = s.q_levels.data() + i * hd;
    for (int64_t t = 0; t < hd / 4; ++t) {   // int16 pairs (l0, l2), (l1, l3) of each quad
      s.q_pairs[(i * (hd / 4) + t) * 2] = PackPair(levels[4 * t], levels[4 * t + 2]);
      s.q_pairs[(i * (hd / 4) + t) * 2 + 1] = PackPair(levels[4 * t + 1], levels[4 * t + 3]);
    }
  }
}

void PrepareScratch(const Plan& plan, int64_t n_queries, Scratch& s) {
  const size_t nq = static_cast<size_t>(n_queries);
  Scratch::Ensure(s.q, nq * plan.p->head_dim);
  Scratch::Ensure(s.scores, nq * plan.s_stride);
  Scratch::Ensure(s.rho, nq);
  Scratch::Ensure(s.part, nq * plan.State());
  Scratch::Ensure(s.acc, nq * plan.State());
  const size_t tile = static_cast<size_t>(plan.kv->block_tokens) * static_cast<size_t>(plan.p->head_dim);
  Scratch::Ensure(s.k_wide, tile);
  Scratch::Ensure(s.v_wide, tile);
  if (plan.kv->k_q8) {
    Scratch::Ensure(s.q_levels, nq * plan.p->head_dim);
    Scratch::Ensure(s.q_d, nq * plan.p->head_dim / KvQ8Geometry::kBlock);
    Scratch::Ensure(s.q_corr, nq * plan.p->head_dim / KvQ8Geometry::kBlock);
    Scratch::Ensure(s.q_pairs, nq * plan.p->head_dim / 2);
  }
}

// Rate at which the threads stream K and V from memory in contiguous runs of
// `bytes` (each followed by a jump to another block), relative to one long
// contiguous read: bandwidth_bench's BM_ReadRuns (of_contiguous, 2 threads,
// Zen 3 VM): 4 KiB 0.60, 16 KiB 0.81, 32 KiB 0.92, 64 KiB 0.93, 128 KiB and
// more 1.0. Linear in log2(bytes) between the points.
double RunStreamRate(int64_t bytes) {
  constexpr double kRate[] = {0.60, 0.71, 0.81, 0.90, 0.93, 0.97, 1.0};   // 4 KiB, 8 KiB, ..., 256 KiB
  const double x = std::clamp(std::log2(static_cast<double>(bytes) / 4096.0), 0.0, 6.0);
  const int i = std::min(static_cast<int>(x), 5);
  return kRate[i] + (x - i) * (kRate[i + 1] - kRate[i]);
}

// KV heads per split-KV task: a divisor of n_kv_heads. More heads per task
// make longer contiguous runs (a block slab stores a layer's heads one after
// another), fewer make more tasks to balance over the threads. Each divisor
// is priced by list-scheduling its tasks in index order (the order the pool
// hands them out) and dividing the longest thread's KV tokens by the run's
// stream rate; the cheapest wins (ties: fewer heads). The choice only moves
// work between threads: a row's bits never depend on it.
// Remembered per thread for the last arguments: every attention layer of a
// decode step asks the same question.
int SplitHeadsPerTask(const Plan& plan, int64_t n_rows, int64_t rows_per_task, int threads) {
  struct Memo {
    int64_t key[7] = {-1};
    int heads = 1;
  };
  thread_local Memo memo;
  const int64_t key[7] = {plan.p->n_kv_heads, plan.p->head_dim, plan.kv->block_tokens, plan.q_pos0,
                          n_rows, rows_per_task, threads};
  if (std::equal(key, key + 7, memo.key)) return memo.heads;
  std::copy(key, key + 7, memo.key);
  const int64_t n_kv_heads = plan.p->n_kv_heads;
  // Bytes per key of K and V together, halved (F16 / BF16: 2 per element; Q8_0 K: ~1.06).
  const int64_t row_bytes =
      plan.kv->k_q8 ? (plan.p->head_dim * 2 + plan.kv->head_dim + plan.kv->head_dim / 16) / 2 : plan.p->head_dim * 2;
  const int64_t max_parts = plan.Parts(plan.q_pos0 + n_rows - 1);
  // busy: each thread's KV tokens so far, as a min-heap (the next task goes
  // to the thread that frees up first).
  std::vector<int64_t> busy;
  int best = 1;
  double best_time = std::numeric_limits<double>::infinity();
  for (int64_t heads = 1; heads <= n_kv_heads; ++heads) {
    if (n_kv_heads % heads != 0) continue;
    busy.assign(static_cast<size_t>(threads), 0);
    int64_t longest = 0;
    for (int64_t r0 = 0; r0 < n_rows; r0 += rows_per_task) {
      const int64_t p_end = plan.q_pos0 + std::min(r0 + rows_per_task, n_rows);   // one past the last key
      for (int64_t part = 0; part < max_parts; ++part) {
        const int64_t tokens = std::min(p_end, (part + 1) * plan.part_tokens) - part * plan.part_tokens;
        if (tokens <= 0) continue;
        for (int64_t g = 0; g < n_kv_heads / heads; ++g) {
          std::pop_heap(busy.begin(), busy.end(), std::greater<>());
          busy.back() += tokens * heads;
          longest = std::max(longest, busy.back());
          std::push_heap(busy.begin(), busy.end(), std::greater<>());
        }
      }
    }
    const double time =
        static_cast<double>(longest) / RunStreamRate(heads * plan.kv->block_tokens * row_bytes);
    if (time < best_time * (1.0 - 1e-9)) {
      best_time = time;
      best = static_cast<int>(heads);
    }
  }
  memo.heads = best;
  return best;
}

void AttentionImpl(const AttentionParams& p, const float* q, int64_t n_rows, int64_t q_pos0,
                   const KvView& kv, float* out, ThreadPool& pool) {
  CAIRN_CHECK(p.n_kv_heads == kv.n_kv_heads && p.head_dim == kv.head_dim);
  CAIRN_CHECK(p.n_heads % p.n_kv_heads == 0);
  CAIRN_CHECK(q_pos0 >= 0 && q_pos0 + n_rows <= kv.n_tokens);
  CAIRN_CHECK(kv.dtype == DType::kF16 || kv.dtype == DType::kBF16);
  CAIRN_CHECK(!kv.k_q8 || kv.head_dim % KvQ8Geometry::kBlock == 0);
  if (n_rows <= 0) return;
  Plan plan;
  plan.p = &p;
  plan.kv = &kv;
  plan.q = q;
  plan.q_pos0 = q_pos0;
  plan.q_head_stride = p.q_head_stride ? p.q_head_stride : p.head_dim;
  plan.q_row_stride = p.q_row_stride ? p.q_row_stride : static_cast<int64_t>(p.n_heads) * p.head_dim;
  plan.group = p.n_heads / p.n_kv_heads;
  plan.part_tokens = (kAttentionPartitionTokens + kv.block_tokens - 1) / kv.block_tokens * kv.block_tokens;
  plan.kv_row_stride = kv.head_dim;   // head-major slabs: one head's positions are contiguous
  // A tile's scores plus the slack a key micro-tile or a vector may run past
  // its end, rounded to 16 floats (64 bytes).
  plan.s_stride = (kv.block_tokens + kAccumulators + static_cast<int64_t>(hn::Lanes(DF())) + 15) / 16 * 16;
  const int64_t hd = p.head_dim;
  const int64_t state = plan.State();
  const int group = plan.group;
  const int64_t max_parts = plan.Parts(q_pos0 + n_rows - 1);
  const int64_t rows_per_task = std::max(kMinRowsPerTask, kMinQueriesPerTask / group);
  const int64_t row_blocks = (n_rows + rows_per_task - 1) / rows_per_task;
  const int64_t tasks = row_blocks * p.n_kv_heads;

  // One row block over several partitions (decode, verification): split-KV
  // tasks, so both threads work on the same partition's rows at a time (see
  // the split below). Otherwise (prefill) a task per (row block, KV head).
  const bool split = max_parts > 1 && (row_blocks == 1 || tasks < pool.num_threads());
  if (!split) {
    // Each task walks all partitions of its rows itself.
    pool.Run(tasks, [&](int64_t task, int) {
      const int kvh = static_cast<int>(task % p.n_kv_heads);
      const int64_t r0 = task / p.n_kv_heads * rows_per_task;
      const int64_t r1 = std::min(r0 + rows_per_task, n_rows);
      Scratch& s = ThreadScratch();
      PrepareScratch(plan, (r1 - r0) * group, s);
      LoadQueries(plan, kvh, r0, r1, s.q.data());
      if (kv.k_q8) QuantizeQueries(0, (r1 - r0) * group, hd, s);
      for (int64_t part = plan.FirstPart(q_pos0 + r0); part < plan.Parts(q_pos0 + r1 - 1); ++part) {
        RunPartitionAnyType(plan, kvh, kvh + 1, r0, r1, part, s, s.part.data());
        for (int64_t r = r0; r < r1; ++r) {
          if (part >= plan.Parts(q_pos0 + r) || part < plan.FirstPart(q_pos0 + r)) continue;
          for (int g = 0; g < group; ++g) {
            const int64_t qi = (r - r0) * group + g;
            MergePartition(s.part.data() + qi * state, hd, part == plan.FirstPart(q_pos0 + r),
                           s.acc.data() + qi * state);
          }
        }
      }
      for (int64_t r = r0; r < r1; ++r) {
        for (int g = 0; g < group; ++g) {
          const int64_t qi = (r - r0) * group + g;
          Finish(s.acc.data() + qi * state, hd, out + (r * p.n_heads + kvh * group + g) * hd);
        }
      }
    });
    return;
  }

  // Split-KV (decode, short verification batches): one task per (row block,
  // partition, group of KV heads), then a fixed-order merge per (row, head).
  std::vector<float> parts(static_cast<size_t>(n_rows) * p.n_heads * max_parts * state);
  auto part_ptr = [&](int64_t r, int64_t h, int64_t part) {
    return parts.data() + ((r * p.n_heads + h) * max_parts + part) * state;
  };
  const int heads_per_task = p.split_heads_per_task > 0
                                 ? p.split_heads_per_task
                                 : SplitHeadsPerTask(plan, n_rows, rows_per_task, pool.num_threads());
  CAIRN_CHECK(p.n_kv_heads % heads_per_task == 0);
  const int head_groups = p.n_kv_heads / heads_per_task;
  const int64_t split_tasks = row_blocks * max_parts * head_groups;
  pool.Run(split_tasks, [&](int64_t task, int) {
    const int kvh0 = static_cast<int>(task % head_groups) * heads_per_task;
    const int kvh1 = kvh0 + heads_per_task;
    const int64_t part = task / head_groups % max_parts;
    const int64_t r0 = task / head_groups / max_parts * rows_per_task;
    const int64_t r1 = std::min(r0 + rows_per_task, n_rows);
    if (part >= plan.Parts(q_pos0 + r1 - 1) || part < plan.FirstPart(q_pos0 + r0)) return;
    const int64_t head_queries = (r1 - r0) * group;
    Scratch& s = ThreadScratch();
    PrepareScratch(plan, heads_per_task * head_queries, s);
    for (int kvh = kvh0; kvh < kvh1; ++kvh) {
      LoadQueries(plan, kvh, r0, r1, s.q.data() + (kvh - kvh0) * head_queries * hd);
    }
    if (kv.k_q8) QuantizeQueries(0, heads_per_task * head_queries, hd, s);
    RunPartitionAnyType(plan, kvh0, kvh1, r0, r1, part, s, s.part.data());
    for (int kvh = kvh0; kvh < kvh1; ++kvh) {
      for (int64_t r = r0; r < r1; ++r) {
        if (part >= plan.Parts(q_pos0 + r) || part < plan.FirstPart(q_pos0 + r)) continue;
        for (int g = 0; g < group; ++g) {
          const float* st = s.part.data() + ((kvh - kvh0) * head_queries + (r - r0) * group + g) * state;
          std::copy(st, st + state, part_ptr(r, kvh * group + g, part));
        }
      }
    }
  });
  pool.Run(n_rows * p.n_heads, [&](int64_t task, int) {
    const int64_t r = task / p.n_heads;
    const int64_t h = task % p.n_heads;
    Scratch& s = ThreadScratch();
    Scratch::Ensure(s.acc, state);
    for (int64_t part = plan.FirstPart(q_pos0 + r); part < plan.Parts(q_pos0 + r); ++part) {
      MergePartition(part_ptr(r, h, part), hd, part == plan.FirstPart(q_pos0 + r), s.acc.data());
    }
    Finish(s.acc.data(), hd, out + (r * p.n_heads + h) * hd);
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace cairn::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cairn::kernels {

HWY_EXPORT(AttentionImpl);

void Attention(const AttentionParams& p, const float* q, int64_t n_rows, int64_t q_pos0,
               const KvView& kv, float* out, ThreadPool& pool) {
  HWY_DYNAMIC_DISPATCH(AttentionImpl)(p, q, n_rows, q_pos0, kv, out, pool);
}

}  // namespace cairn::kernels
#endif  // HWY_ONCE
