// Per-target activation quantization, bit-identical to QuantizeActivationRow
// (quant_act.cc): amax is an exact max, id = 127 / amax and d = amax / 127 are
// the same scalar operations, x * id is one IEEE multiply, and the conversion
// rounds to nearest-even like std::nearbyint (cvtps2dq / fcvtns). Targets
// whose conversion is emulated (SCALAR, EMU128, ...) call the scalar routine.
#if defined(CAIRN_KERNELS_QUANT_ACT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CAIRN_KERNELS_QUANT_ACT_INL_H_
#undef CAIRN_KERNELS_QUANT_ACT_INL_H_
#else
#define CAIRN_KERNELS_QUANT_ACT_INL_H_
#endif

#include <hwy/highway.h>

#include "kernels/quant_act.h"
#include "kernels/quant_blocks.h"

HWY_BEFORE_NAMESPACE();
namespace cairn::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

inline void QuantizeActivationRowTarget(ActFormat format, const float* x, int64_t cols, uint8_t* dst) {
  if (format == ActFormat::kQ8KX) {
    QuantizeActivationRowTarget(ActFormat::kQ8K, x, cols, dst);
    return ReorderQ8KX(dst, cols);
  }
  if (format == ActFormat::kQ8X) {
    // The numbers of kQ8_1, then the interleaving (O(cols) byte moves, next
    // to the O(rows x cols) products that read them).
    uint8_t* natural = Q8XNaturalScratch(cols);
    QuantizeActivationRowTarget(ActFormat::kQ8_1, x, cols, natural);
    return InterleaveQ8X(natural, cols, dst);
  }
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_NEON
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::Rebind<int8_t, decltype(df)> d8;
  const int64_t n = static_cast<int64_t>(hn::Lanes(df));
  const ActRow view = ActRowAt(format, dst, cols);
  auto* qs = const_cast<int8_t*>(view.qs);
  auto* d = const_cast<float*>(view.d);
  const int64_t block = format == ActFormat::kQ8K ? kQKK : kQK;
  for (int64_t i = 0; i < cols / block; ++i) {
    const float* xb = x + i * block;
    auto vmax = hn::Zero(df);
    for (int64_t j = 0; j < block; j += n) vmax = hn::Max(vmax, hn::Abs(hn::LoadU(df, xb + j)));
    const float amax = hn::GetLane(hn::MaxOfLanes(df, vmax));
    const float id = amax > 0.0f ? 127.0f / amax : 0.0f;
    d[i] = amax / 127.0f;
    const auto vid = hn::Set(df, id);
    const auto lo = hn::Set(di, -127), hi = hn::Set(di, 127);
    for (int64_t j = 0; j < block; j += n) {
      const auto q = hn::Min(hn::Max(hn::NearestInt(hn::Mul(hn::LoadU(df, xb + j), vid)), lo), hi);
      hn::StoreU(hn::DemoteTo(d8, q), d8, qs + i * block + j);
    }
  }
  if (format == ActFormat::kQ8K) {
    auto* bsums = const_cast<int16_t*>(view.bsums);
    for (int64_t k = 0; k < cols / 16; ++k) {
      int sum = 0;
      for (int j = 0; j < 16; ++j) sum += qs[16 * k + j];
      bsums[k] = static_cast<int16_t>(sum);
    }
  }
  if (format == ActFormat::kQ8_1) FinishActivationRow(format, cols, dst);  // s: a few ops per block
#else
  QuantizeActivationRow(format, x, cols, dst);
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace cairn::kernels
HWY_AFTER_NAMESPACE();

#endif  // toggle guard
