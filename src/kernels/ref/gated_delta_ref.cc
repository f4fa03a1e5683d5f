#include "kernels/ref/gated_delta_ref.h"

#include <cmath>
#include <vector>

#include "kernels/ref/ops_ref.h"

namespace cairn::kernels::ref {

void GatedDeltaRecurrent(const GatedDeltaShape& sh, const GatedDeltaInputs& in, int64_t n_tokens,
                         float* state, float* out, int64_t out_stride) {
  const int dk = sh.d_k, dv = sh.d_v;
  const int ratio = sh.n_v_heads / sh.n_k_heads;
  std::vector<float> m(dv), u(dv);
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int h = 0; h < sh.n_v_heads; ++h) {
      const int kh = h / ratio;   // repeat-interleave, not modulo
      const float* q = in.q + t * in.q_stride + kh * dk;
      const float* k = in.k + t * in.k_stride + kh * dk;
      const float* v = in.v + t * in.v_stride + h * dv;
      const float alpha = std::exp(in.g[t * sh.n_v_heads + h]);
      const float beta = in.beta[t * sh.n_v_heads + h];
      float* S = state + static_cast<int64_t>(h) * dk * dv;
      for (int i = 0; i < dk * dv; ++i) S[i] *= alpha;                 // S' = alpha S
      for (int j = 0; j < dv; ++j) {                                    // m = S'^T k
        float acc = 0;
        for (int i = 0; i < dk; ++i) acc += S[i * dv + j] * k[i];
        m[j] = acc;
      }
      for (int j = 0; j < dv; ++j) u[j] = beta * (v[j] - m[j]);       // u = beta (v - m)
      for (int i = 0; i < dk; ++i)                                      // S = S' + k u^T
        for (int j = 0; j < dv; ++j) S[i * dv + j] += k[i] * u[j];
      float* o = out + t * out_stride + h * dv;                         // o = S^T (q scale)
      for (int j = 0; j < dv; ++j) {
        float acc = 0;
        for (int i = 0; i < dk; ++i) acc += S[i * dv + j] * (q[i] * sh.q_scale);
        o[j] = acc;
      }
    }
  }
}

void GatedDeltaGates(const float* a, const float* b, const float* a_log, const float* dt_bias,
                     int64_t n_tokens, int n_v_heads, float* g, float* beta) {
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int h = 0; h < n_v_heads; ++h) {
      const int64_t i = t * n_v_heads + h;
      g[i] = -std::exp(a_log[h]) * Softplus(a[i] + dt_bias[h]);
      beta[i] = Sigmoid(b[i]);
    }
  }
}

void CausalConv1d(const float* x, int64_t x_stride, int64_t n_tokens, int64_t channels, int kernel,
                  const float* w, float* state, bool apply_silu, float* out, int64_t out_stride) {
  const int hist = kernel - 1;
  for (int64_t c = 0; c < channels; ++c) {
    // window = [state (oldest first) ; inputs]
    std::vector<float> u(hist + n_tokens);
    for (int j = 0; j < hist; ++j) u[j] = state[j * channels + c];
    for (int64_t t = 0; t < n_tokens; ++t) u[hist + t] = x[t * x_stride + c];
    for (int64_t t = 0; t < n_tokens; ++t) {
      double acc = 0;
      for (int j = 0; j < kernel; ++j) acc += static_cast<double>(w[c * kernel + j]) * u[t + j];
      const float y = static_cast<float>(acc);
      out[t * out_stride + c] = apply_silu ? Silu(y) : y;
    }
    for (int j = 0; j < hist; ++j) state[j * channels + c] = u[n_tokens + j];
  }
}

}  // namespace cairn::kernels::ref
