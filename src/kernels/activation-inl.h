// Per-target vector math shared by the elementwise kernels (activation.cc,
// softmax.cc, norm.cc, conv1d.cc, ...). Included inside each kernel file's
// Highway target loop, so every kernel that applies SiLU uses the very same
// instruction sequence: an activation computed in a fused kernel is
// bit-identical to the standalone one.
//
// Accuracy (float32, vs std:: functions evaluated in double and rounded):
//   ExpV      Highway hn::Exp: <= 1 ulp on [-87.3, 88.7]; exactly 0 below -104.
//   SigmoidV  1 / (1 + ExpV(-x)): <= ~2 ulp (exp error + two roundings).
//   SiluV     x / (1 + ExpV(-x)): <= ~2 ulp relative, for |x| <= 88.
//   SoftplusV x > 20 ? x : log1p(ExpV(x)) (torch's threshold 20, beta 1):
//             <= ~3 ulp (Highway Log1p is documented <= 2 ulp).
// The exponent argument is clamped to <= 88 (exp(88) = 1.65e38 is finite), so
// SiLU/sigmoid of x < -88 return a value of magnitude < 1e-36 instead of the
// true (smaller) one or a NaN from inf/inf; the test allows that absolute error.
//
// Standard Highway "-inl.h" guard: the header is re-included once per target.
#if defined(CAIRN_KERNELS_ACTIVATION_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CAIRN_KERNELS_ACTIVATION_INL_H_
#undef CAIRN_KERNELS_ACTIVATION_INL_H_
#else
#define CAIRN_KERNELS_ACTIVATION_INL_H_
#endif

#include <cstring>

#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace cairn::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Loads n (< Lanes) floats into a zero-padded vector / stores its first n
// lanes. Through a stack buffer, so nothing past p[n) is touched (Highway
// 1.0.3's emulated MaskedLoad reads a whole vector, which ASan rejects).
template <class D>
HWY_INLINE hn::Vec<D> LoadTail(D d, const float* p, size_t n) {
  HWY_ALIGN float buf[HWY_MAX_BYTES / sizeof(float)] = {};
  std::memcpy(buf, p, n * sizeof(float));
  return hn::Load(d, buf);
}
template <class D>
HWY_INLINE void StoreTail(hn::Vec<D> v, D d, float* p, size_t n) {
  HWY_ALIGN float buf[HWY_MAX_BYTES / sizeof(float)];
  hn::Store(v, d, buf);
  std::memcpy(p, buf, n * sizeof(float));
}

// Largest argument passed to Exp in SiLU/sigmoid (exp(88) < FLT_MAX).
inline constexpr float kExpArgMax = 88.0f;

template <class D, class V>
HWY_INLINE V ExpV(D d, V x) {
  return hn::Exp(d, x);
}

template <class D, class V>
HWY_INLINE V SigmoidV(D d, V x) {
  const V one = hn::Set(d, 1.0f);
  const V e = hn::Exp(d, hn::Min(hn::Neg(x), hn::Set(d, kExpArgMax)));
  return hn::Div(one, hn::Add(one, e));
}

template <class D, class V>
HWY_INLINE V SiluV(D d, V x) {
  const V one = hn::Set(d, 1.0f);
  const V e = hn::Exp(d, hn::Min(hn::Neg(x), hn::Set(d, kExpArgMax)));
  return hn::Div(x, hn::Add(one, e));
}

// torch.nn.functional.softplus(x, beta=1, threshold=20).
template <class D, class V>
HWY_INLINE V SoftplusV(D d, V x) {
  const V threshold = hn::Set(d, 20.0f);
  const V soft = hn::Log1p(d, hn::Exp(d, hn::Min(x, threshold)));
  return hn::IfThenElse(hn::Gt(x, threshold), x, soft);
}

// Applies out[i] = f(d, in[i]) over n floats. The tail is processed as a
// zero-padded full vector (same instructions), so every element gets the same
// arithmetic wherever it sits in the array.
template <class F>
HWY_INLINE void MapUnary(const float* HWY_RESTRICT in, float* out, int64_t n, F f) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(f(d, hn::LoadU(d, in + i)), d, out + i);
  if (i < n) {
    const size_t rest = static_cast<size_t>(n - i);
    StoreTail(f(d, LoadTail(d, in + i, rest)), d, out + i, rest);
  }
}

// out[i] = f(d, a[i], b[i]).
template <class F>
HWY_INLINE void MapBinary(const float* a, const float* b, float* out, int64_t n, F f) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    hn::StoreU(f(d, hn::LoadU(d, a + i), hn::LoadU(d, b + i)), d, out + i);
  }
  if (i < n) {
    const size_t rest = static_cast<size_t>(n - i);
    StoreTail(f(d, LoadTail(d, a + i, rest), LoadTail(d, b + i, rest)), d, out + i, rest);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace cairn::kernels
HWY_AFTER_NAMESPACE();

#endif  // CAIRN_KERNELS_ACTIVATION_INL_H_
