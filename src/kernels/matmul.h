// Matrix products of (possibly quantized) weight matrices with F32 activations.
//
// A weight matrix is stored as GGUF stores a 2-D tensor with ne = {cols, rows}:
// `rows` rows (output features), each row `cols` contiguous elements (input
// features) encoded in `type` blocks along the row.
//
// Exactness contract (Cairn's cache and speculation depend on it):
//   y[b][r] is bit-identical for any batch size, any row range split, and any
//   thread count — each output element is computed by one fixed sequence of
//   operations that depends only on (weight row r, activation row b).
// So a token's logits never depend on how many tokens were processed with it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/dtype.h"
#include "core/thread_pool.h"

namespace cairn::kernels {

struct MatrixView {
  DType type = DType::kF32;
  const void* data = nullptr;
  int64_t rows = 0;              // output features
  int64_t cols = 0;              // input features (multiple of the type's block size)
  size_t row_stride_bytes = 0;   // usually RowBytes(type, cols)
  // Rows stored in groups of 16, interleaved by 32-bit words (row_groups.h;
  // rows a multiple of 16, row_stride_bytes = RowBytes): Row() is then not a
  // row, RowFromGroups rebuilds one. MatMul and GetRow take either layout.
  bool row_groups = false;

  // Natural layout only.
  const uint8_t* Row(int64_t r) const {
    return static_cast<const uint8_t*>(data) + static_cast<size_t>(r) * row_stride_bytes;
  }
};

inline MatrixView MakeMatrixView(DType type, const void* data, int64_t rows, int64_t cols) {
  return MatrixView{type, data, rows, cols, RowBytes(type, cols)};
}

// y[b * ldy + r] = sum_c W[r][c] * x[b * ldx + c]   for b < batch, r < w.rows.
// x: [batch][ldx] F32 (ldx >= cols). y: [batch][ldy] F32 (ldy >= rows).
// batch == 1 is the decode (matrix-vector) path; small batches (2..16) are
// speculative verification; large batches are prefill.
void MatMul(const MatrixView& w, const float* x, int64_t ldx, int64_t batch, float* y,
            int64_t ldy, ThreadPool& pool);

// One product of MatMulSameInput: y[b * ldy + r] = sum_c W[r][c] * x[b * ldx + c].
struct MatMulOutput {
  MatrixView w;
  float* y = nullptr;
  int64_t ldy = 0;  // >= w.rows
};

// Several products of the same input x (e.g. q/k/v, or FFN gate/up): x is
// quantized once per activation format in use, and the rows of all outputs
// are split across the pool in one parallel section (one fork-join instead of
// one per matrix, and no thread idles at the end of a small matrix). Every
// y[b][r] is bit-identical to MatMul(outs[i].w, ...): the same kernel call
// per (weight row, activation row). All w.cols must be equal.
void MatMulSameInput(std::span<const MatMulOutput> outs, const float* x, int64_t ldx, int64_t batch,
                     ThreadPool& pool);

// Whether MatMul on the target that dispatch picks now runs a SIMD integer
// kernel for quantized weights of `type` (false: the scalar reference,
// RefKernel, or not a quantized type). Tests check that every quantized type has one on each
// SIMD target (x86 AVX2/AVX-512, Arm NEON/SVE).
bool MatMulKernelIsSimd(DType type);

// Dequantizes row r of w into out[0..cols) (embedding lookup).
void GetRow(const MatrixView& w, int64_t r, float* out);

// Whether the target that dispatch picks now has a row-group kernel for
// `type` (row_groups.h): model loading converts such matrices (rows a
// multiple of 16) when this is true. Same results either way (bit-identical).
bool MatMulPrefersRowGroups(DType type);

}  // namespace cairn::kernels
