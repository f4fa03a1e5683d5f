#include "kernels/quant_blocks32.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "core/half.h"
#include "kernels/quant_blocks.h"

namespace cairn::kernels {
namespace {

uint32_t LoadQh(const uint8_t* p) {
  uint32_t qh;
  std::memcpy(&qh, p, sizeof qh);  // little-endian host (x86, AArch64)
  return qh;
}

// Nibble j (0..31) of a 16-byte nibble array: low nibbles are elements 0..15.
int Nibble(const uint8_t* qs, int j) { return j < kQK / 2 ? (qs[j] & 0xF) : (qs[j - kQK / 2] >> 4); }

// 5-bit level of element j: nibble | bit j of qh << 4 (0..31).
int Level5(const uint8_t* qs, uint32_t qh, int j) {
  return Nibble(qs, j) | static_cast<int>(((qh >> j) & 1) << 4);
}

// Stores 32 levels (0..15 nibbles, 0..31 with the fifth bits) into qs / qh.
void PackLevels(const int* levels, uint8_t* qs, uint8_t* qh) {
  uint32_t bits = 0;
  for (int j = 0; j < kQK / 2; ++j) {
    qs[j] = static_cast<uint8_t>((levels[j] & 0xF) | ((levels[j + kQK / 2] & 0xF) << 4));
  }
  for (int j = 0; j < kQK; ++j) bits |= static_cast<uint32_t>((levels[j] >> 4) & 1) << j;
  if (qh != nullptr) std::memcpy(qh, &bits, sizeof bits);
}

// Min/max affine quantizer (Q4_1: 15 steps, Q5_1: 31): d = (max - min) / steps,
// q = round-half-up((x - min) / d), m = min.
void QuantizeAffine(const float* xb, int steps, uint8_t* d_out, uint8_t* m_out, int* levels) {
  float lo = xb[0], hi = xb[0];
  for (int j = 1; j < kQK; ++j) {
    lo = std::min(lo, xb[j]);
    hi = std::max(hi, xb[j]);
  }
  const float d = (hi - lo) / static_cast<float>(steps);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  StoreHalfBits(F32ToF16(d), d_out);
  StoreHalfBits(F32ToF16(lo), m_out);
  for (int j = 0; j < kQK; ++j) levels[j] = std::min(steps, static_cast<int>((xb[j] - lo) * id + 0.5f));
}

}  // namespace

int Block32Bytes(DType type) {
  switch (type) {
    case DType::kQ8_0: return sizeof(BlockQ8_0);
    case DType::kQ4_0: return sizeof(BlockQ4_0);
    case DType::kQ4_1: return sizeof(BlockQ4_1);
    case DType::kQ5_0: return sizeof(BlockQ5_0);
    case DType::kQ5_1: return sizeof(BlockQ5_1);
    case DType::kIQ4_NL: return sizeof(BlockIQ4NL);
    default: CAIRN_CHECK(false && "Block32Bytes: not a 32-element block type");
  }
  return 0;
}

void UnpackLevels32(DType type, const uint8_t* block, int8_t q[32]) {
  switch (type) {
    case DType::kQ8_0:
      std::memcpy(q, reinterpret_cast<const BlockQ8_0*>(block)->qs, kQK);
      return;
    case DType::kQ4_0: {
      const auto* b = reinterpret_cast<const BlockQ4_0*>(block);
      for (int j = 0; j < kQK; ++j) q[j] = static_cast<int8_t>(Nibble(b->qs, j) - 8);
      return;
    }
    case DType::kQ4_1: {
      const auto* b = reinterpret_cast<const BlockQ4_1*>(block);
      for (int j = 0; j < kQK; ++j) q[j] = static_cast<int8_t>(Nibble(b->qs, j));
      return;
    }
    case DType::kQ5_0: {
      const auto* b = reinterpret_cast<const BlockQ5_0*>(block);
      const uint32_t qh = LoadQh(b->qh);
      for (int j = 0; j < kQK; ++j) q[j] = static_cast<int8_t>(Level5(b->qs, qh, j) - 16);
      return;
    }
    case DType::kQ5_1: {
      const auto* b = reinterpret_cast<const BlockQ5_1*>(block);
      const uint32_t qh = LoadQh(b->qh);
      for (int j = 0; j < kQK; ++j) q[j] = static_cast<int8_t>(Level5(b->qs, qh, j));
      return;
    }
    case DType::kIQ4_NL: {
      const auto* b = reinterpret_cast<const BlockIQ4NL*>(block);
      for (int j = 0; j < kQK; ++j) q[j] = kIQ4NLValues[Nibble(b->qs, j)];
      return;
    }
    default: CAIRN_CHECK(false && "UnpackLevels32: not a 32-element block type");
  }
}

void QuantizeRowQ4_1(const float* x, int64_t n, void* dst) {
  auto* blocks = static_cast<BlockQ4_1*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i) {
    int levels[kQK];
    QuantizeAffine(x + i * kQK, 15, blocks[i].d, blocks[i].m, levels);
    PackLevels(levels, blocks[i].qs, nullptr);
  }
}

