// Elementwise activations on F32 arrays (Highway, runtime dispatch).
//
// All functions take n contiguous floats; `out` may alias the input(s).
// Every element is computed by the same vector instruction sequence wherever
// it sits in the array (tails use masked full vectors), so results never
// depend on how an array is split. Accuracy bounds: kernels/activation-inl.h.
#pragma once

#include <cstdint>

namespace cairn::kernels {

// out = exp(x)                       (<= 1 ulp; 0 for x < -104; x <= 88.7)
void Exp(const float* x, float* out, int64_t n);
// out = 1 / (1 + exp(-x))
void Sigmoid(const float* x, float* out, int64_t n);
// out = x * sigmoid(x)  (SiLU / swish)
void Silu(const float* x, float* out, int64_t n);
// out = x > 20 ? x : log(1 + exp(x))   (torch softplus, beta 1, threshold 20)
void Softplus(const float* x, float* out, int64_t n);
// out = silu(gate) * up   (SwiGLU FFN; Llama/Qwen)
void SwiGlu(const float* gate, const float* up, float* out, int64_t n);
// x = x * sigmoid(gate)   (Qwen3.5 gated attention output, in place)
void MulSigmoid(const float* gate, float* x, int64_t n);

}  // namespace cairn::kernels
