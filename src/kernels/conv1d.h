// Depthwise causal conv1d with carried state, optionally fused with SiLU
// (Gated DeltaNet short convolution over the [q | k | v] channels; kernel 4).
#pragma once

#include <cstdint>

namespace cairn {
class ThreadPool;
}

namespace cairn::kernels {

// x:     n_tokens rows of `channels` raw (pre-conv) inputs, row t at x + t * x_stride.
// w:     [channels][kernel] — GGUF ssm_conv1d (ne = {kernel, channels}): per
//        channel `kernel` contiguous taps; tap kernel-1 multiplies the current token.
// state: [kernel - 1][channels], row 0 the oldest earlier input (zeros for a
//        fresh sequence); on return the last kernel-1 raw inputs (covers
//        n_tokens < kernel - 1).
// out:   row t at out + t * out_stride: c_t = sum_j w[c][j] * u_{t-(kernel-1)+j},
//        then SiLU when apply_silu. out may alias x (in place).
// Each output is w0*u0, then FMA with taps 1..kernel-1 in order: bit-identical
// however the token run is split into calls (the state holds raw inputs).
// kernel 4 has the vectorised path; other sizes use a scalar loop.
void CausalConv1d(const float* x, int64_t x_stride, int64_t n_tokens, int64_t channels, int kernel,
                  const float* w, float* state, bool apply_silu, float* out, int64_t out_stride);

// The same on the pool's threads (channel ranges, whole vectors each), and in
// row order when kernel == 4 and out does not overlap x (conv1d.cc): the same
// bits as the call above.
void CausalConv1d(const float* x, int64_t x_stride, int64_t n_tokens, int64_t channels, int kernel,
                  const float* w, float* state, bool apply_silu, float* out, int64_t out_stride,
                  ThreadPool& pool);

}  // namespace cairn::kernels
