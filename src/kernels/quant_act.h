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
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/dtype.h"

namespace cairn::kernels {

enum class ActFormat { kQ8, kQ8K, kQ8_1 };

// Activation format that the integer kernels for weight type `type` consume.
ActFormat ActFormatFor(DType type);

// One quantized activation row, planar: qs[cols], d[cols / block], for Q8K
// bsums[cols / 16], for Q8_1 s[cols / 32].
struct ActRow {
  const int8_t* qs;
  const float* d;
  const int16_t* bsums;  // kQ8K only, else nullptr
  const float* s;        // kQ8_1 only, else nullptr
};

// Bytes of one quantized row in the scratch buffer (a multiple of 64).
size_t ActRowBytes(ActFormat format, int64_t cols);

// Quantizes x[0..cols) into the row at `dst` (ActRowBytes bytes, 64-aligned).
void QuantizeActivationRow(ActFormat format, const float* x, int64_t cols, uint8_t* dst);

// After qs and d are written: the per-format sums (Q8K bsums, Q8_1 s). Shared
// by every target's quantizer (integer sums and one multiply: exact).
void FinishActivationRow(ActFormat format, int64_t cols, uint8_t* dst);

// View of a row written by QuantizeActivationRow.
ActRow ActRowAt(ActFormat format, const uint8_t* row, int64_t cols);

// Per-thread scratch of at least `bytes` bytes, 64-aligned, reused across calls
// (MatMul's quantized activations).
uint8_t* ActScratch(size_t bytes);

}  // namespace cairn::kernels
