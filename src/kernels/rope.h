// Rotary position embedding, NeoX ("rotate half") convention, with partial
// rotary (Qwen3.5: rot_dims = 64 of head_dim 256).
//
// Numerics follow Hugging Face's float32 computation:
//   inv_freq[i] = 1 / theta^(float(2i) / float(rot_dims))     (F32, i < rot/2)
//   angle       = float(pos) * inv_freq[i]                    (one F32 multiply)
//   x'[i]       = x[i] * cos - x[i + rot/2] * sin
//   x'[i+rot/2] = x[i + rot/2] * cos + x[i] * sin             (no FMA: mul, mul, add)
// Angles are bit-identical to HF. cos/sin are the correctly rounded values of
// the F32 angle (std::cos in double, rounded once); torch's vectorised
// cos/sin (SLEEF, 1-ulp class) differ from that by at most 1 ulp on ~4% of
// angles, and which ones depends on torch's CPU build — so 1 ulp of cos/sin is
// the best portable agreement; ours is deterministic on every machine. theta^e
// is likewise correctly rounded (torch's pow is within 1 ulp of it).
//
// Why a per-batch table instead of a table for all positions: Qwen3.5 allows
// 262144 positions; a full table is 262144 * 32 * 8 B = 64 MiB per model. A
// batch's table costs n * rot/2 sin/cos pairs (~1 us per token) and is shared
// by every attention layer of the forward pass.
#pragma once

#include <cstdint>
#include <vector>

#include "core/aligned_buffer.h"

namespace cairn::kernels {

// inv_freq [rot_dims / 2] as HF computes it (see above).
std::vector<float> RopeInvFreq(int rot_dims, float theta);

// cos/sin of one batch of positions: row r holds rot_dims/2 cos and sin values
// for positions[r]. Build once per forward pass, apply to q and k of every layer.
class RopeTable {
 public:
  RopeTable(int rot_dims, float theta);

  // Divides inv_freq[i] by factors[i] (rot_dims / 2 values): GGUF
  // `rope_freqs.weight`, Llama 3.1-style rope scaling baked into a tensor.
  // Call before Compute.
  void DivideFrequencies(const float* factors);

  // Recomputes the table for n positions (absolute, >= 0, < 2^24 for exact
  // float conversion — HF converts positions to float32 the same way).
  void Compute(const int64_t* positions, int64_t n);

  int rot_dims() const { return rot_dims_; }
  int64_t rows() const { return rows_; }
  const float* inv_freq() const { return inv_freq_.data(); }
  // [rot_dims / 2] values for row r.
  const float* cos(int64_t r) const { return cos_.data() + r * (rot_dims_ / 2); }
  const float* sin(int64_t r) const { return sin_.data() + r * (rot_dims_ / 2); }

 private:
  int rot_dims_;
  std::vector<float> inv_freq_;   // [rot_dims / 2]
  int64_t rows_ = 0;
  AlignedBuffer<float> cos_;      // [rows][rot_dims / 2]
  AlignedBuffer<float> sin_;      // [rows][rot_dims / 2]
};

// Rotates the first table.rot_dims() dims of every head in place; dims beyond
// stay unchanged. Row r (of n_rows <= table.rows()) uses table row r.
// Head (r, h) starts at x + r * row_stride + h * head_stride; head_dim >= rot_dims.
void ApplyRope(const RopeTable& table, float* x, int64_t n_rows, int n_heads,
               int64_t row_stride, int64_t head_stride);

}  // namespace cairn::kernels
