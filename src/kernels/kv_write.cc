#include "kernels/kv_write.h"

#include "core/error.h"
#include "core/half.h"

namespace cairn::kernels {

void StoreKvToken(DType dtype, int n_kv_heads, int head_dim, int block_tokens, const float* src, uint8_t* slab,
                  int token_in_block) {
  CAIRN_CHECK(dtype == DType::kF16 || dtype == DType::kBF16);
  CAIRN_CHECK(token_in_block >= 0 && token_in_block < block_tokens);
  for (int h = 0; h < n_kv_heads; ++h) {
    uint16_t* dst = reinterpret_cast<uint16_t*>(slab) + (static_cast<int64_t>(h) * block_tokens + token_in_block) * head_dim;
    const float* row = src + static_cast<int64_t>(h) * head_dim;
    if (dtype == DType::kF16) {
      for (int i = 0; i < head_dim; ++i) dst[i] = F32ToF16(row[i]);
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

}  // namespace cairn::kernels
