// Highway implementation of kernels/attention.h.
//
// Per query vector (one row, one head) and one partition of the keys:
//   for each tile (= KV block) in order:
//     s_j   = dot(q * scale, k_j)                 j over the tile's visible keys
//     m'    = max(m, max_j s_j);  rho = exp(m - m')   (rho = 0 while m = -inf)
//     p_j   = exp(s_j - m')
//     l     = rho * l + sum_j p_j                 (lanes, fixed order)
//     o     = rho * o + sum_j p_j v_j             (j ascending, FMA per element)
// Partitions are merged left to right: M = max, a = exp(M_old - M),
// b = exp(m - M), L = a L + b l, O = a O + b o; output = O / L.
// No implicit FMA contraction: every fused multiply-add is an explicit
// MulAdd/std::fma, so the arithmetic is what the source says on every target.
#pragma GCC optimize("fp-contract=off")

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/attention.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <hwy/highway.h>

#include "core/aligned_buffer.h"
#include "core/error.h"
#include "core/half.h"
#include "kernels/activation-inl.h"
#include "kernels/attention.h"

HWY_BEFORE_NAMESPACE();
namespace cairn::kernels {
namespace HWY_NAMESPACE {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr int64_t kRowsPerTask = 8;   // rows sharing one K/V tile conversion

// Everything a task needs, resolved once per call.
struct Plan {
  const AttentionParams* p;
  const KvView* kv;
  const float* q;
  int64_t q_pos0;
  int64_t q_row_stride, q_head_stride;
  int group;               // query heads per KV head
  int64_t part_tokens;     // partition length (multiple of block_tokens)

  int64_t Parts(int64_t pos) const { return pos / part_tokens + 1; }   // partitions row at pos sees
};

// Per-thread scratch, grown on demand and kept across calls (pool threads persist).
struct Scratch {
  AlignedBuffer<float> k_tile, v_tile;   // [block_tokens][head_dim]
  AlignedBuffer<float> scores;           // [block_tokens]
  AlignedBuffer<float> q;                // [n_queries][head_dim], scaled
  AlignedBuffer<float> part;             // [n_queries][head_dim + 2]: o, m, l of one partition
  AlignedBuffer<float> acc;              // [n_queries][head_dim + 2]: merged O, M, L

