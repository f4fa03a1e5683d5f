// Row codecs and level unpacking of the 256-element types added after the
// Q4_K/Q5_K/Q6_K set: Q2_K, Q3_K and IQ4_XS (scalar reference; layouts in
// quant_blocks.h, docs/kernels-matmul.md). n is a multiple of 256; dst/src
// are raw block bytes. All three are dotted against Q8K activations.
#pragma once

#include <cstdint>

namespace cairn::kernels {

void QuantizeRowQ2K(const float* x, int64_t n, void* dst);
void QuantizeRowQ3K(const float* x, int64_t n, void* dst);
void QuantizeRowIQ4XS(const float* x, int64_t n, void* dst);

void DequantizeRowQ2K(const void* src, int64_t n, float* y);
void DequantizeRowQ3K(const void* src, int64_t n, float* y);
void DequantizeRowIQ4XS(const void* src, int64_t n, float* y);

// The integer levels of one super-block in element order, the integers the
// dot kernels multiply: Q2_K 0..3 (unsigned; the min is separate), Q3_K
// q2 - 4 * !hbit (-4..3), IQ4_XS the codebook value (-127..113).
void UnpackLevelsQ2K(const void* block, uint8_t q[256]);
void UnpackLevelsQ3K(const void* block, int8_t q[256]);
void UnpackLevelsIQ4XS(const void* block, int8_t q[256]);

// Signed sub-block scales: Q3_K's 16 (6-bit - 32, -32..31) from its 12 scale
// bytes, IQ4_XS's 8 (ls - 32, -32..31).
void UnpackQ3KScales(const uint8_t bytes[12], int8_t s[16]);
void UnpackIQ4XSScales(const void* block, int8_t s[8]);

}  // namespace cairn::kernels
