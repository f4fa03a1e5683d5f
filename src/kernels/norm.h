// Row normalisations on F32 activations (Highway, runtime dispatch).
//
// All sums of squares are accumulated in F32 in a fixed order that depends
// only on the row length (SIMD lanes, then a scalar tail), so a row's result
// never depends on how many rows are processed per call. The per-row scale is
// computed in scalar F32 as 1 / sqrt(s + eps) (Hugging Face's rsqrt).
// Inputs and outputs may alias (in-place use is the common case).
#pragma once

#include <cstdint>

namespace cairn::kernels {

// RMSNorm over rows: out = x * (1 / sqrt(mean(x^2) + eps)) * w   (HF order).
// x: n_rows rows of `dim` floats, row r at x + r * x_stride; out likewise.
// w: [dim]. For Qwen3.5's zero-centred norms the GGUF weight already holds 1+w.
void RmsNorm(const float* x, int64_t x_stride, const float* w, float eps, int64_t n_rows,
             int64_t dim, float* out, int64_t out_stride);

// Per-head RMSNorm in place (attention q_norm/k_norm): every head slice is
// normalised over head_dim with the shared weight w [head_dim].
// Slice (r, h) starts at x + r * row_stride + h * head_stride
// (Qwen3.5 q is interleaved [q_0 | gate_0 | q_1 | ...]: head_stride = 2 * head_dim).
void RmsNormHeads(float* x, int64_t n_rows, int n_heads, int head_dim, int64_t row_stride,
                  int64_t head_stride, const float* w, float eps);

// Per-head L2 norm in place (Gated DeltaNet q/k, fla/HF `l2norm`):
// x = x * (1 / sqrt(sum(x^2) + eps)), eps = 1e-6 in Qwen3.5/Qwen3-Next. Same
// slice addressing as RmsNormHeads.
void L2NormHeads(float* x, int64_t n_rows, int n_heads, int head_dim, int64_t row_stride,
                 int64_t head_stride, float eps);

// Gated RMSNorm (Gated DeltaNet output norm, plain weight, no 1+w):
// out = x * (1 / sqrt(mean(x^2) + eps)) * w * silu(z).
// x, z, out: [n_rows][dim] contiguous (one row per token and value head);
// w: [dim]. out may alias x or z.
void RmsNormGated(const float* x, const float* z, const float* w, float eps, int64_t n_rows,
                  int64_t dim, float* out);

}  // namespace cairn::kernels
