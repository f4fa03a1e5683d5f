// Writer side of the paged attention KV (core/kv_block.h): stores one token's
// K or V row into a block slab, converting F32 -> F16/BF16 with round to
// nearest even (core/half.h, bit-exact with ggml). F16 converts a vector at a
// time (kv_write.cc); BF16 (not the default) one value at a time.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace cairn::kernels {

// src: [n_kv_heads][head_dim] F32. slab: one layer's K (or V) slab of a block,
// head-major [n_kv_heads][block_tokens][head_dim] of dtype (kF16 or kBF16),
// so one head's positions are contiguous for attention; or, dtype kQ8_0 (K
// only), one core/kv_block.h KvQ8Geometry region per head, each row quantized
// by QuantizeQ8Block after RotateForQ8K. Writes the rows of `token_in_block`
// (= position % block_tokens).
void StoreKvToken(DType dtype, int n_kv_heads, int head_dim, int block_tokens, const float* src, uint8_t* slab,
                  int token_in_block);

// dst[i] = F32ToF16(src[i]), i < n (core/half.h's bits; vectorised).
void F32RowToF16(const float* src, int64_t n, uint16_t* dst);

// ggml's Q8_0 of the 32 values at x (its quantize_row_q8_0 reference): d = amax /
// 127, levels[i] = round-half-away-from-zero(x[i] * (1 / d)) in [-127, 127]; d = 0
// gives levels 0. A block holding a NaN or an infinity gets d = NaN and levels 0
// (the scores it touches become NaN, as with an F16 cache). Returns d in F32:
// attention keeps a query's d in F32, the K cache stores F32ToF16(d).
float QuantizeQ8Block(const float* x, int8_t* levels);

// The Q8_0 K class's rotation, in place, of one row of head_dim elements:
// every run of size = KvQ8Geometry{.., head_dim}.Rotation() elements (none
// when 0) becomes W x * 2^-shift, W the size x size Sylvester Walsh-Hadamard
// matrix (entries +-1; a fast transform, butterflies of span 1, 2, 4, ...,
// each a + b, a - b in F32) and shift = floor(log2(size) / 2) for a key,
// log2(size) - that for a query, so (rotated q) . (rotated k) = q . k (W W = size I)
// with only exact power-of-two scalings. Keys are rotated by StoreKvToken,
// queries by the attention kernel, before each is quantized.
void RotateForQ8K(float* row, int head_dim, bool query);

// Inverse, for tests and debugging: slab rows -> F32 [n_kv_heads][head_dim]
// (Q8_0: level * d, i.e. the rotated key).
void LoadKvToken(DType dtype, int n_kv_heads, int head_dim, int block_tokens, const uint8_t* slab,
                 int token_in_block, float* dst);

}  // namespace cairn::kernels
