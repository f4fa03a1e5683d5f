// Per-format row codecs behind QuantizeRow/DequantizeRow (scalar reference).
// n is a multiple of the format's block size; dst/src are raw block bytes.
#pragma once

#include <cstdint>

namespace cairn::kernels {

void QuantizeRowQ8_0(const float* x, int64_t n, void* dst);
void QuantizeRowQ4_0(const float* x, int64_t n, void* dst);
void QuantizeRowQ4K(const float* x, int64_t n, void* dst);
void QuantizeRowQ5K(const float* x, int64_t n, void* dst);
void QuantizeRowQ6K(const float* x, int64_t n, void* dst);

void DequantizeRowQ8_0(const void* src, int64_t n, float* y);
void DequantizeRowQ4_0(const void* src, int64_t n, float* y);
void DequantizeRowQ4K(const void* src, int64_t n, float* y);
void DequantizeRowQ5K(const void* src, int64_t n, float* y);
void DequantizeRowQ6K(const void* src, int64_t n, float* y);

// Unpacked integer levels of one K-quant super-block, in element order:
// Q4_K: 0..15, Q5_K: 0..31, Q6_K: 0..63 (the stored, unsigned levels).
void UnpackLevelsQ4K(const void* block, uint8_t q[256]);
void UnpackLevelsQ5K(const void* block, uint8_t q[256]);
void UnpackLevelsQ6K(const void* block, uint8_t q[256]);

// Scale fits of the reference quantizers, shared with quant_kquants2.cc
// (n <= 32 elements; definitions and parameters in quant_kquants.cc).
float FitScaleMin(int n, int nmax, const float* x, const float* w, uint8_t* L, float* min_out, float rmin,
                  float rdelta, int nstep);
float FitSymmetricScale(int n, int nmax, const float* x);

}  // namespace cairn::kernels
