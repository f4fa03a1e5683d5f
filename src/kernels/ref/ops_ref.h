// Scalar references for the elementwise, softmax, norm and RoPE kernels.
// Written for clarity, evaluated in double where that makes them a better
// yardstick (results rounded to F32 once). Tests compare the SIMD kernels
// against these with the tolerances stated next to each test.
#pragma once

#include <cstdint>

namespace cairn::kernels::ref {

float Exp(float x);
float Sigmoid(float x);
float Silu(float x);
float Softplus(float x);   // torch: x > 20 ? x : log1p(exp(x))

// out[r] = softmax(x[r]) over n_cols, x/out: [n_rows][n_cols].
void Softmax(const float* x, float* out, int64_t n_rows, int64_t n_cols);

// out = x / sqrt(mean(x^2) + eps) * w over one row of dim (w may be null).
void RmsNormRow(const float* x, const float* w, float eps, int64_t dim, float* out);
// out = x / sqrt(sum(x^2) + eps).
void L2NormRow(const float* x, float eps, int64_t dim, float* out);

// NeoX rotation of the first rot_dims of one head at `pos` (HF formula:
// inv_freq and angle in F32 exactly as HF, cos/sin correctly rounded).
void RopeHead(float* x, int rot_dims, float theta, int64_t pos);

}  // namespace cairn::kernels::ref
