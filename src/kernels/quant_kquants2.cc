// Q2_K / Q3_K / IQ4_XS codecs (scalar reference).
//
// Dequantization uses ggml's (and gguf-py's) formulas in their operation
// order: Q2_K (d * sc) * q - (dmin * m), Q3_K (d * s) * v, IQ4_XS
// (d * (ls - 32)) * kv, so it is bit-exact with gguf.quants.dequantize
// (QuantTest.DequantizeMatchesGgufPyOnRandomBlocks). The quantizers are simple
// (tests and benchmarks; real files come from llama-quantize): per 16-element
// sub-block a (scale, min) fit (Q2_K, FitScaleMin) or a symmetric fit (Q3_K,
// FitSymmetricScale), per 32-element sub-block the IQ4_NL rule (IQ4_XS); then
// the sub-block scales quantized against an F16 super-block scale and the
// levels recomputed with the scales as stored.
#include "kernels/quant_kquants2.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/half.h"
#include "kernels/quant_blocks.h"
#include "kernels/quant_kquants.h"

namespace cairn::kernels {
namespace {

int NearestInt(float v) { return static_cast<int>(std::lrintf(v)); }

// Index of the codebook value nearest to v (ties: the lower index).
int NearestCodebookIndex(float v) {
  int best = 0;
  for (int t = 1; t < 16; ++t) {
    if (std::fabs(v - kIQ4NLValues[t]) < std::fabs(v - kIQ4NLValues[best])) best = t;
  }
  return best;
}

// Element e = 128h + 32j + l of a Q2_K/Q3_K super-block: bits 2j, 2j + 1 of
// qs[32h + l].
int Level2(const uint8_t* qs, int e) { return (qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3; }

// Q3_K: the 6-bit scale s6 (0..63) of sub-block k into the 12 bytes.
void PutQ3KScale(int k, int s6, uint8_t* bytes) {
  bytes[k % 8] |= static_cast<uint8_t>((s6 & 0xF) << (k < 8 ? 0 : 4));
  bytes[8 + k % 4] |= static_cast<uint8_t>((s6 >> 4) << (2 * (k / 4)));
}

uint16_t LoadU16(const uint8_t* p) { return LoadHalfBits(p); }

}  // namespace

void UnpackLevelsQ2K(const void* block, uint8_t q[256]) {
  const auto& b = *static_cast<const BlockQ2K*>(block);
  for (int e = 0; e < kQKK; ++e) q[e] = static_cast<uint8_t>(Level2(b.qs, e));
}

void UnpackLevelsQ3K(const void* block, int8_t q[256]) {
  const auto& b = *static_cast<const BlockQ3K*>(block);
  for (int e = 0; e < kQKK; ++e) {
    const int bit = (b.hmask[e % 32] >> (e / 32)) & 1;  // bit 4h + j = e / 32
    q[e] = static_cast<int8_t>(Level2(b.qs, e) - (bit ? 0 : 4));
  }
}

void UnpackLevelsIQ4XS(const void* block, int8_t q[256]) {
  const auto& b = *static_cast<const BlockIQ4XS*>(block);
  for (int ib = 0; ib < 8; ++ib) {
    for (int t = 0; t < 16; ++t) {
      q[32 * ib + t] = kIQ4NLValues[b.qs[16 * ib + t] & 0xF];
      q[32 * ib + t + 16] = kIQ4NLValues[b.qs[16 * ib + t] >> 4];
    }
  }
}

void UnpackQ3KScales(const uint8_t bytes[12], int8_t s[16]) {
  for (int k = 0; k < 16; ++k) {
    const int low4 = k < 8 ? bytes[k] & 0xF : bytes[k - 8] >> 4;
    const int high2 = (bytes[8 + k % 4] >> (2 * (k / 4))) & 3;
    s[k] = static_cast<int8_t>((low4 | (high2 << 4)) - 32);
  }
}

void UnpackIQ4XSScales(const void* block, int8_t s[8]) {
  const auto& b = *static_cast<const BlockIQ4XS*>(block);
  const int h = LoadU16(b.scales_h);
  for (int ib = 0; ib < 8; ++ib) {
    const int low4 = (b.scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF;
    s[ib] = static_cast<int8_t>((low4 | (((h >> (2 * ib)) & 3) << 4)) - 32);
  }
}

void QuantizeRowQ2K(const float* x, int64_t n, void* dst) {
  auto* blocks = static_cast<BlockQ2K*>(dst);
  for (int64_t i = 0; i < n / kQKK; ++i, x += kQKK) {
    BlockQ2K& b = blocks[i];
    float scales[16], mins[16], w[16];
    uint8_t L[kQKK];
    float max_scale = 0, max_min = 0;
    for (int k = 0; k < 16; ++k) {
      const float* xs = x + 16 * k;
      for (int l = 0; l < 16; ++l) w[l] = std::fabs(xs[l]);
      scales[k] = FitScaleMin(16, 3, xs, w, L + 16 * k, &mins[k], -0.5f, 0.1f, 15);
      max_scale = std::max(max_scale, scales[k]);
      max_min = std::max(max_min, mins[k]);
    }
    StoreHalfBits(F32ToF16(max_scale / 15.0f), b.d);
    StoreHalfBits(F32ToF16(max_min / 15.0f), b.dmin);
    const float d = F16ToF32(LoadHalfBits(b.d)), dmin = F16ToF32(LoadHalfBits(b.dmin));
    for (int k = 0; k < 16; ++k) {
      const int sc = d > 0 ? std::clamp(NearestInt(scales[k] / d), 0, 15) : 0;
      const int m = dmin > 0 ? std::clamp(NearestInt(mins[k] / dmin), 0, 15) : 0;
      b.scales[k] = static_cast<uint8_t>(sc | (m << 4));
      // Levels against the scales as stored.
      const float ds = d * sc, dm = dmin * m;
      for (int l = 0; l < 16; ++l) {
        const int level = ds == 0.0f ? 0 : std::clamp(NearestInt((x[16 * k + l] + dm) / ds), 0, 3);
        L[16 * k + l] = static_cast<uint8_t>(level);
      }
    }
    std::memset(b.qs, 0, sizeof b.qs);
    for (int e = 0; e < kQKK; ++e) {
      b.qs[32 * (e / 128) + e % 32] |= static_cast<uint8_t>(L[e] << (2 * ((e % 128) / 32)));
    }
  }
}

void QuantizeRowQ3K(const float* x, int64_t n, void* dst) {
  auto* blocks = static_cast<BlockQ3K*>(dst);
  for (int64_t i = 0; i < n / kQKK; ++i, x += kQKK) {
    BlockQ3K& b = blocks[i];
    std::memset(&b, 0, sizeof b);
    float scales[16];
    float max_scale = 0, amax_scale = 0;
    for (int k = 0; k < 16; ++k) {
      scales[k] = FitSymmetricScale(16, 4, x + 16 * k);
      if (std::fabs(scales[k]) > amax_scale) {
        amax_scale = std::fabs(scales[k]);
        max_scale = scales[k];
      }
    }
    int8_t s[16] = {};
    if (amax_scale >= 1e-30f) {
      // The largest-magnitude scale maps to -32 so the 6-bit range is used fully.
      const float iscale = -32.0f / max_scale;
      StoreHalfBits(F32ToF16(1 / iscale), b.d);
      for (int k = 0; k < 16; ++k) {
        s[k] = static_cast<int8_t>(std::clamp(NearestInt(iscale * scales[k]), -32, 31));
      }
    }
    for (int k = 0; k < 16; ++k) PutQ3KScale(k, s[k] + 32, b.scales);
    const float d = F16ToF32(LoadHalfBits(b.d));
    for (int e = 0; e < kQKK; ++e) {
      const float ds = d * s[e / 16];
      const int v = ds == 0.0f ? 0 : std::clamp(NearestInt(x[e] / ds), -4, 3);
      const int u = v + 4;  // q2 | hbit << 2
      b.qs[32 * (e / 128) + e % 32] |= static_cast<uint8_t>((u & 3) << (2 * ((e % 128) / 32)));
      b.hmask[e % 32] |= static_cast<uint8_t>((u >> 2) << (e / 32));
    }
  }
}

void QuantizeRowIQ4XS(const float* x, int64_t n, void* dst) {
  auto* blocks = static_cast<BlockIQ4XS*>(dst);
  for (int64_t i = 0; i < n / kQKK; ++i, x += kQKK) {
    BlockIQ4XS& b = blocks[i];
    std::memset(&b, 0, sizeof b);
    // Per sub-block as IQ4_NL: the largest-magnitude element maps to -127.
    float dl[8], dmax = 0, admax = 0;
    for (int ib = 0; ib < 8; ++ib) {
      float amax = 0, max = 0;
      for (int t = 0; t < 32; ++t) {
        if (std::fabs(x[32 * ib + t]) > amax) {
          amax = std::fabs(x[32 * ib + t]);
          max = x[32 * ib + t];
        }
      }
      dl[ib] = max / -127.0f;
      if (std::fabs(dl[ib]) > admax) {
        admax = std::fabs(dl[ib]);
        dmax = dl[ib];
      }
    }
    // The largest-magnitude sub-block scale maps to ls - 32 = -32.
    StoreHalfBits(F32ToF16(dmax / -32.0f), b.d);
    const float d = F16ToF32(LoadHalfBits(b.d));
    uint16_t h = 0;
    for (int ib = 0; ib < 8; ++ib) {
      const int s = d != 0.0f ? std::clamp(NearestInt(dl[ib] / d), -32, 31) : 0;
      const int ls = s + 32;
      b.scales_l[ib / 2] |= static_cast<uint8_t>((ls & 0xF) << (4 * (ib % 2)));
      h = static_cast<uint16_t>(h | ((ls >> 4) << (2 * ib)));
      const float ds = d * s;
      const float ids = ds != 0.0f ? 1.0f / ds : 0.0f;
      for (int t = 0; t < 16; ++t) {
        const int lo = NearestCodebookIndex(x[32 * ib + t] * ids);
        const int hi = NearestCodebookIndex(x[32 * ib + t + 16] * ids);
        b.qs[16 * ib + t] = static_cast<uint8_t>(lo | (hi << 4));
      }
    }
    StoreHalfBits(h, b.scales_h);
  }
}

// value = (d * sc) * q - (dmin * m).
void DequantizeRowQ2K(const void* src, int64_t n, float* y) {
  const auto* blocks = static_cast<const BlockQ2K*>(src);
  uint8_t q[kQKK];
  for (int64_t i = 0; i < n / kQKK; ++i, y += kQKK) {
    const float d = F16ToF32(LoadHalfBits(blocks[i].d));
    const float dmin = F16ToF32(LoadHalfBits(blocks[i].dmin));
    UnpackLevelsQ2K(&blocks[i], q);
    for (int k = 0; k < 16; ++k) {
      const float dl = d * static_cast<float>(blocks[i].scales[k] & 0xF);
      const float ml = dmin * static_cast<float>(blocks[i].scales[k] >> 4);
      for (int l = 0; l < 16; ++l) y[16 * k + l] = dl * static_cast<float>(q[16 * k + l]) - ml;
    }
  }
}

// value = (d * s) * v.
void DequantizeRowQ3K(const void* src, int64_t n, float* y) {
  const auto* blocks = static_cast<const BlockQ3K*>(src);
  int8_t q[kQKK], s[16];
  for (int64_t i = 0; i < n / kQKK; ++i, y += kQKK) {
    const float d = F16ToF32(LoadHalfBits(blocks[i].d));
    UnpackLevelsQ3K(&blocks[i], q);
    UnpackQ3KScales(blocks[i].scales, s);
    for (int k = 0; k < 16; ++k) {
      const float dl = d * static_cast<float>(s[k]);
      for (int l = 0; l < 16; ++l) y[16 * k + l] = dl * static_cast<float>(q[16 * k + l]);
    }
  }
}

// value = (d * (ls - 32)) * kv.
void DequantizeRowIQ4XS(const void* src, int64_t n, float* y) {
  const auto* blocks = static_cast<const BlockIQ4XS*>(src);
  int8_t q[kQKK], s[8];
  for (int64_t i = 0; i < n / kQKK; ++i, y += kQKK) {
    const float d = F16ToF32(LoadHalfBits(blocks[i].d));
    UnpackLevelsIQ4XS(&blocks[i], q);
    UnpackIQ4XSScales(&blocks[i], s);
    for (int ib = 0; ib < 8; ++ib) {
      const float dl = d * static_cast<float>(s[ib]);
      for (int t = 0; t < 32; ++t) y[32 * ib + t] = dl * static_cast<float>(q[32 * ib + t]);
    }
  }
}

}  // namespace cairn::kernels
