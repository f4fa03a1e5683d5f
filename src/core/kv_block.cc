#include "core/kv_block.h"

#include <cstring>

namespace cairn {

namespace {

// Calls run(offset, bytes) for every run of bytes that positions [t0, t1) of
// a block occupy (offsets from the block's first byte): per slab and KV head,
// one run of F16 / BF16 rows, or for a Q8_0 K region one run per quad and one
// per scale block.
template <typename Run>
void ForEachTokenRun(const KvLayout& layout, int64_t t0, int64_t t1, Run run) {
  if (t1 <= t0) return;
  const int64_t n = t1 - t0;
  const size_t row = static_cast<size_t>(layout.head_dim) * layout.ElemBytes();
  const KvQ8Geometry q8 = layout.Q8();
  for (int layer = 0; layer < layout.n_attn_layers; ++layer) {
    for (int kv = 0; kv < 2; ++kv) {
      const size_t slab = layout.SlabOffset(layer, kv);
      for (int h = 0; h < layout.n_kv_heads; ++h) {
        if (kv == 0 && layout.k_q8) {
          const size_t region = slab + h * q8.RegionBytes();
          for (int64_t quad = 0; quad < layout.head_dim / 4; ++quad) run(region + q8.QuadOffset(quad, t0), n * 4);
          for (int64_t b = 0; b < q8.Blocks(); ++b) run(region + q8.ScaleOffset(b, t0), n * 2);
        } else {
          run(slab + (h * layout.block_tokens + t0) * row, n * row);
        }
      }
    }
  }
}

}  // namespace

void KvLayout::ZeroTokensFrom(uint8_t* block, int64_t valid) const {
  ForEachTokenRun(*this, valid, block_tokens, [&](size_t offset, size_t bytes) { std::memset(block + offset, 0, bytes); });
}

void KvLayout::CopyTokens(const uint8_t* src, uint8_t* dst, int64_t t0, int64_t t1) const {
  ForEachTokenRun(*this, t0, t1, [&](size_t offset, size_t bytes) { std::memcpy(dst + offset, src + offset, bytes); });
}

}  // namespace cairn
