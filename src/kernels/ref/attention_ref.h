// Scalar reference for kernels/attention.h: naive causal softmax attention
// over all visible positions, accumulated in double, same paged KV input.
#pragma once

#include <cstdint>

#include "kernels/attention.h"

namespace cairn::kernels::ref {

void Attention(const AttentionParams& p, const float* q, int64_t n_rows, int64_t q_pos0,
               const KvView& kv, float* out);

}  // namespace cairn::kernels::ref