  static void Ensure(AlignedBuffer<float>& b, size_t n) {
    if (b.size() < n) b.Resize(n);
  }
};

Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

// dst[t - t0][:] = F32(slab[t][kvh][:]) for t in [t0, t1) (tile-relative t).
HWY_INLINE void ConvertTile(DType dtype, const uint8_t* slab, int n_kv_heads, int hd, int kvh,
                            int64_t t0, int64_t t1, float* HWY_RESTRICT dst) {
  const hn::ScalableTag<float> df;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  for (int64_t t = t0; t < t1; ++t) {
    const size_t offset = (static_cast<size_t>(t) * n_kv_heads + kvh) * hd;
    float* row = dst + (t - t0) * hd;
    int64_t i = 0;
    if (dtype == DType::kF16) {
      const hn::Rebind<hwy::float16_t, decltype(df)> dh;
      const auto* src = reinterpret_cast<const hwy::float16_t*>(slab) + offset;
      for (; i + lanes <= hd; i += lanes) hn::StoreU(hn::PromoteTo(df, hn::LoadU(dh, src + i)), df, row + i);
      for (; i < hd; ++i) row[i] = F16ToF32(reinterpret_cast<const uint16_t*>(src)[i]);
    } else {
      const hn::Rebind<hwy::bfloat16_t, decltype(df)> db;
      const auto* src = reinterpret_cast<const hwy::bfloat16_t*>(slab) + offset;
      for (; i + lanes <= hd; i += lanes) hn::StoreU(hn::PromoteTo(df, hn::LoadU(db, src + i)), df, row + i);
      for (; i < hd; ++i) row[i] = Bf16ToF32(reinterpret_cast<const uint16_t*>(src)[i]);
    }
  }
}

HWY_INLINE float Dot(const float* HWY_RESTRICT a, const float* HWY_RESTRICT b, int64_t n) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  auto acc0 = hn::Zero(d);
  auto acc1 = hn::Zero(d);
  int64_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    acc0 = hn::MulAdd(hn::LoadU(d, a + i), hn::LoadU(d, b + i), acc0);
    acc1 = hn::MulAdd(hn::LoadU(d, a + i + lanes), hn::LoadU(d, b + i + lanes), acc1);
  }
  for (; i + lanes <= n; i += lanes) acc0 = hn::MulAdd(hn::LoadU(d, a + i), hn::LoadU(d, b + i), acc0);
  float sum = hn::GetLane(hn::SumOfLanes(d, hn::Add(acc0, acc1)));
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

// o[:] = rho * o[:] + sum_{j < n} p[j] * v[j][:]; element-wise order: j ascending.
HWY_INLINE void AccumulateV(const float* HWY_RESTRICT p, const float* HWY_RESTRICT v, int64_t n,
                            int64_t hd, float rho, float* HWY_RESTRICT o) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto vrho = hn::Set(d, rho);
  int64_t c = 0;
  // Four vectors of o stay in registers while j runs over the tile.
  for (; c + 4 * lanes <= hd; c += 4 * lanes) {
    auto o0 = hn::Mul(hn::LoadU(d, o + c), vrho);
    auto o1 = hn::Mul(hn::LoadU(d, o + c + lanes), vrho);
    auto o2 = hn::Mul(hn::LoadU(d, o + c + 2 * lanes), vrho);
    auto o3 = hn::Mul(hn::LoadU(d, o + c + 3 * lanes), vrho);
    for (int64_t j = 0; j < n; ++j) {
      const auto pj = hn::Set(d, p[j]);
      const float* vj = v + j * hd + c;
      o0 = hn::MulAdd(pj, hn::LoadU(d, vj), o0);
      o1 = hn::MulAdd(pj, hn::LoadU(d, vj + lanes), o1);
      o2 = hn::MulAdd(pj, hn::LoadU(d, vj + 2 * lanes), o2);
      o3 = hn::MulAdd(pj, hn::LoadU(d, vj + 3 * lanes), o3);
    }
    hn::StoreU(o0, d, o + c);
    hn::StoreU(o1, d, o + c + lanes);
    hn::StoreU(o2, d, o + c + 2 * lanes);
    hn::StoreU(o3, d, o + c + 3 * lanes);
  }
  for (; c + lanes <= hd; c += lanes) {
    auto o0 = hn::Mul(hn::LoadU(d, o + c), vrho);
    for (int64_t j = 0; j < n; ++j) o0 = hn::MulAdd(hn::Set(d, p[j]), hn::LoadU(d, v + j * hd + c), o0);
    hn::StoreU(o0, d, o + c);
  }
  for (; c < hd; ++c) {
    // Scalar tail (head_dim not a multiple of the lanes): same op order, fma.
    float oc = o[c] * rho;
    for (int64_t j = 0; j < n; ++j) oc = std::fma(p[j], v[j * hd + c], oc);
    o[c] = oc;
  }
}

