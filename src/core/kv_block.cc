#include "core/kv_block.h"

#include <cstring>

namespace cairn {

void KvLayout::ZeroTokensFrom(uint8_t* block, int64_t valid) const {
  if (valid >= block_tokens) return;
  const int64_t tail = block_tokens - valid;
  const size_t row = static_cast<size_t>(head_dim) * ElemBytes();
  const KvQ8Geometry q8 = Q8();
  for (int layer = 0; layer < n_attn_layers; ++layer) {
    for (int kv = 0; kv < 2; ++kv) {
      uint8_t* slab = block + SlabOffset(layer, kv);
      for (int h = 0; h < n_kv_heads; ++h) {
        if (kv == 0 && k_q8) {
          uint8_t* region = slab + h * q8.RegionBytes();
          for (int64_t quad = 0; quad < head_dim / 4; ++quad) std::memset(region + q8.QuadOffset(quad, valid), 0, tail * 4);
          for (int64_t b = 0; b < q8.Blocks(); ++b) std::memset(region + q8.ScaleOffset(b, valid), 0, tail * 2);
        } else {
          std::memset(slab + h * block_tokens * row + valid * row, 0, tail * row);
        }
      }
    }
  }
}

}  // namespace cairn
