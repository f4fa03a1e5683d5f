// Highway implementation of kernels/conv1d.h.
//
// Two loop orders, the same operations per output element:
//   row order (kernel 4, out not overlapping x): token outer, channel vector
//     inner. The window is read back from x's previous rows (or the state
//     for the first three tokens), so every access runs along a row: a
//     prefill chunk's conv input (512 rows x 6144 channels, 12.6 MB) streams
//     through the caches once. The channel-outer order below walks it down
//     columns, 24 KB apart, which no prefetcher follows: 8% of the 0.8B
//     hybrid's 512-token prefill went there.
//   channel order (in place, or other kernel sizes): channel vector outer,
//     token inner. The four tap weights of a channel vector (deinterleaved
//     once with LoadInterleaved4) and the sliding window of the last three
//     inputs stay in registers for the whole run.
// No implicit FMA contraction: fused operations are explicit MulAdd/std::fma.
#pragma GCC optimize("fp-contract=off")

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/conv1d.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <algorithm>
#include <cmath>
#include <vector>

#include <hwy/highway.h>

#include "core/error.h"
#include "core/thread_pool.h"
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

// Row order over channels [c0, c1) (c0 a multiple of the lanes; x and out
// do not overlap). taps: [4][channels], tap j of channel c at taps[j *
// channels + c].
template <class D>
HWY_INLINE void ConvRows4(D d, const float* x, int64_t x_stride, int64_t n_tokens, int64_t channels, int64_t c0,
                          int64_t c1, const float* taps, float* state, bool apply_silu, float* out,
                          int64_t out_stride) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  // Raw input at position r (r >= -3): x row r, or state row r + 3.
  const auto input = [&](int64_t r) { return r >= 0 ? x + r * x_stride : state + (r + 3) * channels; };
  for (int64_t t = 0; t < n_tokens; ++t) {
    const float* u0 = input(t - 3);
    const float* u1 = input(t - 2);
    const float* u2 = input(t - 1);
    const float* u3 = x + t * x_stride;
    float* o = out + t * out_stride;
    for (int64_t c = c0; c < c1; c += lanes) {
      const size_t width = static_cast<size_t>(std::min<int64_t>(lanes, c1 - c));
      const auto load = [&](const float* p) HWY_ATTR {
        return width == static_cast<size_t>(lanes) ? hn::LoadU(d, p) : LoadTail(d, p, width);
      };
      auto acc = hn::Mul(load(taps + c), load(u0 + c));
      acc = hn::MulAdd(load(taps + channels + c), load(u1 + c), acc);
      acc = hn::MulAdd(load(taps + 2 * channels + c), load(u2 + c), acc);
      acc = hn::MulAdd(load(taps + 3 * channels + c), load(u3 + c), acc);
      if (apply_silu) acc = SiluV(d, acc);
      if (width == static_cast<size_t>(lanes)) {
        hn::StoreU(acc, d, o + c);
      } else {
        StoreTail(acc, d, o + c, width);
      }
    }
  }
  // New state row s = the raw input at position n_tokens - 3 + s. Ascending s
  // reads old state rows at or after the one it writes (n_tokens < 3).
  for (int s = 0; s < 3; ++s) {
    const float* src = input(n_tokens - 3 + s);
    std::copy(src + c0, src + c1, state + s * channels + c0);
  }
}

void CausalConv1dRangeImpl(const float* x, int64_t x_stride, int64_t n_tokens, int64_t channels, int kernel,
                           const float* w, const float* taps, float* state, bool apply_silu, float* out,
                           int64_t out_stride, int64_t c0, int64_t c1) {
  const hn::ScalableTag<float> d;
  if (taps != nullptr) {
    ConvRows4(d, x, x_stride, n_tokens, channels, c0, c1, taps, state, apply_silu, out, out_stride);
    return;
  }
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t c = c0; c < c1; c += lanes) {
    const size_t width = static_cast<size_t>(std::min<int64_t>(lanes, c1 - c));
    ConvBlock4(d, x, x_stride, n_tokens, channels, c, width, w, state, apply_silu, out, out_stride);
  }
}

int64_t ConvLanesImpl() { return static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>())); }

void CausalConv1dImpl(const float* x, int64_t x_stride, int64_t n_tokens, int64_t channels,
                      int kernel, const float* w, float* state, bool apply_silu, float* out,
                      int64_t out_stride) {
  CAIRN_CHECK(kernel >= 1);
  if (kernel == 4) {
    CausalConv1dRangeImpl(x, x_stride, n_tokens, channels, kernel, w, nullptr, state, apply_silu, out, out_stride, 0,
                          channels);
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
HWY_EXPORT(CausalConv1dRangeImpl);

// Tokens from which the pool overload switches to row order and threads.
constexpr int64_t kRowOrderMinTokens = 16;
HWY_EXPORT(ConvLanesImpl);

void CausalConv1d(const float* x, int64_t x_stride, int64_t n_tokens, int64_t channels, int kernel,
                  const float* w, float* state, bool apply_silu, float* out, int64_t out_stride) {
  HWY_DYNAMIC_DISPATCH(CausalConv1dImpl)(x, x_stride, n_tokens, channels, kernel, w, state,
                                         apply_silu, out, out_stride);
}

void CausalConv1d(const float* x, int64_t x_stride, int64_t n_tokens, int64_t channels, int kernel,
                  const float* w, float* state, bool apply_silu, float* out, int64_t out_stride,
                  ThreadPool& pool) {
  // Decode and verify runs (a few rows) stay in channel order on the caller:
  // the rows are a few KB, and deinterleaving the taps would cost more.
  if (kernel != 4 || n_tokens < kRowOrderMinTokens) {
    CausalConv1d(x, x_stride, n_tokens, channels, kernel, w, state, apply_silu, out, out_stride);
    return;
  }
  // Row order needs x's earlier rows intact: not when out overlaps x.
  const float* x_end = x + (n_tokens > 0 ? (n_tokens - 1) * x_stride + channels : 0);
  const float* out_end = out + (n_tokens > 0 ? (n_tokens - 1) * out_stride + channels : 0);
  const bool overlap = n_tokens > 0 && out < x_end && x < out_end;
  const float* taps = nullptr;
  thread_local std::vector<float> deinterleaved;
  if (!overlap) {
    deinterleaved.resize(static_cast<size_t>(4 * channels));
    for (int64_t c = 0; c < channels; ++c) {
      for (int j = 0; j < 4; ++j) deinterleaved[static_cast<size_t>(j * channels + c)] = w[c * 4 + j];
    }
    taps = deinterleaved.data();
  }
  // Whole vectors per task; one task per thread (a decode token is a few KB).
  const int64_t lanes = HWY_DYNAMIC_DISPATCH(ConvLanesImpl)();
  const int64_t vectors = (channels + lanes - 1) / lanes;
  const int64_t tasks = std::min<int64_t>(pool.num_threads(), vectors);
  const auto range = [&](int64_t task, int) {
    const int64_t c0 = vectors * task / tasks * lanes;
    const int64_t c1 = std::min(channels, vectors * (task + 1) / tasks * lanes);
    if (c0 < c1) {
      HWY_DYNAMIC_DISPATCH(CausalConv1dRangeImpl)(x, x_stride, n_tokens, channels, kernel, w, taps, state,
                                                  apply_silu, out, out_stride, c0, c1);
    }
  };
  if (tasks == 1) {
    range(0, 0);
  } else {
    pool.Run(tasks, range);
  }
}

}  // namespace cairn::kernels
#endif  // HWY_ONCE
