#include "kernels/ref/ops_ref.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace cairn::kernels::ref {

float Exp(float x) { return static_cast<float>(std::exp(static_cast<double>(x))); }

float Sigmoid(float x) { return static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(x)))); }

float Silu(float x) {
  const double xd = x;
  return static_cast<float>(xd / (1.0 + std::exp(-xd)));
}

float Softplus(float x) {
  if (x > 20.0f) return x;
  return static_cast<float>(std::log1p(std::exp(static_cast<double>(x))));
}

void Softmax(const float* x, float* out, int64_t n_rows, int64_t n_cols) {
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* xr = x + r * n_cols;
    const double m = *std::max_element(xr, xr + n_cols);
    double sum = 0;
    for (int64_t i = 0; i < n_cols; ++i) sum += std::exp(xr[i] - m);
    for (int64_t i = 0; i < n_cols; ++i) out[r * n_cols + i] = static_cast<float>(std::exp(xr[i] - m) / sum);
  }
}

void RmsNormRow(const float* x, const float* w, float eps, int64_t dim, float* out) {
  double ss = 0;
  for (int64_t i = 0; i < dim; ++i) ss += static_cast<double>(x[i]) * x[i];
  const double inv = 1.0 / std::sqrt(ss / dim + eps);
  for (int64_t i = 0; i < dim; ++i) out[i] = static_cast<float>(x[i] * inv * (w ? w[i] : 1.0f));
}

void L2NormRow(const float* x, float eps, int64_t dim, float* out) {
  double ss = 0;
  for (int64_t i = 0; i < dim; ++i) ss += static_cast<double>(x[i]) * x[i];
  const double inv = 1.0 / std::sqrt(ss + eps);
  for (int64_t i = 0; i < dim; ++i) out[i] = static_cast<float>(x[i] * inv);
}

void RopeHead(float* x, int rot_dims, float theta, int64_t pos) {
  const int half = rot_dims / 2;
  std::vector<float> y(x, x + rot_dims);
  for (int i = 0; i < half; ++i) {
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(rot_dims);
    const float inv_freq = 1.0f / static_cast<float>(std::pow(static_cast<double>(theta), exponent));
    const float angle = static_cast<float>(pos) * inv_freq;
    const float c = static_cast<float>(std::cos(static_cast<double>(angle)));
    const float s = static_cast<float>(std::sin(static_cast<double>(angle)));
    // HF: q * cos + rotate_half(q) * sin, each product rounded to F32.
    const float a = x[i] * c;
    const float b = x[i + half] * s;
    const float e = x[i + half] * c;
    const float f = x[i] * s;
    y[i] = a - b;
    y[i + half] = e + f;
  }
  std::copy(y.begin(), y.end(), x);
}

}  // namespace cairn::kernels::ref
