// Writer side of the paged attention KV (core/kv_block.h): stores one token's
// K or V row into a block slab, converting F32 -> F16/BF16 with round to
// nearest even (core/half.h, bit-exact with ggml). The row is only
// n_kv_heads * head_dim values per layer per token, so scalar conversion costs
// far less than the projections that produced it.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace cairn::kernels {

// src: [n_kv_heads][head_dim] F32. slab: one layer's K (or V) slab of a block,
// head-major [n_kv_heads][block_tokens][head_dim] of dtype (kF16 or kBF16),
// so one head's positions are contiguous for attention. Writes the rows of
// `token_in_block` (= position % block_tokens).
void StoreKvToken(DType dtype, int n_kv_heads, int head_dim, int block_tokens, const float* src, uint8_t* slab,
                  int token_in_block);

// Inverse, for tests and debugging: slab rows -> F32 [n_kv_heads][head_dim].
void LoadKvToken(DType dtype, int n_kv_heads, int head_dim, int block_tokens, const uint8_t* slab,
                 int token_in_block, float* dst);

}  // namespace cairn::kernels
