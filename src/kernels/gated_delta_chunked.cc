// Chunked (WY / UT-transform) Gated DeltaNet for prefill
// (hybrid-architectures.md §1.4, "Chunked form"). Per value head and chunk of
// n <= 64 tokens with entry state S0 ([d_k][d_v]):
//   G_i = sum_{j<=i} g_j,  gamma_i = exp(G_i),  D_ij = exp(G_i - G_j) (j <= i only)
//   L_ij = beta_i D_ij (k_i . k_j)   (j < i)
//   W_i  = beta_i gamma_i k_i - sum_{j<i} L_ij W_j      (forward substitution:
//   Ut_i = beta_i v_i         - sum_{j<i} L_ij Ut_j      W = T diag(beta gamma) K, Ut = T diag(beta) V)
//   U_i  = Ut_i - W_i S0
//   O_i  = gamma_i (q_i S0) + sum_{j<=i} (q_i . k_j) D_ij U_j
//   S    = gamma_n S0 + sum_i exp(G_n - G_i) k_i^T U_i
// q is scaled by q_scale first. Heads run in parallel; chunks sequentially.
// No implicit FMA contraction: fused operations are explicit MulAdd.
#pragma GCC optimize("fp-contract=off")

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/gated_delta_chunked.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <algorithm>
#include <cmath>

#include <hwy/highway.h>

#include "core/aligned_buffer.h"
#include "core/error.h"
#include "kernels/activation-inl.h"
#include "kernels/gated_delta.h"

HWY_BEFORE_NAMESPACE();
namespace cairn::kernels {
namespace HWY_NAMESPACE {

// y[0, n) += a * x[0, n)
HWY_INLINE void Axpy(float a, const float* HWY_RESTRICT x, int64_t n, float* HWY_RESTRICT y) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto va = hn::Set(d, a);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(hn::MulAdd(va, hn::LoadU(d, x + i), hn::LoadU(d, y + i)), d, y + i);
  for (; i < n; ++i) y[i] = std::fma(a, x[i], y[i]);
}

HWY_INLINE void Scale(float a, const float* x, int64_t n, float* y) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto va = hn::Set(d, a);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(hn::Mul(va, hn::LoadU(d, x + i)), d, y + i);
  for (; i < n; ++i) y[i] = a * x[i];
}

HWY_INLINE float Dot(const float* HWY_RESTRICT a, const float* HWY_RESTRICT b, int64_t n) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  auto acc0 = hn::Zero(d), acc1 = hn::Zero(d);
  int64_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    acc0 = hn::MulAdd(hn::LoadU(d, a + i), hn::LoadU(d, b + i), acc0);
    acc1 = hn::MulAdd(hn::LoadU(d, a + i + lanes), hn::LoadU(d, b + i + lanes), acc1);
  }
  for (; i + lanes <= n; i += lanes) acc0 = hn::MulAdd(hn::LoadU(d, a + i), hn::LoadU(d, b + i), acc0);
  float sum = hn::GetLane(hn::SumOfLanes(d, hn::Add(acc0, acc1)));
  for (; i < n; ++i) sum = std::fma(a[i], b[i], sum);
  return sum;
}

struct ChunkScratch {
  AlignedBuffer<float> q, w, ut;   // [C][d_k], [C][d_k], [C][d_v] (ut becomes U)
  AlignedBuffer<float> o;          // [d_v]
  void Ensure(int64_t dk, int64_t dv) {
    const size_t c = kGatedDeltaChunk;
    if (q.size() < c * dk) { q.Resize(c * dk); w.Resize(c * dk); }
    if (ut.size() < c * dv) ut.Resize(c * dv);
    if (o.size() < static_cast<size_t>(dv)) o.Resize(dv);
  }
};

