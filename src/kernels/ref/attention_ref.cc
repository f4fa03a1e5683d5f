#include "kernels/ref/attention_ref.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/half.h"
#include "core/kv_block.h"
#include "kernels/kv_write.h"

namespace cairn::kernels::ref {
namespace {

double KvValue(const KvView& kv, const uint8_t* const* blocks, int64_t pos, int kvh, int i) {
  const uint8_t* slab = blocks[pos / kv.block_tokens];
  const int64_t t = pos % kv.block_tokens;
  // Head-major slab: [kv_head][block_tokens][head_dim].
  const uint16_t h = reinterpret_cast<const uint16_t*>(slab)[(kvh * kv.block_tokens + t) * kv.head_dim + i];
  return kv.dtype == DType::kF16 ? F16ToF32(h) : Bf16ToF32(h);
}

// Q8_0 K cache (kernels/attention_q8k-inl.h's numeric class): the query
// (scaled, rotated and quantized like the kernel's: q_levels [hd], q_d [hd / 32])
// against the key's levels, as sum_b dq_b * dk_b * isum_b in double.
double ScoreQ8(const KvView& kv, const int8_t* q_levels, const float* q_d, int64_t pos, int kvh) {
  const KvQ8Geometry g{kv.block_tokens, kv.head_dim};
  const uint8_t* region = kv.k_blocks[pos / kv.block_tokens] + kvh * g.RegionBytes();
  const int64_t j = pos % kv.block_tokens;
  double s = 0;
  for (int b = 0; b < g.Blocks(); ++b) {
    const float dq = q_d[b];
    const int8_t* levels = q_levels + b * KvQ8Geometry::kBlock;
    int64_t isum = 0;
    for (int i = 0; i < KvQ8Geometry::kBlock; ++i) {
      const int quad = b * KvQ8Geometry::kBlock / 4 + i / 4;
      isum += levels[i] * (region[g.QuadOffset(quad, j) + i % 4] - 128);
    }
    uint16_t h;
    std::memcpy(&h, region + g.ScaleOffset(b, j), sizeof h);
    s += static_cast<double>(dq) * F16ToF32(h) * static_cast<double>(isum);
  }
  return s;
}

}  // namespace

void Attention(const AttentionParams& p, const float* q, int64_t n_rows, int64_t q_pos0,
               const KvView& kv, float* out) {
  const int hd = p.head_dim;
  const int group = p.n_heads / p.n_kv_heads;
  const int64_t q_head_stride = p.q_head_stride ? p.q_head_stride : hd;
  const int64_t q_row_stride = p.q_row_stride ? p.q_row_stride : static_cast<int64_t>(p.n_heads) * hd;
  for (int64_t r = 0; r < n_rows; ++r) {
    const int64_t pos = q_pos0 + r;
    const int64_t t0 = p.window > 0 ? std::max<int64_t>(0, pos - p.window + 1) : 0;
    const int64_t n = pos + 1 - t0;   // visible positions [t0, pos]
    for (int h = 0; h < p.n_heads; ++h) {
      const int kvh = h / group;
      const float* qh = q + r * q_row_stride + h * q_head_stride;
      std::vector<double> s(n);
      if (kv.k_q8) {   // the query quantized once per row and head
        std::vector<float> q_scaled(hd), q_d(hd / KvQ8Geometry::kBlock);
        std::vector<int8_t> q_levels(hd);
        for (int i = 0; i < hd; ++i) q_scaled[i] = qh[i] * p.scale;
        RotateForQ8K(q_scaled.data(), hd, /*query=*/true);
        for (int b = 0; b < hd / KvQ8Geometry::kBlock; ++b) {
          q_d[b] = QuantizeQ8Block(q_scaled.data() + b * KvQ8Geometry::kBlock,
                                   q_levels.data() + b * KvQ8Geometry::kBlock);
        }
        for (int64_t t = 0; t < n; ++t) s[t] = ScoreQ8(kv, q_levels.data(), q_d.data(), t0 + t, kvh);
      }
      for (int64_t t = 0; t < n && !kv.k_q8; ++t) {
        double dot = 0;
        for (int i = 0; i < hd; ++i) dot += static_cast<double>(qh[i]) * KvValue(kv, kv.k_blocks, t0 + t, kvh, i);
        s[t] = dot * p.scale;
      }
      const double m = *std::max_element(s.begin(), s.end());
      double sum = 0;
      for (double& x : s) sum += (x = std::exp(x - m));
      for (int i = 0; i < hd; ++i) {
        double o = 0;
        for (int64_t t = 0; t < n; ++t) o += s[t] * KvValue(kv, kv.v_blocks, t0 + t, kvh, i);
        out[(r * p.n_heads + h) * hd + i] = static_cast<float>(o / sum);
      }
    }
  }
}

}  // namespace cairn::kernels::ref
