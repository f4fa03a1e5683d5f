#include "kernels/kv_write.h"

#include "core/error.h"
#include "core/half.h"

namespace cairn::kernels {

void StoreKvToken(DType dtype, int n_kv_heads, int head_dim, const float* src, uint8_t* slab,
                  int token_in_block) {
  CAIRN_CHECK(dtype == DType::kF16 || dtype == DType::kBF16);
  const int64_t n = static_cast<int64_t>(n_kv_heads) * head_dim;
  uint16_t* dst = reinterpret_cast<uint16_t*>(slab) + token_in_block * n;
  if (dtype == DType::kF16) {
    for (int64_t i = 0; i < n; ++i) dst[i] = F32ToF16(src[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = F32ToBf16(src[i]);
  }
}

void LoadKvToken(DType dtype, int n_kv_heads, int head_dim, const uint8_t* slab, int token_in_block,
                 float* dst) {
  const int64_t n = static_cast<int64_t>(n_kv_heads) * head_dim;
  const uint16_t* src = reinterpret_cast<const uint16_t*>(slab) + token_in_block * n;
  for (int64_t i = 0; i < n; ++i) dst[i] = dtype == DType::kF16 ? F16ToF32(src[i]) : Bf16ToF32(src[i]);
}

}  // namespace cairn::kernels