// One tile for one query: updates (m, l, o) with keys/values [0, n) of the tile.
HWY_INLINE void TileStep(const float* q, const float* k_tile, const float* v_tile, int64_t n,
                         int64_t hd, float* HWY_RESTRICT scores, float* o, float& m, float& l) {
  float tile_max = kNegInf;
  for (int64_t j = 0; j < n; ++j) {
    scores[j] = Dot(q, k_tile + j * hd, hd);
    tile_max = std::max(tile_max, scores[j]);
  }
  const float m_new = std::max(m, tile_max);
  const float rho = m == kNegInf ? 0.0f : std::exp(m - m_new);
  // p_j = exp(s_j - m_new) in place; sum over lanes (masked tail), fixed order.
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto vm = hn::Set(d, m_new);
  auto vsum = hn::Zero(d);
  int64_t j = 0;
  for (; j + lanes <= n; j += lanes) {
    const auto e = ExpV(d, hn::Sub(hn::LoadU(d, scores + j), vm));
    vsum = hn::Add(vsum, e);
    hn::StoreU(e, d, scores + j);
  }
  if (j < n) {
    const size_t rest = static_cast<size_t>(n - j);
    const auto e = hn::IfThenElseZero(hn::FirstN(d, rest), ExpV(d, hn::Sub(LoadTail(d, scores + j, rest), vm)));
    vsum = hn::Add(vsum, e);
    StoreTail(e, d, scores + j, rest);
  }
  l = rho * l + hn::GetLane(hn::SumOfLanes(d, vsum));
  AccumulateV(scores, v_tile, n, hd, rho, o);
  m = m_new;
}

