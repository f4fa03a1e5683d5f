// Highway implementation of the recurrent Gated DeltaNet form and the gate
// preparation (kernels/gated_delta.h).
//
// Work split: tasks are (value head, column block of the state). A column
// block is up to 4 vectors of value dims (AVX2: 32 floats -> 128 x 32 x 4 B =
// 16 KiB of state for d_k = 128), which stays in L1 (AVX-512: 32 KiB, L1/L2)
// for the whole token run because value columns evolve independently: the
// loop is head -> column block -> token -> key row, one pass over the rows
// per token (RunColumns4). Per element the operations are exactly the
// literal recurrence (decay, read, delta, write, readout) with FMAs, in an
// order that does not depend on the block width, the split of the token run
// or the thread count.
// No implicit FMA contraction: fused operations are explicit MulAdd.
#pragma GCC optimize("fp-contract=off")

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/gated_delta.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <algorithm>
#include <cmath>
#include <cstring>

#include <hwy/highway.h>

#include "core/error.h"
#include "kernels/activation-inl.h"
#include "kernels/gated_delta.h"

HWY_BEFORE_NAMESPACE();
namespace cairn::kernels {
namespace HWY_NAMESPACE {

// Stores the decayed row s' (four vectors at row) and adds k_i s' to the
// read sums m (one FMA chain per vector, rows in order).
template <class D, class V>
HWY_INLINE void StoreAndRead4(D d, float* row, int64_t lanes, V ki, V s0, V s1, V s2, V s3, V& m0, V& m1, V& m2,
                              V& m3) {
  hn::StoreU(s0, d, row);
  hn::StoreU(s1, d, row + lanes);
  hn::StoreU(s2, d, row + 2 * lanes);
  hn::StoreU(s3, d, row + 3 * lanes);
  m0 = hn::MulAdd(ki, s0, m0);
  m1 = hn::MulAdd(ki, s1, m1);
  m2 = hn::MulAdd(ki, s2, m2);
  m3 = hn::MulAdd(ki, s3, m3);
}

// Token loop for value columns [j0, j0 + 4 * lanes) of head h.
struct HeadTask {
  const GatedDeltaShape* shape;
  const GatedDeltaInputs* in;
  int64_t n_tokens;
  int h;
  float* state;       // this head: [d_k][d_v]
  float* out;
  int64_t out_stride;
  float* trace;       // this head's slot in trace step 0, or null
  int64_t trace_step; // floats between consecutive tokens' trace slots
};

// Token t's inputs for value columns from j0 of the task's head.
struct TokenInputs {
  const float* q;  // key dims
  const float* k;  // key dims
  const float* v;  // value dims from j0
  float alpha, beta;
};

HWY_INLINE TokenInputs InputsAt(const HeadTask& task, int64_t t, int64_t j0) {
  const GatedDeltaShape& sh = *task.shape;
  const GatedDeltaInputs& in = *task.in;
  const int kh = task.h / (sh.n_v_heads / sh.n_k_heads);
  return TokenInputs{in.q + t * in.q_stride + kh * sh.d_k, in.k + t * in.k_stride + kh * sh.d_k,
                     in.v + t * in.v_stride + task.h * sh.d_v + j0, std::exp(in.g[t * sh.n_v_heads + task.h]),
                     in.beta[t * sh.n_v_heads + task.h]};
}

// The per-token operations of the literal recurrence on one element s of
// row i (per column: decay, read, delta, write, readout):
//   s' = alpha_t s;  m_t += k_t[i] s'          (rows in order)
//   u_t = beta_t (v_t - m_t)
//   s = s' + k_t[i] u_t;  o_t += (q_t[i] q_scale) s   (rows in order)
// The write and readout of token t and the decay and read of token t + 1 run
// in one pass over the rows (the element's operations and each sum's order
// are unchanged): the state is loaded and stored once per token instead of
// twice, and the pass carries eight independent FMA chains (o_t, m_t+1)
// instead of four. Between tokens the stored rows hold s' of the next token;
// after the last token, s.

// Token loop for value columns [j0, j0 + 4 * lanes) of head h.
template <class D>
HWY_INLINE void RunColumns4(const HeadTask& task, D d, int64_t j0) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const GatedDeltaShape& sh = *task.shape;
  const int64_t dk = sh.d_k, dv = sh.d_v;
  // Decay and read of token 0.
  TokenInputs cur = InputsAt(task, 0, j0);
  auto m0 = hn::Zero(d), m1 = hn::Zero(d), m2 = hn::Zero(d), m3 = hn::Zero(d);
  {
    const auto alpha = hn::Set(d, cur.alpha);
    for (int64_t i = 0; i < dk; ++i) {
      float* row = task.state + i * dv + j0;
      const auto ki = hn::Set(d, cur.k[i]);
      const auto s0 = hn::Mul(alpha, hn::LoadU(d, row));
      const auto s1 = hn::Mul(alpha, hn::LoadU(d, row + lanes));
      const auto s2 = hn::Mul(alpha, hn::LoadU(d, row + 2 * lanes));
      const auto s3 = hn::Mul(alpha, hn::LoadU(d, row + 3 * lanes));
      StoreAndRead4(d, row, lanes, ki, s0, s1, s2, s3, m0, m1, m2, m3);
    }
  }
  for (int64_t t = 0; t < task.n_tokens; ++t) {
    // Delta: u = beta (v - m).
    const auto beta = hn::Set(d, cur.beta);
    const auto u0 = hn::Mul(beta, hn::Sub(hn::LoadU(d, cur.v), m0));
    const auto u1 = hn::Mul(beta, hn::Sub(hn::LoadU(d, cur.v + lanes), m1));
    const auto u2 = hn::Mul(beta, hn::Sub(hn::LoadU(d, cur.v + 2 * lanes), m2));
    const auto u3 = hn::Mul(beta, hn::Sub(hn::LoadU(d, cur.v + 3 * lanes), m3));
    const bool last = t + 1 == task.n_tokens;
    const TokenInputs next = last ? cur : InputsAt(task, t + 1, j0);
    const auto alpha = hn::Set(d, next.alpha);
    float* trace = task.trace != nullptr ? task.trace + t * task.trace_step : nullptr;
    // Write and read out token t (S = S' + k u^T, o = S^T (q * q_scale)),
    // then decay and read token t + 1.
    auto o0 = hn::Zero(d), o1 = hn::Zero(d), o2 = hn::Zero(d), o3 = hn::Zero(d);
    m0 = m1 = m2 = m3 = hn::Zero(d);
    for (int64_t i = 0; i < dk; ++i) {
      float* row = task.state + i * dv + j0;
      const auto ki = hn::Set(d, cur.k[i]);
      const auto qi = hn::Set(d, cur.q[i] * sh.q_scale);
      const auto s0 = hn::MulAdd(ki, u0, hn::LoadU(d, row));
      const auto s1 = hn::MulAdd(ki, u1, hn::LoadU(d, row + lanes));
      const auto s2 = hn::MulAdd(ki, u2, hn::LoadU(d, row + 2 * lanes));
      const auto s3 = hn::MulAdd(ki, u3, hn::LoadU(d, row + 3 * lanes));
      o0 = hn::MulAdd(qi, s0, o0);
      o1 = hn::MulAdd(qi, s1, o1);
      o2 = hn::MulAdd(qi, s2, o2);
      o3 = hn::MulAdd(qi, s3, o3);
      if (trace != nullptr) {
        float* tr = trace + i * dv + j0;
        hn::StoreU(s0, d, tr);
        hn::StoreU(s1, d, tr + lanes);
        hn::StoreU(s2, d, tr + 2 * lanes);
        hn::StoreU(s3, d, tr + 3 * lanes);
      }
      if (last) {
        hn::StoreU(s0, d, row);
        hn::StoreU(s1, d, row + lanes);
        hn::StoreU(s2, d, row + 2 * lanes);
        hn::StoreU(s3, d, row + 3 * lanes);
      } else {
        const auto kn = hn::Set(d, next.k[i]);
        const auto n0 = hn::Mul(alpha, s0);
        const auto n1 = hn::Mul(alpha, s1);
        const auto n2 = hn::Mul(alpha, s2);
        const auto n3 = hn::Mul(alpha, s3);
        StoreAndRead4(d, row, lanes, kn, n0, n1, n2, n3, m0, m1, m2, m3);
      }
    }
    float* o = task.out + t * task.out_stride + task.h * dv + j0;
    hn::StoreU(o0, d, o);
    hn::StoreU(o1, d, o + lanes);
    hn::StoreU(o2, d, o + 2 * lanes);
    hn::StoreU(o3, d, o + 3 * lanes);
    cur = next;
  }
}

// Same per-element operations for one column block of `width` <= lanes
// columns (d_v not a multiple of 4 vectors), through zero-padded vectors.
template <class D>
HWY_INLINE void RunColumns1(const HeadTask& task, D d, int64_t j0, int64_t width) {
  const GatedDeltaShape& sh = *task.shape;
  const int64_t dk = sh.d_k, dv = sh.d_v;
  const size_t w = static_cast<size_t>(width);
  TokenInputs cur = InputsAt(task, 0, j0);
  auto m = hn::Zero(d);
  {
    const auto alpha = hn::Set(d, cur.alpha);
    for (int64_t i = 0; i < dk; ++i) {
      float* row = task.state + i * dv + j0;
      const auto s = hn::Mul(alpha, LoadTail(d, row, w));
      StoreTail(s, d, row, w);
      m = hn::MulAdd(hn::Set(d, cur.k[i]), s, m);
    }
  }
  for (int64_t t = 0; t < task.n_tokens; ++t) {
    const auto u = hn::Mul(hn::Set(d, cur.beta), hn::Sub(LoadTail(d, cur.v, w), m));
    const bool last = t + 1 == task.n_tokens;
    const TokenInputs next = last ? cur : InputsAt(task, t + 1, j0);
    const auto alpha = hn::Set(d, next.alpha);
    float* trace = task.trace != nullptr ? task.trace + t * task.trace_step : nullptr;
    auto o = hn::Zero(d);
    m = hn::Zero(d);
    for (int64_t i = 0; i < dk; ++i) {
      float* row = task.state + i * dv + j0;
      const auto s = hn::MulAdd(hn::Set(d, cur.k[i]), u, LoadTail(d, row, w));
      o = hn::MulAdd(hn::Set(d, cur.q[i] * sh.q_scale), s, o);
      if (trace != nullptr) StoreTail(s, d, trace + i * dv + j0, w);
      if (last) {
        StoreTail(s, d, row, w);
      } else {
        const auto n = hn::Mul(alpha, s);
        StoreTail(n, d, row, w);
        m = hn::MulAdd(hn::Set(d, next.k[i]), n, m);
      }
    }
    StoreTail(o, d, task.out + t * task.out_stride + task.h * dv + j0, w);
    cur = next;
  }
}

void GatedDeltaRecurrentImpl(const GatedDeltaShape& shape, const GatedDeltaInputs& in,
                             int64_t n_tokens, float* state, float* out, int64_t out_stride,
                             ThreadPool& pool, float* state_trace) {
  CAIRN_CHECK(shape.n_k_heads > 0 && shape.n_v_heads % shape.n_k_heads == 0);
  if (n_tokens <= 0) return;
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t dv = shape.d_v;
  const int64_t wide = dv / (4 * lanes);                       // 4-vector blocks
  const int64_t narrow = (dv - wide * 4 * lanes + lanes - 1) / lanes;  // <= 1-vector blocks
  const int64_t blocks = wide + narrow;
  const int64_t head_floats = static_cast<int64_t>(shape.d_k) * dv;
  // Tasks: whole heads when there are enough to balance the threads (a
  // head's state rows then stay with one core: two cores writing neighbouring
  // column blocks of the same rows token after token made two threads
  // slower than one, 512-token prefill), else (head, column block) pieces.
  // Each column block's arithmetic is the same either way.
  const int64_t per_task = shape.n_v_heads >= 2 * pool.num_threads() ? blocks : 1;
  pool.Run(shape.n_v_heads * blocks / per_task, [&](int64_t task_idx, int) {
    const int64_t first = task_idx * per_task;
    const int h = static_cast<int>(first / blocks);
    HeadTask task{&shape, &in, n_tokens, h, state + h * head_floats, out, out_stride,
                  state_trace ? state_trace + h * head_floats : nullptr, shape.StateFloats()};
    for (int64_t b = first % blocks; b < first % blocks + per_task; ++b) {
      if (b < wide) {
        RunColumns4(task, d, b * 4 * lanes);
      } else {
        const int64_t j0 = wide * 4 * lanes + (b - wide) * lanes;
        RunColumns1(task, d, j0, std::min<int64_t>(lanes, dv - j0));
      }
    }
  });
}

void GatedDeltaGatesImpl(const float* a, const float* b, const float* a_log, const float* dt_bias,
                         int64_t n_tokens, int n_v_heads, float* g, float* beta) {
  for (int64_t t = 0; t < n_tokens; ++t) {
    const int64_t o = t * n_v_heads;
    for (int h = 0; h < n_v_heads; ++h) {
      g[o + h] = a[o + h] + dt_bias[h];
    }
    MapUnary(g + o, g + o, n_v_heads, [](auto dd, auto x) HWY_ATTR { return SoftplusV(dd, x); });
    MapUnary(b + o, beta + o, n_v_heads, [](auto dd, auto x) HWY_ATTR { return SigmoidV(dd, x); });
    for (int h = 0; h < n_v_heads; ++h) g[o + h] = -std::exp(a_log[h]) * g[o + h];
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace cairn::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cairn::kernels {

HWY_EXPORT(GatedDeltaRecurrentImpl);
HWY_EXPORT(GatedDeltaGatesImpl);

void GatedDeltaRecurrent(const GatedDeltaShape& shape, const GatedDeltaInputs& in,
                         int64_t n_tokens, float* state, float* out, int64_t out_stride,
                         ThreadPool& pool, float* state_trace) {
  HWY_DYNAMIC_DISPATCH(GatedDeltaRecurrentImpl)(shape, in, n_tokens, state, out, out_stride, pool,
                                                state_trace);
}

void GatedDeltaGates(const float* a, const float* b, const float* a_log, const float* dt_bias,
                     int64_t n_tokens, int n_v_heads, float* g, float* beta) {
  HWY_DYNAMIC_DISPATCH(GatedDeltaGatesImpl)(a, b, a_log, dt_bias, n_tokens, n_v_heads, g, beta);
}

}  // namespace cairn::kernels
#endif  // HWY_ONCE
