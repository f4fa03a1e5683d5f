// Per-target kernels for F32 / F16 / BF16 weights against F32 activations:
// weights are widened to F32 on load; per activation row two vector
// accumulators (even and odd vectors of the row, so batch 1 is not bound by
// one FMA latency chain), added, then Highway's SumOfLanes and a scalar tail.
// The order depends on the target's vector width but not on NB, so results
// are batch-independent within a target.
#if defined(CAIRN_KERNELS_GEMM_FLOAT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CAIRN_KERNELS_GEMM_FLOAT_INL_H_
#undef CAIRN_KERNELS_GEMM_FLOAT_INL_H_
#else
#define CAIRN_KERNELS_GEMM_FLOAT_INL_H_
#endif

#include <hwy/highway.h>

#include <cmath>
#include <cstring>

#include "core/dtype.h"
#include "core/half.h"

HWY_BEFORE_NAMESPACE();
namespace cairn::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <DType kType, class DF>
HWY_INLINE hn::Vec<DF> LoadWeightsF32(DF df, const uint8_t* row, int64_t i) {
  if constexpr (kType == DType::kF32) {
    return hn::LoadU(df, reinterpret_cast<const float*>(row) + i);
  } else if constexpr (kType == DType::kF16) {
    const hn::Rebind<hwy::float16_t, DF> dh;
    return hn::PromoteTo(df, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(row) + i));
  } else {
    const hn::Rebind<hwy::bfloat16_t, DF> dh;
    return hn::PromoteTo(df, hn::LoadU(dh, reinterpret_cast<const hwy::bfloat16_t*>(row) + i));
  }
}

template <DType kType>
float WeightAt(const uint8_t* row, int64_t i) {
  if constexpr (kType == DType::kF32) {
    float v;
    std::memcpy(&v, row + 4 * i, 4);
    return v;
  } else {
    uint16_t h;
    std::memcpy(&h, row + 2 * i, 2);
    return kType == DType::kF16 ? F16ToF32(h) : Bf16ToF32(h);
  }
}

// Accumulates w * x into (even, odd) for the 2-vector step at column i.
template <DType kType, class DF, class V>
HWY_INLINE void Step2(DF df, const uint8_t* wrow, const float* x, int64_t i, int64_t n, V& even, V& odd) {
  even = hn::MulAdd(LoadWeightsF32<kType>(df, wrow, i), hn::LoadU(df, x + i), even);
  odd = hn::MulAdd(LoadWeightsF32<kType>(df, wrow, i + n), hn::LoadU(df, x + i + n), odd);
}

template <DType kType>
struct FloatKernel {
  // Separate named accumulators (not arrays) so sizeless SVE vectors work.
  template <int NB>
  static void Rows(const uint8_t* wrow, int64_t cols, const float* const* xs, float* out) {
    static_assert(NB >= 1 && NB <= 4);
    const hn::ScalableTag<float> df;
    const int64_t n = static_cast<int64_t>(hn::Lanes(df));
    auto e0 = hn::Zero(df), e1 = e0, e2 = e0, e3 = e0;
    auto o0 = hn::Zero(df), o1 = o0, o2 = o0, o3 = o0;
    int64_t i = 0;
    for (; i + 2 * n <= cols; i += 2 * n) {
      Step2<kType>(df, wrow, xs[0], i, n, e0, o0);
      if constexpr (NB > 1) Step2<kType>(df, wrow, xs[1], i, n, e1, o1);
      if constexpr (NB > 2) Step2<kType>(df, wrow, xs[2], i, n, e2, o2);
      if constexpr (NB > 3) Step2<kType>(df, wrow, xs[3], i, n, e3, o3);
    }
    for (; i + n <= cols; i += n) {
      const auto w = LoadWeightsF32<kType>(df, wrow, i);
      e0 = hn::MulAdd(w, hn::LoadU(df, xs[0] + i), e0);
      if constexpr (NB > 1) e1 = hn::MulAdd(w, hn::LoadU(df, xs[1] + i), e1);
      if constexpr (NB > 2) e2 = hn::MulAdd(w, hn::LoadU(df, xs[2] + i), e2);
      if constexpr (NB > 3) e3 = hn::MulAdd(w, hn::LoadU(df, xs[3] + i), e3);
    }
    out[0] = hn::GetLane(hn::SumOfLanes(df, hn::Add(e0, o0)));
    if constexpr (NB > 1) out[1] = hn::GetLane(hn::SumOfLanes(df, hn::Add(e1, o1)));
    if constexpr (NB > 2) out[2] = hn::GetLane(hn::SumOfLanes(df, hn::Add(e2, o2)));
    if constexpr (NB > 3) out[3] = hn::GetLane(hn::SumOfLanes(df, hn::Add(e3, o3)));
    for (; i < cols; ++i) {
      const float w = WeightAt<kType>(wrow, i);
      for (int b = 0; b < NB; ++b) out[b] = std::fma(w, xs[b][i], out[b]);
    }
  }
};

}  // namespace HWY_NAMESPACE
}  // namespace cairn::kernels
HWY_AFTER_NAMESPACE();

#endif  // toggle guard
