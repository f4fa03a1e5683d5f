// Gated DeltaNet (Qwen3-Next / Qwen3.5 linear attention) on an F32 state.
// Math: ../shared/reference/hybrid-architectures.md §1.4. Per value head h
// (using key/query head h / (Hv / Hk)) and token t, with alpha = exp(g_t):
//   S'  = alpha * S                    decay
//   m   = S'^T k                       m[j] = sum_i S'[i][j] k[i]
//   u   = beta * (v - m)               delta
//   S   = S' + k u^T                   S[i][j] += k[i] u[j]
//   o   = S^T (q * q_scale)            o[j] = sum_i S[i][j] q[i] q_scale
//
// STATE LAYOUT: [Hv][d_k][d_v] F32, S[h][i][j] with i over key dims and j over
// value dims (row i contiguous). Every value column j evolves independently
// (it only reads k, q, alpha, beta and v[j]), which both kernels exploit.
//
// EXACTNESS. The recurrent form computes each state element and output with a
// fixed per-token sequence of operations, so its results are bit-identical
// however a token run is split into calls and whatever the thread count. It
// is the default for decode, verification and prefill. The chunked (WY/UT)
// form is an alternative prefill path: it agrees with the recurrence to
// ~1e-6 relative but not bitwise; its chunks are aligned to absolute
// positions (multiples of kGatedDeltaChunk), so it is split-invariant only for
// splits at chunk boundaries.
#pragma once

#include <cstdint>

#include "core/thread_pool.h"

namespace cairn::kernels {

inline constexpr int kGatedDeltaChunk = 64;   // fla/HF/llama.cpp chunk size

struct GatedDeltaShape {
  int n_k_heads = 0;     // Hk (query/key heads)
  int n_v_heads = 0;     // Hv, a multiple of Hk (Qwen3.5-0.8B: 16/16; 4B+: 16/32)
  int d_k = 0;           // 128
  int d_v = 0;           // 128
  float q_scale = 0.0f;  // 1 / sqrt(d_k)

  int64_t StateFloats() const { return static_cast<int64_t>(n_v_heads) * d_k * d_v; }
};

// Per-token inputs, F32, already convolved, SiLU'd and (q, k) L2-normed;
// q is NOT yet scaled (the kernel applies q_scale).
struct GatedDeltaInputs {
  const float* q = nullptr;  // token t, key head j: q + t * q_stride + j * d_k
  int64_t q_stride = 0;
  const float* k = nullptr;  // like q
  int64_t k_stride = 0;
  const float* v = nullptr;  // token t, value head h: v + t * v_stride + h * d_v
  int64_t v_stride = 0;
  const float* g = nullptr;     // [n_tokens][Hv] log-decay g <= 0 (alpha = exp(g))
  const float* beta = nullptr;  // [n_tokens][Hv] in (0, 1)
};

// g = -exp(a_log[h]) * softplus(a[t][h] + dt_bias[h]),  beta = sigmoid(b[t][h]).
// a, b, g, beta: [n_tokens][n_v_heads]; a_log, dt_bias: [n_v_heads].
void GatedDeltaGates(const float* a, const float* b, const float* a_log, const float* dt_bias,
                     int64_t n_tokens, int n_v_heads, float* g, float* beta);

// Recurrent form over n_tokens, continuing from `state` (updated in place).
// out: token t, value head h at out + t * out_stride + h * d_v.
// state_trace (optional, for speculative rollback): if non-null, receives a
// copy of the whole state after every token, [n_tokens][Hv][d_k][d_v]; after
// accepting j of the tokens, copy trace[j - 1] into the live state. (Equally
// exact and cheaper in memory: keep the state from before the call and re-run
// the first j tokens — the recurrence is bit-identical for any split.)
void GatedDeltaRecurrent(const GatedDeltaShape& shape, const GatedDeltaInputs& in,
                         int64_t n_tokens, float* state, float* out, int64_t out_stride,
                         ThreadPool& pool, float* state_trace = nullptr);

// Chunked (WY / UT-transform) form, same contract as GatedDeltaRecurrent
// without the trace. pos0 = absolute position of the first token (chunks end
// at multiples of kGatedDeltaChunk).
void GatedDeltaChunked(const GatedDeltaShape& shape, const GatedDeltaInputs& in, int64_t n_tokens,
                       int64_t pos0, float* state, float* out, int64_t out_stride,
                       ThreadPool& pool);

}  // namespace cairn::kernels
