// Row-wise softmax on F32 (Highway, runtime dispatch).
#pragma once

#include <cstdint>

namespace cairn::kernels {

// out[r] = exp(x[r] - max(x[r])) / sum(exp(x[r] - max(x[r]))) for each of
// n_rows rows of n_cols contiguous floats (x and out: [n_rows][n_cols]; out
// may alias x). exp is kernels::Exp (<= 1 ulp), the sum is F32 in a fixed
// order, and the division is exact-rounded: each output is within ~4 ulp +
// n_cols * 2^-24 relative of the exact softmax. A row of all -inf gives NaN
// (as torch does); callers mask with finite values or skip such rows.
void Softmax(const float* x, float* out, int64_t n_rows, int64_t n_cols);

}  // namespace cairn::kernels
