// Block formats of GGUF tensor types: scalar reference quantization and
// dequantization, bit-compatible with ggml's block layouts
// (../shared/reference/llama-cpp-notes.md §4.2).
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace cairn::kernels {

// True for types with dequantize + MatMul support (F32, F16, BF16, Q8_0, Q4_0,
// Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS).
bool IsSupportedWeightType(DType type);

// Encodes n floats (n a multiple of the block size) into RowBytes(type, n) bytes.
// Reference quality (round to nearest; K-quants search scales like ggml's
// reference quantizer).
void QuantizeRow(DType type, const float* src, int64_t n, void* dst);

// Decodes n elements from a row of `type`.
void DequantizeRow(DType type, const void* src, int64_t n, float* dst);

}  // namespace cairn::kernels
