// Scalar references for kernels/gated_delta.h and kernels/conv1d.h: the
// literal per-token recurrence of hybrid-architectures.md §1.4 in F32.
#pragma once

#include <cstdint>

#include "kernels/gated_delta.h"

namespace cairn::kernels::ref {

void GatedDeltaRecurrent(const GatedDeltaShape& shape, const GatedDeltaInputs& in,
                         int64_t n_tokens, float* state, float* out, int64_t out_stride);

void GatedDeltaGates(const float* a, const float* b, const float* a_log, const float* dt_bias,
                     int64_t n_tokens, int n_v_heads, float* g, float* beta);

// c_t = sum_j w[c][j] * u_{t-(K-1)+j} (state supplies u before the run), then
// SiLU if apply_silu; state [K-1][channels] becomes the last K-1 inputs.
void CausalConv1d(const float* x, int64_t x_stride, int64_t n_tokens, int64_t channels, int kernel,
                  const float* w, float* state, bool apply_silu, float* out, int64_t out_stride);

}  // namespace cairn::kernels::ref
