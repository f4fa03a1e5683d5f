// Scalar reference dot products and matrix products.
//
// For quantized weights these functions *define* MatMul's arithmetic: MatMul
// on every SIMD target must return bit-identical results to MatMulReference.
// The canonical operation sequence per (weight row, activation row):
//   Q8_0 / Q4_0 / Q5_0 / IQ4_NL (32-element blocks, activation Q8) and
//   Q4_1 / Q5_1 (activation Q8_1): sixteen F32 lane accumulators; block k
//   feeds lane k mod 16 with one FMA:
//       acc[k mod 16] = fma(float(isum_k), dw_k * dx_k, acc[k mod 16])
//     where isum_k is the exact integer dot of the block's 32 levels (those of
//     UnpackLevels32: Q4_0 nibble - 8, Q5_0 x - 16, IQ4_NL codebook values,
//     Q4_1/Q5_1 unsigned) with its 32 activation levels. Result:
//     ReduceLanes16(acc) = ReduceLanes8(r) with r_i = acc[i] + acc[i + 8],
//     ReduceLanes8(r) = ((s0 + s2) + (s1 + s3)) with s_i = r[i] + r[i + 4].
//     One FMA per block and sixteen blocks per 512-bit FMA: a SIMD kernel
//     sums each block in integers (x86: sixteen blocks transposed so that one
//     integer lane holds one block, activations interleaved to match, see
//     quant_act.h kQ8X) and spends one convert, one multiply and one FMA on
//     sixteen blocks, where lanes per 4-element group spent them per block
//     (issue: prefill >= 1.5x llama.cpp).
//     Q4_1 / Q5_1 add the min term m_k * s_k (s_k = dx_k * sum of block k's
//     activation levels, quant_act.h) in eight more lanes, block k in lane
//     k mod 8 (a SIMD kernel forms eight blocks' terms with one vector FMA):
//       accm[k mod 8] = fma(m_k, s_k, accm[k mod 8])
//     Result: ReduceLanes8(acc) + ReduceLanes8(accm).
//   Q4_K / Q5_K (activation Q8K): per super-block i, exact integers
//     sumi = sum_j sc_j * dot(q_j, x_j), summ = sum_j m_j * (bsum_2j + bsum_2j+1);
//     eight F32 lane accumulators, super-block i feeding lanes 2k, 2k + 1 with
//     k = i mod 4:
//       acc[2k] = fma(dx * d, float(sumi), acc[2k]);
//       acc[2k + 1] = fma(-(dx * dmin), float(summ), acc[2k + 1]).
//   Q6_K: sumi = sum_k sc_k * (dot(q_k, x_k) - 32 * bsum_k) (q unsigned 0..63);
//     acc[2k] = fma(dx * d, float(sumi), acc[2k]), k = i mod 4 (odd lanes
//     stay +0).
//   Q2_K: as Q4_K over 16 sub-blocks of 16 (q 0..3, scale sc_k = scales[k] &
//     0xF, min m_k = scales[k] >> 4): sumi = sum_k sc_k * dot(q_k, x_k),
//     summ = sum_k m_k * bsum_k; the same two FMAs in lanes 2k, 2k + 1.
//   Q3_K: sumi = sum_k s_k * dot(v_k, x_k) over 16 sub-blocks of 16 (v -4..3,
//     s_k -32..31); IQ4_XS: sumi = sum_ib (ls_ib - 32) * dot(kv_ib, x_ib)
//     over 8 sub-blocks of 32 (kv the IQ4_NL codebook value). Both: one FMA
//     as Q6_K, acc[2k] = fma(dx * d, float(sumi), acc[2k]).
//   Result (all K-quants): ReduceLanes8(acc). Four independent chains, not one: a
//   width-1 SIMD kernel then folds four super-blocks with one vector FMA
//   instead of a serial chain of eight scalar FMAs (4-cycle latency each),
//   which measured ~30% of the Q4_K decode kernel's time on Zen 3.
// For F32/F16/BF16 weights the SIMD order depends on the vector width, so the
// reference accumulates in double and tests compare with a relative tolerance.
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "kernels/matmul.h"
#include "kernels/quant_act.h"

namespace cairn::kernels {

// Canonical final reduction of eight lane accumulators (K-quants, min lanes).
inline float ReduceLanes8(const float acc[8]) {
  const float s0 = acc[0] + acc[4], s1 = acc[1] + acc[5];
  const float s2 = acc[2] + acc[6], s3 = acc[3] + acc[7];
  return (s0 + s2) + (s1 + s3);
}

// Canonical final reduction of the sixteen lanes of the 32-element types.
inline float ReduceLanes16(const float acc[16]) {
  float r[8];
  for (int i = 0; i < 8; ++i) r[i] = acc[i] + acc[i + 8];
  return ReduceLanes8(r);
}

// Dot of one weight row (raw blocks, `cols` elements) with one quantized
// activation row, in the canonical order above. Quantized types only.
float DotQuantizedRef(DType type, const void* wrow, const ActRow& x, int64_t cols);

// MatMul's exact specification (scalar): quantizes each activation row like
// MatMul does, then DotQuantizedRef; float types accumulate in double.
void MatMulReference(const MatrixView& w, const float* x, int64_t ldx, int64_t batch, float* y,
                     int64_t ldy);

// Dequantizes the weights and takes double-precision dots with the unquantized
// activations: the "true" product, for measuring quantization error.
void MatMulDequantReference(const MatrixView& w, const float* x, int64_t ldx, int64_t batch,
                            float* y, int64_t ldy);

}  // namespace cairn::kernels
