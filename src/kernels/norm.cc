// Highway implementations of kernels/norm.h.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/norm.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <cmath>

#include <hwy/highway.h>

#include "kernels/activation-inl.h"
#include "kernels/norm.h"

HWY_BEFORE_NAMESPACE();
namespace cairn::kernels {
namespace HWY_NAMESPACE {

// Sum of x[i]^2 over n floats: two vector accumulators (latency hiding), then
// lanes, then a scalar tail — a fixed order for a given n.
HWY_INLINE float SumSquares(const float* HWY_RESTRICT x, int64_t n) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  auto acc0 = hn::Zero(d);
  auto acc1 = hn::Zero(d);
  int64_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    const auto a = hn::LoadU(d, x + i);
    const auto b = hn::LoadU(d, x + i + lanes);
    acc0 = hn::MulAdd(a, a, acc0);
    acc1 = hn::MulAdd(b, b, acc1);
  }
  for (; i + lanes <= n; i += lanes) {
    const auto a = hn::LoadU(d, x + i);
    acc0 = hn::MulAdd(a, a, acc0);
  }
  float sum = hn::GetLane(hn::SumOfLanes(d, hn::Add(acc0, acc1)));
  for (; i < n; ++i) sum += x[i] * x[i];
  return sum;
}

// out = (x * scale) * w, or x * scale when w is null.
HWY_INLINE void ScaleRow(const float* x, float scale, const float* w, int64_t n, float* out) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto vs = hn::Set(d, scale);
  int64_t i = 0;
  if (w != nullptr) {
    for (; i + lanes <= n; i += lanes) {
      hn::StoreU(hn::Mul(hn::Mul(hn::LoadU(d, x + i), vs), hn::LoadU(d, w + i)), d, out + i);
    }
    for (; i < n; ++i) out[i] = (x[i] * scale) * w[i];
  } else {
    for (; i + lanes <= n; i += lanes) hn::StoreU(hn::Mul(hn::LoadU(d, x + i), vs), d, out + i);
    for (; i < n; ++i) out[i] = x[i] * scale;
  }
}

void RmsNormImpl(const float* x, int64_t x_stride, const float* w, float eps, int64_t n_rows,
                 int64_t dim, float* out, int64_t out_stride) {
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* xr = x + r * x_stride;
    const float mean = SumSquares(xr, dim) / static_cast<float>(dim);
    ScaleRow(xr, 1.0f / std::sqrt(mean + eps), w, dim, out + r * out_stride);
  }
}

void RmsNormHeadsImpl(float* x, int64_t n_rows, int n_heads, int head_dim, int64_t row_stride,
                      int64_t head_stride, const float* w, float eps) {
  for (int64_t r = 0; r < n_rows; ++r) {
    for (int h = 0; h < n_heads; ++h) {
      float* xs = x + r * row_stride + h * head_stride;
      const float mean = SumSquares(xs, head_dim) / static_cast<float>(head_dim);
      ScaleRow(xs, 1.0f / std::sqrt(mean + eps), w, head_dim, xs);
    }
  }
}

void L2NormHeadsImpl(float* x, int64_t n_rows, int n_heads, int head_dim, int64_t row_stride,
                     int64_t head_stride, float eps) {
  for (int64_t r = 0; r < n_rows; ++r) {
    for (int h = 0; h < n_heads; ++h) {
      float* xs = x + r * row_stride + h * head_stride;
      ScaleRow(xs, 1.0f / std::sqrt(SumSquares(xs, head_dim) + eps), nullptr, head_dim, xs);
    }
  }
}

void RmsNormGatedImpl(const float* x, const float* z, const float* w, float eps, int64_t n_rows,
                      int64_t dim, float* out) {
  const hn::ScalableTag<float> d;
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* xr = x + r * dim;
    const float* zr = z + r * dim;
    float* outr = out + r * dim;
    const float mean = SumSquares(xr, dim) / static_cast<float>(dim);
    const auto vs = hn::Set(d, 1.0f / std::sqrt(mean + eps));
    // Padded tail (MapBinary-style) so SiLU is the same vector code everywhere.
    const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
    int64_t i = 0;
    for (; i + lanes <= dim; i += lanes) {
      const auto y = hn::Mul(hn::Mul(hn::LoadU(d, xr + i), vs), hn::LoadU(d, w + i));
      hn::StoreU(hn::Mul(y, SiluV(d, hn::LoadU(d, zr + i))), d, outr + i);
    }
    if (i < dim) {
      const size_t rest = static_cast<size_t>(dim - i);
      const auto y = hn::Mul(hn::Mul(LoadTail(d, xr + i, rest), vs), LoadTail(d, w + i, rest));
      StoreTail(hn::Mul(y, SiluV(d, LoadTail(d, zr + i, rest))), d, outr + i, rest);
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace cairn::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cairn::kernels {

HWY_EXPORT(RmsNormImpl);
HWY_EXPORT(RmsNormHeadsImpl);
HWY_EXPORT(L2NormHeadsImpl);
HWY_EXPORT(RmsNormGatedImpl);

void RmsNorm(const float* x, int64_t x_stride, const float* w, float eps, int64_t n_rows,
             int64_t dim, float* out, int64_t out_stride) {
  HWY_DYNAMIC_DISPATCH(RmsNormImpl)(x, x_stride, w, eps, n_rows, dim, out, out_stride);
}
void RmsNormHeads(float* x, int64_t n_rows, int n_heads, int head_dim, int64_t row_stride,
                  int64_t head_stride, const float* w, float eps) {
  HWY_DYNAMIC_DISPATCH(RmsNormHeadsImpl)(x, n_rows, n_heads, head_dim, row_stride, head_stride, w,
                                         eps);
}
void L2NormHeads(float* x, int64_t n_rows, int n_heads, int head_dim, int64_t row_stride,
                 int64_t head_stride, float eps) {
  HWY_DYNAMIC_DISPATCH(L2NormHeadsImpl)(x, n_rows, n_heads, head_dim, row_stride, head_stride,
                                        eps);
}
void RmsNormGated(const float* x, const float* z, const float* w, float eps, int64_t n_rows,
                  int64_t dim, float* out) {
  HWY_DYNAMIC_DISPATCH(RmsNormGatedImpl)(x, z, w, eps, n_rows, dim, out);
}

}  // namespace cairn::kernels
#endif  // HWY_ONCE