// One chunk [t0, t0 + n) of value head h; S: this head's state, updated.
void RunChunk(const GatedDeltaShape& sh, const GatedDeltaInputs& in, int h, int64_t t0, int64_t n,
              float* S, float* out, int64_t out_stride, ChunkScratch& s) {
  const int64_t dk = sh.d_k, dv = sh.d_v;
  const int kh = h / (sh.n_v_heads / sh.n_k_heads);
  float G[kGatedDeltaChunk] = {}, beta[kGatedDeltaChunk] = {};
  const float* k[kGatedDeltaChunk];
  float acc = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    acc += in.g[(t0 + i) * sh.n_v_heads + h];
    G[i] = acc;
    beta[i] = in.beta[(t0 + i) * sh.n_v_heads + h];
    k[i] = in.k + (t0 + i) * in.k_stride + kh * dk;
    Scale(sh.q_scale, in.q + (t0 + i) * in.q_stride + kh * dk, dk, s.q.data() + i * dk);
  }
  float* W = s.w.data();
  float* U = s.ut.data();
  // Forward substitution for W and Ut (T = (I + L)^-1 applied implicitly).
  for (int64_t i = 0; i < n; ++i) {
    Scale(beta[i] * std::exp(G[i]), k[i], dk, W + i * dk);
    Scale(beta[i], in.v + (t0 + i) * in.v_stride + h * dv, dv, U + i * dv);
    for (int64_t j = 0; j < i; ++j) {
      const float l = beta[i] * std::exp(G[i] - G[j]) * Dot(k[i], k[j], dk);
      Axpy(-l, W + j * dk, dk, W + i * dk);
      Axpy(-l, U + j * dv, dv, U + i * dv);
    }
  }
  // U = Ut - W S0.
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t a = 0; a < dk; ++a) Axpy(-W[i * dk + a], S + a * dv, dv, U + i * dv);
  }
  // O_i = gamma_i (q_i S0) + sum_{j<=i} (q_i . k_j) D_ij U_j.
  for (int64_t i = 0; i < n; ++i) {
    const float* qi = s.q.data() + i * dk;
    float* o = s.o.data();
    std::fill(o, o + dv, 0.0f);
    for (int64_t a = 0; a < dk; ++a) Axpy(qi[a], S + a * dv, dv, o);
    float* dst = out + (t0 + i) * out_stride + h * dv;
    Scale(std::exp(G[i]), o, dv, dst);
    for (int64_t j = 0; j <= i; ++j) Axpy(Dot(qi, k[j], dk) * std::exp(G[i] - G[j]), U + j * dv, dv, dst);
  }
  // S = gamma_n S0 + sum_i exp(G_n - G_i) k_i^T U_i.
  const float gn = G[n - 1];
  float decay[kGatedDeltaChunk];
  for (int64_t i = 0; i < n; ++i) decay[i] = std::exp(gn - G[i]);
  const float gamma_n = std::exp(gn);
  for (int64_t a = 0; a < dk; ++a) {
    float* row = S + a * dv;
    Scale(gamma_n, row, dv, row);
    for (int64_t i = 0; i < n; ++i) Axpy(decay[i] * k[i][a], U + i * dv, dv, row);
  }
}

void GatedDeltaChunkedImpl(const GatedDeltaShape& shape, const GatedDeltaInputs& in,
                           int64_t n_tokens, int64_t pos0, float* state, float* out,
                           int64_t out_stride, ThreadPool& pool) {
  CAIRN_CHECK(shape.n_k_heads > 0 && shape.n_v_heads % shape.n_k_heads == 0);
  if (n_tokens <= 0) return;
  const int64_t head_floats = static_cast<int64_t>(shape.d_k) * shape.d_v;
  pool.Run(shape.n_v_heads, [&](int64_t h, int) {
    thread_local ChunkScratch scratch;
    scratch.Ensure(shape.d_k, shape.d_v);
    int64_t t = 0;
    while (t < n_tokens) {
      // Chunks end at absolute multiples of kGatedDeltaChunk.
      const int64_t room = kGatedDeltaChunk - (pos0 + t) % kGatedDeltaChunk;
      const int64_t n = std::min(room, n_tokens - t);
      RunChunk(shape, in, static_cast<int>(h), t, n, state + h * head_floats, out, out_stride, scratch);
      t += n;
    }
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace cairn::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cairn::kernels {

HWY_EXPORT(GatedDeltaChunkedImpl);

void GatedDeltaChunked(const GatedDeltaShape& shape, const GatedDeltaInputs& in, int64_t n_tokens,
                       int64_t pos0, float* state, float* out, int64_t out_stride,
                       ThreadPool& pool) {
  HWY_DYNAMIC_DISPATCH(GatedDeltaChunkedImpl)(shape, in, n_tokens, pos0, state, out, out_stride,
                                              pool);
}

}  // namespace cairn::kernels
#endif  // HWY_ONCE
