// Highway implementation of kernels/kv_write.h.
//
// F16 rows convert a vector at a time (hardware F32 -> F16 conversion, round
// to nearest even: the bits of core/half.h's F32ToF16, which the tests check
// on every target). A vector holding a NaN goes through F32ToF16 instead: the
// hardware keeps a NaN's payload, core/half.h writes one canonical quiet NaN.
// A prefill chunk appends n_kv_heads * head_dim values per layer and token
// (the 0.6B Qwen3: 2048 per layer, 57k per token), which converted one at a
// time took 5.6% of its prefill.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/kv_write.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "core/error.h"
#include "core/half.h"
#include "kernels/kv_write.h"

HWY_BEFORE_NAMESPACE();
namespace cairn::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void F32RowToF16Impl(const float* src, int64_t n, uint16_t* dst) {
#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
  // No hardware conversion: Highway's emulation does not saturate overflow
  // to infinity (the test caught 0x4b6f2a6f -> 0x7b79), so core/half.h's.
  for (int64_t i = 0; i < n; ++i) dst[i] = F32ToF16(src[i]);
#else
  const hn::ScalableTag<float> df;
  const hn::Rebind<hwy::float16_t, decltype(df)> dh;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto v = hn::LoadU(df, src + i);
    if (!hn::AllFalse(df, hn::IsNaN(v))) {
      for (int64_t j = i; j < i + lanes; ++j) dst[j] = F32ToF16(src[j]);
      continue;
    }
    hn::StoreU(hn::DemoteTo(dh, v), dh, reinterpret_cast<hwy::float16_t*>(dst + i));
  }
  for (; i < n; ++i) dst[i] = F32ToF16(src[i]);
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace cairn::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cairn::kernels {

HWY_EXPORT(F32RowToF16Impl);

void StoreKvToken(DType dtype, int n_kv_heads, int head_dim, int block_tokens, const float* src, uint8_t* slab,
                  int token_in_block) {
  CAIRN_CHECK(dtype == DType::kF16 || dtype == DType::kBF16);
  CAIRN_CHECK(token_in_block >= 0 && token_in_block < block_tokens);
  for (int h = 0; h < n_kv_heads; ++h) {
    uint16_t* dst = reinterpret_cast<uint16_t*>(slab) + (static_cast<int64_t>(h) * block_tokens + token_in_block) * head_dim;
    const float* row = src + static_cast<int64_t>(h) * head_dim;
    if (dtype == DType::kF16) {
      HWY_DYNAMIC_DISPATCH(F32RowToF16Impl)(row, head_dim, dst);
    } else {
      for (int i = 0; i < head_dim; ++i) dst[i] = F32ToBf16(row[i]);
    }
  }
}

void LoadKvToken(DType dtype, int n_kv_heads, int head_dim, int block_tokens, const uint8_t* slab,
                 int token_in_block, float* dst) {
  for (int h = 0; h < n_kv_heads; ++h) {
    const uint16_t* src =
        reinterpret_cast<const uint16_t*>(slab) + (static_cast<int64_t>(h) * block_tokens + token_in_block) * head_dim;
    float* row = dst + static_cast<int64_t>(h) * head_dim;
    for (int i = 0; i < head_dim; ++i) row[i] = dtype == DType::kF16 ? F16ToF32(src[i]) : Bf16ToF32(src[i]);
  }
}

void F32RowToF16(const float* src, int64_t n, uint16_t* dst) { HWY_DYNAMIC_DISPATCH(F32RowToF16Impl)(src, n, dst); }

}  // namespace cairn::kernels
#endif  // HWY_ONCE
