// Row codecs and level unpacking of the 32-element block formats added after
// Q8_0/Q4_0: Q4_1, Q5_0, Q5_1 and IQ4_NL (scalar reference; layouts in
// quant_blocks.h). n is a multiple of 32; dst/src are raw block bytes.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace cairn::kernels {

void QuantizeRowQ4_1(const float* x, int64_t n, void* dst);
void QuantizeRowQ5_0(const float* x, int64_t n, void* dst);
void QuantizeRowQ5_1(const float* x, int64_t n, void* dst);
void QuantizeRowIQ4NL(const float* x, int64_t n, void* dst);

void DequantizeRowQ4_1(const void* src, int64_t n, float* y);
void DequantizeRowQ5_0(const void* src, int64_t n, float* y);
void DequantizeRowQ5_1(const void* src, int64_t n, float* y);
void DequantizeRowIQ4NL(const void* src, int64_t n, float* y);

// Block bytes of a 32-element block type (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL).
int Block32Bytes(DType type);

// True for the types with a per-block F16 minimum at byte 2 (Q4_1, Q5_1):
// value = d * q + m, dotted against Q8_1 activations.
inline bool HasBlockMin(DType type) { return type == DType::kQ4_1 || type == DType::kQ5_1; }

// The 32 integer levels of one block in element order, the integers the dot
// kernels multiply: Q8_0 qs; Q4_0 nibble - 8; Q5_0 x - 16 (-16..15); Q4_1
// 0..15 and Q5_1 0..31 (unsigned, the min is separate); IQ4_NL the codebook
// value (-127..113).
void UnpackLevels32(DType type, const uint8_t* block, int8_t q[32]);

}  // namespace cairn::kernels
