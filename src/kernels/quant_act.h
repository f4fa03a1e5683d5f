// 8-bit activation quantization used by MatMul for quantized weights, and the
// planar buffer layout the integer dot kernels read.
//
// Activations are quantized per row by one scalar routine shared by every
// SIMD target and the reference, so the integer part of every dot product is
// identical everywhere:
//   Q8 (32-element blocks, for Q8_0/Q4_0 weights): d = amax / 127 (F32),
//     q = round-half-even(x * 127 / amax) in [-127, 127].
//   Q8_1 (for Q4_1/Q5_1 weights, which carry a per-block min): Q8 plus
//     s[k] = d[k] * float(sum of the 32 q of block k), one F32 multiply of
//     the F32 d (unrounded, like d itself; ggml rounds d and s to F16), so
//     m * s is the min term's dot with the quantized block.
//   Q8K (256-element blocks, for K-quant weights): the same per 256 elements,
//     plus bsums[k] = sum of q over elements 16k..16k+15 (for the mins term).
//   Q8X (x86 kernels for every 32-element weight type): the numbers of Q8_1
//     in another order. Blocks are taken sixteen at a time (a group; the
//     last group is padded with zero blocks, d = s = 0), and a group's 512
//     bytes are interleaved by 4-byte words: word t of block j (elements
//     4t..4t+3) at byte 64 t + 4 j. A vector of 32-bit lanes then holds word
//     t of consecutive blocks, so integer dot instructions accumulate one
//     whole block per lane (dot_ref.h). Plus offset_sums[k] = -128 * (sum of
//     block k's 32 levels), int32: what a kernel that adds 128 to signed
//     weights (to use unsigned x signed byte dots) starts its sum from.
//   Q8KX (AVX-512 tile kernels for Q4_K/Q5_K/Q6_K, widths > 1): the numbers
//     of Q8K with each super-block's 256 levels reordered: byte 64u + 8j + e
//     holds element 32j + 8u + e (u < 4, j < 8, e < 8). A 64-byte vector then
//     holds eight consecutive levels of each of the eight 32-element
//     sub-blocks, so byte products of four such vectors summed lane-wise
//     stay within one sub-block (gemm_kquant_avx512-inl.h). d and bsums as Q8K.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/dtype.h"

namespace cairn::kernels {

enum class ActFormat { kQ8, kQ8K, kQ8_1, kQ8X, kQ8KX };

// Activation format that the scalar reference consumes for weight type
// `type` (kQ8, kQ8K or kQ8_1). SIMD targets may read the same numbers in
// another layout (matmul.cc: kQ8X on x86).
ActFormat ActFormatFor(DType type);

// Elements per quantization block of `format` (32, or 256 for kQ8K and kQ8KX).
int ActBlockElems(ActFormat format);

// One quantized activation row, planar: qs[cols], d[cols / block], for Q8K
// and Q8KX bsums[cols / 16], for Q8_1 and Q8X s[cols / 32], for Q8X offset_sums[cols / 32]
// (Q8X: qs interleaved and every array padded to whole groups of 16 blocks).
struct ActRow {
  const int8_t* qs;
  const float* d;
  const int16_t* bsums = nullptr;       // kQ8K and kQ8KX
  const float* s = nullptr;             // kQ8_1 and kQ8X
  const int32_t* offset_sums = nullptr;  // kQ8X only
};

// Blocks per Q8X group, and the blocks of a Q8X row padded to whole groups.
inline constexpr int64_t kQ8XGroup = 16;
inline int64_t Q8XPaddedBlocks(int64_t cols) { return (cols / 32 + kQ8XGroup - 1) / kQ8XGroup * kQ8XGroup; }

// Bytes of one quantized row in the scratch buffer (a multiple of 64).
size_t ActRowBytes(ActFormat format, int64_t cols);

// Quantizes x[0..cols) into the row at `dst` (ActRowBytes bytes, 64-aligned).
void QuantizeActivationRow(ActFormat format, const float* x, int64_t cols, uint8_t* dst);

// After qs and d are written: the per-format sums (Q8K bsums, Q8_1 s). Shared
// by every target's quantizer (integer sums and one multiply: exact).
void FinishActivationRow(ActFormat format, int64_t cols, uint8_t* dst);

// Q8X from the same row in kQ8_1 layout at `natural` (the interleaving, the
// padding and offset_sums); the row buffer for it: a per-thread scratch.
void InterleaveQ8X(const uint8_t* natural, int64_t cols, uint8_t* dst);
uint8_t* Q8XNaturalScratch(int64_t cols);

// Q8KX from Q8K: reorders the levels of every super-block of the row at
// `row` in place (d and bsums stay).
void ReorderQ8KX(uint8_t* row, int64_t cols);

// View of a row written by QuantizeActivationRow.
ActRow ActRowAt(ActFormat format, const uint8_t* row, int64_t cols);

// Per-thread scratch of at least `bytes` bytes, 64-aligned, reused across calls
// (MatMul's quantized activations).
uint8_t* ActScratch(size_t bytes);

}  // namespace cairn::kernels
