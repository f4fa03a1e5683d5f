// Highway implementation of kernels/conv1d.h.
//
// Loop order: channel vector outer, token inner. The four tap weights of a
// channel vector (deinterleaved once with LoadInterleaved4) and the sliding
// window of the last three inputs stay in registers for the whole run.
// No implicit FMA contraction: fused operations are explicit MulAdd/std::fma.
#pragma GCC optimize("fp-contract=off")

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/conv1d.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <cmath>
#include <vector>

#include <hwy/highway.h>

#include "core/error.h"
#include "kernels/activation-inl.h"
#include "kernels/conv1d.h"

HWY_BEFORE_NAMESPACE();
namespace cairn::kernels {
namespace HWY_NAMESPACE {

// Channels [c, c + width) with width <= lanes; tail blocks go through
// zero-padded buffers so every channel gets identical vector arithmetic.
template <class D>
HWY_INLINE void ConvBlock4(D d, const float* x, int64_t x_stride, int64_t n_tokens, int64_t channels,
                           int64_t c, size_t width, const float* w, float* state, bool apply_silu,
                           float* out, int64_t out_stride) {
  const size_t lanes = hn::Lanes(d);
  hn::Vec<D> w0, w1, w2, w3;
  if (width == lanes) {
    hn::LoadInterleaved4(d, w + c * 4, w0, w1, w2, w3);
  } else {
    HWY_ALIGN float taps[4][HWY_MAX_BYTES / sizeof(float)] = {};
    for (size_t i = 0; i < width; ++i)
      for (int j = 0; j < 4; ++j) taps[j][i] = w[(c + i) * 4 + j];
    w0 = hn::Load(d, taps[0]);
    w1 = hn::Load(d, taps[1]);
    w2 = hn::Load(d, taps[2]);
    w3 = hn::Load(d, taps[3]);
  }
  auto load = [&](const float* p) HWY_ATTR { return width == lanes ? hn::LoadU(d, p) : LoadTail(d, p, width); };
  auto store = [&](hn::Vec<D> v, float* p) HWY_ATTR {
    if (width == lanes) {
      hn::StoreU(v, d, p);
    } else {
      StoreTail(v, d, p, width);
    }
  };
  auto u0 = load(state + c);                 // oldest
  auto u1 = load(state + channels + c);
  auto u2 = load(state + 2 * channels + c);
  for (int64_t t = 0; t < n_tokens; ++t) {
    const auto u3 = load(x + t * x_stride + c);   // read before a possibly aliasing store
    auto acc = hn::Mul(w0, u0);
    acc = hn::MulAdd(w1, u1, acc);
    acc = hn::MulAdd(w2, u2, acc);
    acc = hn::MulAdd(w3, u3, acc);
    if (apply_silu) acc = SiluV(d, acc);
    store(acc, out + t * out_stride + c);
    u0 = u1;
    u1 = u2;
    u2 = u3;
  }
  store(u0, state + c);
  store(u1, state + channels + c);
  store(u2, state + 2 * channels + c);
}

void CausalConv1dImpl(const float* x, int64_t x_stride, int64_t n_tokens, int64_t channels,
                      int kernel, const float* w, float* state, bool apply_silu, float* out,
                      int64_t out_stride) {
  CAIRN_CHECK(kernel >= 1);
  const hn::ScalableTag<float> d;
  if (kernel == 4) {
    const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
    for (int64_t c = 0; c < channels; c += lanes) {
      const size_t width = static_cast<size_t>(std::min<int64_t>(lanes, channels - c));
      ConvBlock4(d, x, x_stride, n_tokens, channels, c, width, w, state, apply_silu, out, out_stride);
    }
    return;
  }
  // Generic kernel size: per channel, window [state ; inputs], same op order.
  const int hist = kernel - 1;
  std::vector<float> u(hist + n_tokens);
  std::vector<float> y(n_tokens);
  for (int64_t c = 0; c < channels; ++c) {
    for (int j = 0; j < hist; ++j) u[j] = state[j * channels + c];
    for (int64_t t = 0; t < n_tokens; ++t) u[hist + t] = x[t * x_stride + c];
    for (int64_t t = 0; t < n_tokens; ++t) {
      float acc = w[c * kernel] * u[t];
      for (int j = 1; j < kernel; ++j) acc = std::fma(w[c * kernel + j], u[t + j], acc);
      y[t] = acc;
    }
    if (apply_silu) MapUnary(y.data(), y.data(), n_tokens, [](auto dd, auto v) HWY_ATTR { return SiluV(dd, v); });
    for (int64_t t = 0; t < n_tokens; ++t) out[t * out_stride + c] = y[t];
    for (int j = 0; j < hist; ++j) state[j * channels + c] = u[n_tokens + j];
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace cairn::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cairn::kernels {

HWY_EXPORT(CausalConv1dImpl);

void CausalConv1d(const float* x, int64_t x_stride, int64_t n_tokens, int64_t channels, int kernel,
                  const float* w, float* state, bool apply_silu, float* out, int64_t out_stride) {
  HWY_DYNAMIC_DISPATCH(CausalConv1dImpl)(x, x_stride, n_tokens, channels, kernel, w, state,
                                         apply_silu, out, out_stride);
}

}  // namespace cairn::kernels
#endif  // HWY_ONCE