void QuantizeRowQ5_1(const float* x, int64_t n, void* dst) {
  auto* blocks = static_cast<BlockQ5_1*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i) {
    int levels[kQK];
    QuantizeAffine(x + i * kQK, 31, blocks[i].d, blocks[i].m, levels);
    PackLevels(levels, blocks[i].qs, blocks[i].qh);
  }
}

// As Q4_0 with 32 levels: the element of largest magnitude maps to level 0
// (value -16 d), d = max / -16 keeps its sign; levels clamp to 31.
void QuantizeRowQ5_0(const float* x, int64_t n, void* dst) {
  auto* blocks = static_cast<BlockQ5_0*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i) {
    const float* xb = x + i * kQK;
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < kQK; ++j) {
      if (std::fabs(xb[j]) > amax) {
        amax = std::fabs(xb[j]);
        max = xb[j];
      }
    }
    const float d = max / -16.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    StoreHalfBits(F32ToF16(d), blocks[i].d);
    int levels[kQK];
    for (int j = 0; j < kQK; ++j) levels[j] = std::clamp(static_cast<int>(xb[j] * id + 16.5f), 0, 31);
    PackLevels(levels, blocks[i].qs, blocks[i].qh);
  }
}

// Largest-magnitude element maps to codebook entry 0 (-127): d = max / -127,
// then each element takes the nearest codebook value of x / fp16(d).
void QuantizeRowIQ4NL(const float* x, int64_t n, void* dst) {
  auto* blocks = static_cast<BlockIQ4NL*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i) {
    const float* xb = x + i * kQK;
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < kQK; ++j) {
      if (std::fabs(xb[j]) > amax) {
        amax = std::fabs(xb[j]);
        max = xb[j];
      }
    }
    const uint16_t dh = F32ToF16(max / -127.0f);
    StoreHalfBits(dh, blocks[i].d);
    const float d = F16ToF32(dh);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    int levels[kQK];
    for (int j = 0; j < kQK; ++j) {
      const float v = xb[j] * id;
      int best = 0;
      for (int t = 1; t < 16; ++t) {
        if (std::fabs(v - kIQ4NLValues[t]) < std::fabs(v - kIQ4NLValues[best])) best = t;
      }
      levels[j] = best;
    }
    PackLevels(levels, blocks[i].qs, nullptr);
  }
}

// y = d * level (Q5_0, IQ4_NL) or d * level + m (Q4_1, Q5_1): one F32 multiply
// (and one add), as gguf-py's dequantize computes it.
template <class Block>
void DequantizeBlocks(DType type, const void* src, int64_t n, float* y) {
  const auto* blocks = static_cast<const Block*>(src);
  for (int64_t i = 0; i < n / kQK; ++i) {
    const auto* raw = reinterpret_cast<const uint8_t*>(&blocks[i]);
    int8_t q[kQK];
    UnpackLevels32(type, raw, q);
    const float d = F16ToF32(LoadHalfBits(raw));
    float* yb = y + i * kQK;
    if (HasBlockMin(type)) {
      const float m = F16ToF32(LoadHalfBits(raw + 2));
      for (int j = 0; j < kQK; ++j) yb[j] = d * static_cast<float>(q[j]) + m;
    } else {
      for (int j = 0; j < kQK; ++j) yb[j] = d * static_cast<float>(q[j]);
    }
  }
}

void DequantizeRowQ4_1(const void* src, int64_t n, float* y) { DequantizeBlocks<BlockQ4_1>(DType::kQ4_1, src, n, y); }
void DequantizeRowQ5_0(const void* src, int64_t n, float* y) { DequantizeBlocks<BlockQ5_0>(DType::kQ5_0, src, n, y); }
void DequantizeRowQ5_1(const void* src, int64_t n, float* y) { DequantizeBlocks<BlockQ5_1>(DType::kQ5_1, src, n, y); }
void DequantizeRowIQ4NL(const void* src, int64_t n, float* y) {
  DequantizeBlocks<BlockIQ4NL>(DType::kIQ4_NL, src, n, y);
}

}  // namespace cairn::kernels
