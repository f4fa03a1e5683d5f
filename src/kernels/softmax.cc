// Highway implementation of kernels/softmax.h.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/softmax.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <algorithm>
#include <limits>

#include <hwy/highway.h>

#include "kernels/activation-inl.h"
#include "kernels/softmax.h"

HWY_BEFORE_NAMESPACE();
namespace cairn::kernels {
namespace HWY_NAMESPACE {

HWY_INLINE float RowMax(const float* x, int64_t n) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  auto vmax = hn::Set(d, -std::numeric_limits<float>::infinity());
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) vmax = hn::Max(vmax, hn::LoadU(d, x + i));
  float m = hn::GetLane(hn::MaxOfLanes(d, vmax));
  for (; i < n; ++i) m = std::max(m, x[i]);
  return m;
}

void SoftmaxImpl(const float* x, float* out, int64_t n_rows, int64_t n_cols) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* xr = x + r * n_cols;
    float* outr = out + r * n_cols;
    const auto vmax = hn::Set(d, RowMax(xr, n_cols));
    // Pass 1: e = exp(x - max), summed in lanes then a masked tail vector.
    auto acc = hn::Zero(d);
    int64_t i = 0;
    for (; i + lanes <= n_cols; i += lanes) {
      const auto e = ExpV(d, hn::Sub(hn::LoadU(d, xr + i), vmax));
      acc = hn::Add(acc, e);
      hn::StoreU(e, d, outr + i);
    }
    if (i < n_cols) {
      const size_t rest = static_cast<size_t>(n_cols - i);
      const auto m = hn::FirstN(d, rest);
      const auto e = hn::IfThenElseZero(m, ExpV(d, hn::Sub(LoadTail(d, xr + i, rest), vmax)));
      acc = hn::Add(acc, e);
      StoreTail(e, d, outr + i, rest);
    }
    const auto vsum = hn::SumOfLanes(d, acc);
    // Pass 2: divide (not multiply by a reciprocal: one rounding, like torch).
    i = 0;
    for (; i + lanes <= n_cols; i += lanes) {
      hn::StoreU(hn::Div(hn::LoadU(d, outr + i), vsum), d, outr + i);
    }
    if (i < n_cols) {
      const size_t rest = static_cast<size_t>(n_cols - i);
      StoreTail(hn::Div(LoadTail(d, outr + i, rest), vsum), d, outr + i, rest);
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace cairn::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cairn::kernels {

HWY_EXPORT(SoftmaxImpl);

void Softmax(const float* x, float* out, int64_t n_rows, int64_t n_cols) {
  HWY_DYNAMIC_DISPATCH(SoftmaxImpl)(x, out, n_rows, n_cols);
}

}  // namespace cairn::kernels
#endif  // HWY_ONCE