// Reduces partition `part` for rows [r0, r1) and the `group` query heads of KV
// head kvh. Writes per query (row-major over (row, head-in-group)) its o, m, l
// to `out` ([n_queries][hd + 2]); queries whose row does not reach the
// partition are left untouched.
void RunPartition(const Plan& plan, int kvh, int64_t r0, int64_t r1, int64_t part, Scratch& s,
                  float* out) {
  const KvView& kv = *plan.kv;
  const int64_t hd = plan.p->head_dim;
  const int64_t bt = kv.block_tokens;
  const int group = plan.group;
  const int64_t p_max = plan.q_pos0 + r1 - 1;
  const int64_t part_begin = part * plan.part_tokens;
  const int64_t part_end = std::min(part_begin + plan.part_tokens, p_max + 1);
  const int64_t stride = hd + 2;
  // Fresh accumulators for the queries this partition reaches.
  for (int64_t r = r0; r < r1; ++r) {
    if (plan.q_pos0 + r < part_begin) continue;
    for (int g = 0; g < group; ++g) {
      float* st = out + ((r - r0) * group + g) * stride;
      std::fill(st, st + hd, 0.0f);
      st[hd] = kNegInf;
      st[hd + 1] = 0.0f;
    }
  }
  for (int64_t ts = part_begin; ts < part_end; ts += bt) {
    const int64_t te = std::min(ts + bt, part_end);
    const int64_t block = ts / bt;
    ConvertTile(kv.dtype, kv.k_blocks[block], kv.n_kv_heads, static_cast<int>(hd), kvh, ts - block * bt,
                te - block * bt, s.k_tile.data());
    ConvertTile(kv.dtype, kv.v_blocks[block], kv.n_kv_heads, static_cast<int>(hd), kvh, ts - block * bt,
                te - block * bt, s.v_tile.data());
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t pos = plan.q_pos0 + r;
      if (pos < ts) continue;
      const int64_t n = std::min(te, pos + 1) - ts;
      for (int g = 0; g < group; ++g) {
        const int64_t qi = (r - r0) * group + g;
        float* st = out + qi * stride;
        TileStep(s.q.data() + qi * hd, s.k_tile.data(), s.v_tile.data(), n, hd, s.scores.data(), st,
                 st[hd], st[hd + 1]);
      }
    }
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
  const hn::ScalableTag<float> d;
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

void PrepareScratch(const Plan& plan, int64_t n_queries, Scratch& s) {
  const size_t hd = plan.p->head_dim;
  const size_t bt = plan.kv->block_tokens;
  Scratch::Ensure(s.k_tile, bt * hd);
  Scratch::Ensure(s.v_tile, bt * hd);
  Scratch::Ensure(s.scores, bt + 16);
  Scratch::Ensure(s.q, n_queries * hd);
  Scratch::Ensure(s.part, n_queries * (hd + 2));
  Scratch::Ensure(s.acc, n_queries * (hd + 2));
}

void AttentionImpl(const AttentionParams& p, const float* q, int64_t n_rows, int64_t q_pos0,
                   const KvView& kv, float* out, ThreadPool& pool) {
  CAIRN_CHECK(p.n_kv_heads == kv.n_kv_heads && p.head_dim == kv.head_dim);
  CAIRN_CHECK(p.n_heads % p.n_kv_heads == 0);
  CAIRN_CHECK(q_pos0 >= 0 && q_pos0 + n_rows <= kv.n_tokens);
  CAIRN_CHECK(kv.dtype == DType::kF16 || kv.dtype == DType::kBF16);
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
  const int64_t hd = p.head_dim;
  const int group = plan.group;
  const int64_t max_parts = plan.Parts(q_pos0 + n_rows - 1);
  const int64_t row_blocks = (n_rows + kRowsPerTask - 1) / kRowsPerTask;
  const int64_t tasks = row_blocks * p.n_kv_heads;

  if (tasks >= pool.num_threads() || max_parts == 1) {
    // Each task walks all partitions of its rows itself.
    pool.Run(tasks, [&](int64_t task, int) {
      const int kvh = static_cast<int>(task % p.n_kv_heads);
      const int64_t r0 = task / p.n_kv_heads * kRowsPerTask;
      const int64_t r1 = std::min(r0 + kRowsPerTask, n_rows);
      Scratch& s = ThreadScratch();
      PrepareScratch(plan, (r1 - r0) * group, s);
      LoadQueries(plan, kvh, r0, r1, s.q.data());
      for (int64_t part = 0; part < plan.Parts(q_pos0 + r1 - 1); ++part) {
        RunPartition(plan, kvh, r0, r1, part, s, s.part.data());
        for (int64_t r = r0; r < r1; ++r) {
          if (part >= plan.Parts(q_pos0 + r)) continue;
          for (int g = 0; g < group; ++g) {
            const int64_t qi = (r - r0) * group + g;
            MergePartition(s.part.data() + qi * (hd + 2), hd, part == 0, s.acc.data() + qi * (hd + 2));
          }
        }
      }
      for (int64_t r = r0; r < r1; ++r) {
        for (int g = 0; g < group; ++g) {
          const int64_t qi = (r - r0) * group + g;
          Finish(s.acc.data() + qi * (hd + 2), hd, out + (r * p.n_heads + kvh * group + g) * hd);
        }
      }
    });
    return;
  }

  // Split-KV (decode, short verification batches): one task per (row, kv head,
  // partition), then a fixed-order merge per (row, head).
  std::vector<float> parts(static_cast<size_t>(n_rows) * p.n_heads * max_parts * (hd + 2));
  auto part_ptr = [&](int64_t r, int64_t h, int64_t part) {
    return parts.data() + ((r * p.n_heads + h) * max_parts + part) * (hd + 2);
  };
  const int64_t split_tasks = n_rows * p.n_kv_heads * max_parts;
  pool.Run(split_tasks, [&](int64_t task, int) {
    const int64_t part = task % max_parts;
    const int kvh = static_cast<int>(task / max_parts % p.n_kv_heads);
    const int64_t r = task / max_parts / p.n_kv_heads;
    if (part >= plan.Parts(q_pos0 + r)) return;
    Scratch& s = ThreadScratch();
    PrepareScratch(plan, group, s);
    LoadQueries(plan, kvh, r, r + 1, s.q.data());
    RunPartition(plan, kvh, r, r + 1, part, s, s.part.data());
    for (int g = 0; g < group; ++g) {
      std::copy(s.part.data() + g * (hd + 2), s.part.data() + (g + 1) * (hd + 2), part_ptr(r, kvh * group + g, part));
    }
  });
  pool.Run(n_rows * p.n_heads, [&](int64_t task, int) {
    const int64_t r = task / p.n_heads;
    const int64_t h = task % p.n_heads;
    Scratch& s = ThreadScratch();
    Scratch::Ensure(s.acc, hd + 2);
    for (int64_t part = 0; part < plan.Parts(q_pos0 + r); ++part) {
      MergePartition(part_ptr(r, h, part), hd, part == 0, s.acc.data());
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
