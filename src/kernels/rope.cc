// Highway implementation of kernels/rope.h.
// HF rounds q*cos and rotate_half(q)*sin separately (three torch kernels).
// GCC would fuse our Mul+Sub into an FMA on FMA targets (-ffp-contract=fast is
// its C++ default), so contraction is switched off for this file.
#pragma GCC optimize("fp-contract=off")

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/rope.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <cmath>

#include <hwy/highway.h>

#include "kernels/activation-inl.h"
#include "kernels/rope.h"

HWY_BEFORE_NAMESPACE();
namespace cairn::kernels {
namespace HWY_NAMESPACE {

// Rotates pairs (i, i + half) of one head. The tail uses zero-padded vectors
// with the same instruction sequence (mul, mul, sub/add — never FMA).
HWY_INLINE void RotateHead(const float* HWY_RESTRICT c, const float* HWY_RESTRICT s, int64_t half,
                           float* x) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + lanes <= half; i += lanes) {
    const auto vc = hn::LoadU(d, c + i);
    const auto vs = hn::LoadU(d, s + i);
    const auto x1 = hn::LoadU(d, x + i);
    const auto x2 = hn::LoadU(d, x + half + i);
    hn::StoreU(hn::Sub(hn::Mul(x1, vc), hn::Mul(x2, vs)), d, x + i);
    hn::StoreU(hn::Add(hn::Mul(x2, vc), hn::Mul(x1, vs)), d, x + half + i);
  }
  if (i < half) {
    const size_t n = static_cast<size_t>(half - i);
    const auto vc = LoadTail(d, c + i, n);
    const auto vs = LoadTail(d, s + i, n);
    const auto x1 = LoadTail(d, x + i, n);
    const auto x2 = LoadTail(d, x + half + i, n);
    StoreTail(hn::Sub(hn::Mul(x1, vc), hn::Mul(x2, vs)), d, x + i, n);
    StoreTail(hn::Add(hn::Mul(x2, vc), hn::Mul(x1, vs)), d, x + half + i, n);
  }
}

void ApplyRopeImpl(const RopeTable& table, float* x, int64_t n_rows, int n_heads,
                   int64_t row_stride, int64_t head_stride) {
  const int64_t half = table.rot_dims() / 2;
  for (int64_t r = 0; r < n_rows; ++r) {
    for (int h = 0; h < n_heads; ++h) {
      RotateHead(table.cos(r), table.sin(r), half, x + r * row_stride + h * head_stride);
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace cairn::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cairn::kernels {

std::vector<float> RopeInvFreq(int rot_dims, float theta) {
  std::vector<float> inv(rot_dims / 2);
  for (int i = 0; i < rot_dims / 2; ++i) {
    // HF: arange(0, dim, 2).float() / dim  (an F32 division), theta ** that
    // (F32 result), then 1.0 / that (F32).
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(rot_dims);
    const float power = static_cast<float>(std::pow(static_cast<double>(theta),
                                                    static_cast<double>(exponent)));
    inv[i] = 1.0f / power;
  }
  return inv;
}

RopeTable::RopeTable(int rot_dims, float theta)
    : rot_dims_(rot_dims), inv_freq_(RopeInvFreq(rot_dims, theta)) {}

void RopeTable::DivideFrequencies(const float* factors) {
  for (size_t i = 0; i < inv_freq_.size(); ++i) inv_freq_[i] /= factors[i];
}

void RopeTable::Compute(const int64_t* positions, int64_t n) {
  const int half = rot_dims_ / 2;
  if (static_cast<size_t>(n * half) > cos_.size()) {
    cos_.Resize(n * half);
    sin_.Resize(n * half);
  }
  rows_ = n;
  for (int64_t r = 0; r < n; ++r) {
    const float pos = static_cast<float>(positions[r]);
    for (int i = 0; i < half; ++i) {
      const double angle = static_cast<double>(pos * inv_freq_[i]);  // F32 product, as HF
      cos_[r * half + i] = static_cast<float>(std::cos(angle));
      sin_[r * half + i] = static_cast<float>(std::sin(angle));
    }
  }
}

HWY_EXPORT(ApplyRopeImpl);

void ApplyRope(const RopeTable& table, float* x, int64_t n_rows, int n_heads, int64_t row_stride,
               int64_t head_stride) {
  HWY_DYNAMIC_DISPATCH(ApplyRopeImpl)(table, x, n_rows, n_heads, row_stride, head_stride);
}

}  // namespace cairn::kernels
#endif  // HWY_ONCE
