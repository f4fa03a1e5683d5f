// QuantizeRow / DequantizeRow: type dispatch plus the plain and 32-element
// block formats (F32, F16, BF16, Q8_0, Q4_0). K-quants live in quant_kquants.cc
// (Q4_K, Q5_K, Q6_K) and quant_kquants2.cc (Q2_K, Q3_K, IQ4_XS),
// Q4_1 / Q5_0 / Q5_1 / IQ4_NL in quant_blocks32.cc.
#include "kernels/quant.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "core/half.h"
#include "kernels/quant_blocks.h"
#include "kernels/quant_blocks32.h"
#include "kernels/quant_kquants.h"
#include "kernels/quant_kquants2.h"

namespace cairn::kernels {

bool IsSupportedWeightType(DType type) {
  switch (type) {
    case DType::kF32:
    case DType::kF16:
    case DType::kBF16:
    case DType::kQ8_0:
    case DType::kQ4_0:
    case DType::kQ4_1:
    case DType::kQ5_0:
    case DType::kQ5_1:
    case DType::kIQ4_NL:
    case DType::kQ4_K:
    case DType::kQ5_K:
    case DType::kQ6_K:
    case DType::kQ2_K:
    case DType::kQ3_K:
    case DType::kIQ4_XS:
      return true;
    default:
      return false;
  }
}

// ggml's reference Q8_0: d = amax / 127, q = round-half-away(x / d).
void QuantizeRowQ8_0(const float* x, int64_t n, void* dst) {
  auto* blocks = static_cast<BlockQ8_0*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i) {
    const float* xb = x + i * kQK;
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(xb[j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    StoreHalfBits(F32ToF16(d), blocks[i].d);
    for (int j = 0; j < kQK; ++j) blocks[i].qs[j] = static_cast<int8_t>(std::roundf(xb[j] * id));
  }
}

void DequantizeRowQ8_0(const void* src, int64_t n, float* y) {
  const auto* blocks = static_cast<const BlockQ8_0*>(src);
  for (int64_t i = 0; i < n / kQK; ++i) {
    const float d = F16ToF32(LoadHalfBits(blocks[i].d));
    for (int j = 0; j < kQK; ++j) y[i * kQK + j] = static_cast<float>(blocks[i].qs[j]) * d;
  }
}

// ggml's reference Q4_0: the element of largest magnitude maps to level 0
// (value -8 d), so d = max / -8 keeps its sign; levels clamp to 15.
void QuantizeRowQ4_0(const float* x, int64_t n, void* dst) {
  auto* blocks = static_cast<BlockQ4_0*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i) {
    const float* xb = x + i * kQK;
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < kQK; ++j) {
      if (std::fabs(xb[j]) > amax) {
        amax = std::fabs(xb[j]);
        max = xb[j];
      }
    }
    const float d = max / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    StoreHalfBits(F32ToF16(d), blocks[i].d);
    for (int j = 0; j < kQK / 2; ++j) {
      const int lo = std::min(15, static_cast<int>(xb[j] * id + 8.5f));
      const int hi = std::min(15, static_cast<int>(xb[j + kQK / 2] * id + 8.5f));
      blocks[i].qs[j] = static_cast<uint8_t>(lo | (hi << 4));
    }
  }
}

void DequantizeRowQ4_0(const void* src, int64_t n, float* y) {
  const auto* blocks = static_cast<const BlockQ4_0*>(src);
  for (int64_t i = 0; i < n / kQK; ++i) {
    const float d = F16ToF32(LoadHalfBits(blocks[i].d));
    for (int j = 0; j < kQK / 2; ++j) {
      y[i * kQK + j] = static_cast<float>((blocks[i].qs[j] & 0xF) - 8) * d;
      y[i * kQK + j + kQK / 2] = static_cast<float>((blocks[i].qs[j] >> 4) - 8) * d;
    }
  }
}

void QuantizeRow(DType type, const float* src, int64_t n, void* dst) {
  const int block = GetDTypeInfo(type).block_elems;
  CAIRN_CHECK(IsSupportedWeightType(type) && n % block == 0);
  switch (type) {
    case DType::kF32:
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
      return;
    // Rows of 16-bit types may start at odd addresses (any row stride): memcpy.
    case DType::kF16: {
      auto* h = static_cast<uint8_t*>(dst);
      for (int64_t i = 0; i < n; ++i) StoreHalfBits(F32ToF16(src[i]), h + 2 * i);
      return;
    }
    case DType::kBF16: {
      auto* h = static_cast<uint8_t*>(dst);
      for (int64_t i = 0; i < n; ++i) StoreHalfBits(F32ToBf16(src[i]), h + 2 * i);
      return;
    }
    case DType::kQ8_0: return QuantizeRowQ8_0(src, n, dst);
    case DType::kQ4_0: return QuantizeRowQ4_0(src, n, dst);
    case DType::kQ4_1: return QuantizeRowQ4_1(src, n, dst);
    case DType::kQ5_0: return QuantizeRowQ5_0(src, n, dst);
    case DType::kQ5_1: return QuantizeRowQ5_1(src, n, dst);
    case DType::kIQ4_NL: return QuantizeRowIQ4NL(src, n, dst);
    case DType::kQ4_K: return QuantizeRowQ4K(src, n, dst);
    case DType::kQ5_K: return QuantizeRowQ5K(src, n, dst);
    case DType::kQ6_K: return QuantizeRowQ6K(src, n, dst);
    case DType::kQ2_K: return QuantizeRowQ2K(src, n, dst);
    case DType::kQ3_K: return QuantizeRowQ3K(src, n, dst);
    case DType::kIQ4_XS: return QuantizeRowIQ4XS(src, n, dst);
    default: break;
  }
}

void DequantizeRow(DType type, const void* src, int64_t n, float* dst) {
  const int block = GetDTypeInfo(type).block_elems;
  CAIRN_CHECK(IsSupportedWeightType(type) && n % block == 0);
  switch (type) {
    case DType::kF32:
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
      return;
    case DType::kF16: {
      const auto* h = static_cast<const uint8_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = F16ToF32(LoadHalfBits(h + 2 * i));
      return;
    }
    case DType::kBF16: {
      const auto* h = static_cast<const uint8_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = Bf16ToF32(LoadHalfBits(h + 2 * i));
      return;
    }
    case DType::kQ8_0: return DequantizeRowQ8_0(src, n, dst);
    case DType::kQ4_0: return DequantizeRowQ4_0(src, n, dst);
    case DType::kQ4_1: return DequantizeRowQ4_1(src, n, dst);
    case DType::kQ5_0: return DequantizeRowQ5_0(src, n, dst);
    case DType::kQ5_1: return DequantizeRowQ5_1(src, n, dst);
    case DType::kIQ4_NL: return DequantizeRowIQ4NL(src, n, dst);
    case DType::kQ4_K: return DequantizeRowQ4K(src, n, dst);
    case DType::kQ5_K: return DequantizeRowQ5K(src, n, dst);
    case DType::kQ6_K: return DequantizeRowQ6K(src, n, dst);
    case DType::kQ2_K: return DequantizeRowQ2K(src, n, dst);
    case DType::kQ3_K: return DequantizeRowQ3K(src, n, dst);
    case DType::kIQ4_XS: return DequantizeRowIQ4XS(src, n, dst);
    default: break;
  }
}

}  // namespace cairn::kernels
