// K-quant super-block codecs (Q4_K, Q5_K, Q6_K), scalar reference.
//
// Quantization follows the structure of ggml's reference quantizer: per
// sub-block, a weighted least-squares fit of (scale, min) over a sweep of
// candidate inverse scales (FitScaleMin, like make_qkx2_quants) or of a
// symmetric scale (FitSymmetricScale, like make_qx_quants); then the sub-block
// scales are themselves quantized to 6 (Q4_K/Q5_K) or 8 (Q6_K) bits against an
// F16 super-block scale, and the levels are recomputed with the scales that
// will actually be stored. Dequantization is bit-exact with ggml's formulas
// (same operations, same order, no contraction).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/half.h"
#include "kernels/quant_blocks.h"
#include "kernels/quant_kquants.h"

namespace cairn::kernels {
namespace {

int NearestInt(float v) { return static_cast<int>(std::lrintf(v)); }

}  // namespace

// Fits x[i] ~= scale * L[i] - min_out with L in [0, nmax], min_out >= 0,
// minimising sum w[i] * err^2 over inverse scales (nmax + rmin + rdelta * k) /
// (max - min), k = 0..nstep. Returns scale; writes the levels to L.
float FitScaleMin(int n, int nmax, const float* x, const float* w, uint8_t* L, float* min_out,
                  float rmin, float rdelta, int nstep) {
  float min = x[0], max = x[0];
  float sum_w = w[0], sum_x = w[0] * x[0];
  for (int i = 1; i < n; ++i) {
    min = std::min(min, x[i]);
    max = std::max(max, x[i]);
    sum_w += w[i];
    sum_x += w[i] * x[i];
  }
  if (min > 0) min = 0;
  if (max == min) {
    std::fill(L, L + n, 0);
    *min_out = -min;
    return 0.0f;
  }
  auto levels = [&](float iscale, float mn, uint8_t* out) {
    for (int i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(std::clamp(NearestInt(iscale * (x[i] - mn)), 0, nmax));
  };
  auto error = [&](const uint8_t* lv, float scale, float mn) {
    float err = 0;
    for (int i = 0; i < n; ++i) {
      const float diff = scale * lv[i] + mn - x[i];
      err += w[i] * diff * diff;
    }
    return err;
  };
  float iscale = nmax / (max - min);
  float scale = 1 / iscale;
  levels(iscale, min, L);
  float best = error(L, scale, min);
  uint8_t aux[32];
  for (int k = 0; k <= nstep; ++k) {
    iscale = (rmin + rdelta * k + nmax) / (max - min);
    levels(iscale, min, aux);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      sum_l += w[i] * aux[i];
      sum_l2 += w[i] * aux[i] * aux[i];
      sum_xl += w[i] * aux[i] * x[i];
    }
    const float det = sum_w * sum_l2 - sum_l * sum_l;
    if (det <= 0) continue;
    float this_scale = (sum_w * sum_xl - sum_x * sum_l) / det;
    float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / det;
    if (this_min > 0) {
      this_min = 0;
      this_scale = sum_xl / sum_l2;
    }
    const float err = error(aux, this_scale, this_min);
    if (err < best) {
      std::copy(aux, aux + n, L);
      best = err;
      scale = this_scale;
      min = this_min;
    }
  }
  *min_out = -min;
  return scale;
}

// Fits x[i] ~= scale * l[i] with l in [-nmax, nmax - 1] (weights x^2), sweeping
// inverse scales -(nmax + 0.1 k) / max, k = -9..9, where max is the element of
// largest magnitude. Returns the (signed) scale.
float FitSymmetricScale(int n, int nmax, const float* x) {
  float max = 0, amax = 0;
  for (int i = 0; i < n; ++i) {
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      max = x[i];
    }
  }
  if (amax < 1e-30f) return 0.0f;
  auto fit = [&](float iscale, float* sumlx, float* suml2) {
    *sumlx = 0;
    *suml2 = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::clamp(NearestInt(iscale * x[i]), -nmax, nmax - 1);
      const float w = x[i] * x[i];
      *sumlx += w * x[i] * l;
      *suml2 += w * l * l;
    }
  };
  float sumlx, suml2;
  fit(-nmax / max, &sumlx, &suml2);
  float scale = suml2 > 0 ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int k = -9; k <= 9; ++k) {
    fit(-(nmax + 0.1f * k) / max, &sumlx, &suml2);
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

namespace {

// Shared Q4_K / Q5_K quantizer: 8 sub-blocks of 32 with 6-bit scales and mins.
// Writes d, dmin, the packed scales and the levels L[256] (0..nmax).
void QuantizeScaleMinSuperBlock(const float* x, int nmax, float rmin, int nstep, uint8_t d_out[2],
                                uint8_t dmin_out[2], uint8_t scales_out[kKScaleBytes], uint8_t L[kQKK]) {
  float scales[8], mins[8], w[32];
  float max_scale = 0, max_min = 0;
  for (int j = 0; j < 8; ++j) {
    const float* xs = x + 32 * j;
    float sum_x2 = 0;
    for (int l = 0; l < 32; ++l) sum_x2 += xs[l] * xs[l];
    const float av_x = std::sqrt(sum_x2 / 32);
    for (int l = 0; l < 32; ++l) w[l] = av_x + std::fabs(xs[l]);
    scales[j] = FitScaleMin(32, nmax, xs, w, L + 32 * j, &mins[j], rmin, 0.1f, nstep);
    max_scale = std::max(max_scale, scales[j]);
    max_min = std::max(max_min, mins[j]);
  }
  const float inv_scale = max_scale > 0 ? 63.0f / max_scale : 0.0f;
  const float inv_min = max_min > 0 ? 63.0f / max_min : 0.0f;
  uint8_t ls[8], lm[8];
  for (int j = 0; j < 8; ++j) {
    ls[j] = static_cast<uint8_t>(std::min(63, NearestInt(inv_scale * scales[j])));
    lm[j] = static_cast<uint8_t>(std::min(63, NearestInt(inv_min * mins[j])));
  }
  PackKScaleMin(ls, lm, scales_out);
  StoreHalfBits(F32ToF16(max_scale / 63.0f), d_out);
  StoreHalfBits(F32ToF16(max_min / 63.0f), dmin_out);
  // Recompute the levels against the scales as stored.
  const float d = F16ToF32(LoadHalfBits(d_out));
  const float dmin = F16ToF32(LoadHalfBits(dmin_out));
  for (int j = 0; j < 8; ++j) {
    int sc, m;
    UnpackKScaleMin(scales_out, j, &sc, &m);
    const float ds = d * sc;
    if (ds == 0.0f) continue;
    const float dm = dmin * m;
    for (int l = 0; l < 32; ++l) {
      L[32 * j + l] = static_cast<uint8_t>(std::clamp(NearestInt((x[32 * j + l] + dm) / ds), 0, nmax));
    }
  }
}

}  // namespace

void QuantizeRowQ4K(const float* x, int64_t n, void* dst) {
  auto* blocks = static_cast<BlockQ4K*>(dst);
  uint8_t L[kQKK];
  for (int64_t i = 0; i < n / kQKK; ++i, x += kQKK) {
    BlockQ4K& b = blocks[i];
    QuantizeScaleMinSuperBlock(x, 15, -1.0f, 20, b.d, b.dmin, b.scales, L);
    for (int g = 0; g < 4; ++g) {
      for (int l = 0; l < 32; ++l) b.qs[32 * g + l] = static_cast<uint8_t>(L[64 * g + l] | (L[64 * g + 32 + l] << 4));
    }
  }
}

void QuantizeRowQ5K(const float* x, int64_t n, void* dst) {
  auto* blocks = static_cast<BlockQ5K*>(dst);
  uint8_t L[kQKK];
  for (int64_t i = 0; i < n / kQKK; ++i, x += kQKK) {
    BlockQ5K& b = blocks[i];
    QuantizeScaleMinSuperBlock(x, 31, -0.5f, 15, b.d, b.dmin, b.scales, L);
    std::memset(b.qh, 0, sizeof b.qh);
    for (int g = 0; g < 4; ++g) {
      for (int l = 0; l < 32; ++l) {
        const int lo = L[64 * g + l], hi = L[64 * g + 32 + l];
        b.qs[32 * g + l] = static_cast<uint8_t>((lo & 0xF) | ((hi & 0xF) << 4));
        b.qh[l] |= static_cast<uint8_t>(((lo >> 4) << (2 * g)) | ((hi >> 4) << (2 * g + 1)));
      }
    }
  }
}

void QuantizeRowQ6K(const float* x, int64_t n, void* dst) {
  auto* blocks = static_cast<BlockQ6K*>(dst);
  for (int64_t i = 0; i < n / kQKK; ++i, x += kQKK) {
    BlockQ6K& b = blocks[i];
    float scales[16];
    float max_scale = 0, amax_scale = 0;
    for (int k = 0; k < 16; ++k) {
      scales[k] = FitSymmetricScale(16, 32, x + 16 * k);
      if (std::fabs(scales[k]) > amax_scale) {
        amax_scale = std::fabs(scales[k]);
        max_scale = scales[k];
      }
    }
    uint8_t L[kQKK] = {};
    if (amax_scale < 1e-30f) {
      std::memset(&b, 0, sizeof b);
      std::fill(L, L + kQKK, 32);
    } else {
      // The largest-magnitude scale maps to -128 so the 8-bit range is used fully.
      const float iscale = -128.0f / max_scale;
      StoreHalfBits(F32ToF16(1 / iscale), b.d);
      for (int k = 0; k < 16; ++k) b.scales[k] = static_cast<int8_t>(std::min(127, NearestInt(iscale * scales[k])));
      const float d = F16ToF32(LoadHalfBits(b.d));
      for (int k = 0; k < 16; ++k) {
        const float ds = d * b.scales[k];
        for (int l = 0; l < 16; ++l) {
          L[16 * k + l] = ds == 0.0f ? 32 : static_cast<uint8_t>(std::clamp(NearestInt(x[16 * k + l] / ds), -32, 31) + 32);
        }
      }
    }
    for (int h = 0; h < 2; ++h) {
      uint8_t* ql = b.ql + 64 * h;
      uint8_t* qh = b.qh + 32 * h;
      const uint8_t* Lh = L + 128 * h;
      for (int l = 0; l < 32; ++l) {
        ql[l] = static_cast<uint8_t>((Lh[l] & 0xF) | ((Lh[l + 64] & 0xF) << 4));
        ql[l + 32] = static_cast<uint8_t>((Lh[l + 32] & 0xF) | ((Lh[l + 96] & 0xF) << 4));
        qh[l] = static_cast<uint8_t>((Lh[l] >> 4) | ((Lh[l + 32] >> 4) << 2) | ((Lh[l + 64] >> 4) << 4) |
                                     ((Lh[l + 96] >> 4) << 6));
      }
    }
  }
}

void UnpackLevelsQ4K(const void* block, uint8_t q[256]) {
  const auto& b = *static_cast<const BlockQ4K*>(block);
  for (int g = 0; g < 4; ++g) {
    for (int l = 0; l < 32; ++l) {
      q[64 * g + l] = b.qs[32 * g + l] & 0xF;
      q[64 * g + 32 + l] = b.qs[32 * g + l] >> 4;
    }
  }
}

void UnpackLevelsQ5K(const void* block, uint8_t q[256]) {
  const auto& b = *static_cast<const BlockQ5K*>(block);
  for (int g = 0; g < 4; ++g) {
    for (int l = 0; l < 32; ++l) {
      q[64 * g + l] = static_cast<uint8_t>((b.qs[32 * g + l] & 0xF) | (((b.qh[l] >> (2 * g)) & 1) << 4));
      q[64 * g + 32 + l] = static_cast<uint8_t>((b.qs[32 * g + l] >> 4) | (((b.qh[l] >> (2 * g + 1)) & 1) << 4));
    }
  }
}

void UnpackLevelsQ6K(const void* block, uint8_t q[256]) {
  const auto& b = *static_cast<const BlockQ6K*>(block);
  for (int h = 0; h < 2; ++h) {
    const uint8_t* ql = b.ql + 64 * h;
    const uint8_t* qh = b.qh + 32 * h;
    uint8_t* qo = q + 128 * h;
    for (int l = 0; l < 32; ++l) {
      qo[l] = static_cast<uint8_t>((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4));
      qo[l + 32] = static_cast<uint8_t>((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4));
      qo[l + 64] = static_cast<uint8_t>((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4));
      qo[l + 96] = static_cast<uint8_t>((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4));
    }
  }
}

// value = (d * sc) * q - (dmin * m), evaluated exactly in this order as ggml does.
void DequantizeRowQ4K(const void* src, int64_t n, float* y) {
  const auto* blocks = static_cast<const BlockQ4K*>(src);
  uint8_t q[kQKK];
  for (int64_t i = 0; i < n / kQKK; ++i, y += kQKK) {
    const float d = F16ToF32(LoadHalfBits(blocks[i].d));
    const float dmin = F16ToF32(LoadHalfBits(blocks[i].dmin));
    UnpackLevelsQ4K(&blocks[i], q);
    for (int j = 0; j < 8; ++j) {
      int sc, m;
      UnpackKScaleMin(blocks[i].scales, j, &sc, &m);
      const float d1 = d * sc, m1 = dmin * m;
      for (int l = 0; l < 32; ++l) y[32 * j + l] = d1 * q[32 * j + l] - m1;
    }
  }
}

void DequantizeRowQ5K(const void* src, int64_t n, float* y) {
  const auto* blocks = static_cast<const BlockQ5K*>(src);
  uint8_t q[kQKK];
  for (int64_t i = 0; i < n / kQKK; ++i, y += kQKK) {
    const float d = F16ToF32(LoadHalfBits(blocks[i].d));
    const float dmin = F16ToF32(LoadHalfBits(blocks[i].dmin));
    UnpackLevelsQ5K(&blocks[i], q);
    for (int j = 0; j < 8; ++j) {
      int sc, m;
      UnpackKScaleMin(blocks[i].scales, j, &sc, &m);
      const float d1 = d * sc, m1 = dmin * m;
      for (int l = 0; l < 32; ++l) y[32 * j + l] = d1 * q[32 * j + l] - m1;
    }
  }
}

// value = (d * scale) * (q - 32).
void DequantizeRowQ6K(const void* src, int64_t n, float* y) {
  const auto* blocks = static_cast<const BlockQ6K*>(src);
  uint8_t q[kQKK];
  for (int64_t i = 0; i < n / kQKK; ++i, y += kQKK) {
    const float d = F16ToF32(LoadHalfBits(blocks[i].d));
    UnpackLevelsQ6K(&blocks[i], q);
    for (int k = 0; k < 16; ++k) {
      const float ds = d * blocks[i].scales[k];
      for (int l = 0; l < 16; ++l) y[16 * k + l] = ds * static_cast<float>(q[16 * k + l] - 32);
    }
  }
}

}  // namespace cairn::kernels
