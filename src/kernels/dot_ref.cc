#include "kernels/dot_ref.h"

#include <cmath>
#include <vector>

#include "core/error.h"
#include "core/half.h"
#include "kernels/quant.h"
#include "kernels/quant_blocks.h"
#include "kernels/quant_blocks32.h"
#include "kernels/quant_kquants.h"
#include "kernels/quant_kquants2.h"

namespace cairn::kernels {
namespace {

// Blocks of 32 with F16 scale d at byte 0 (every 32-element type), levels from
// UnpackLevels32: the exact integer dot of each block feeds lane k mod 16 with
// one FMA; types with a block min add the min lanes (dot_ref.h).
float DotBlocks32(DType type, const uint8_t* w, const ActRow& x, int64_t cols) {
  const size_t block_bytes = static_cast<size_t>(Block32Bytes(type));
  const bool has_min = HasBlockMin(type);
  float acc[16] = {}, accm[8] = {};
  int8_t q[kQK];
  for (int64_t k = 0; k < cols / kQK; ++k) {
    const uint8_t* block = w + k * block_bytes;
    UnpackLevels32(type, block, q);
    const float scale = F16ToF32(LoadHalfBits(block)) * x.d[k];
    const int8_t* xq = x.qs + k * kQK;
    int isum = 0;  // |isum| <= 32 * 128 * 127: exact in int32 and in F32
    for (int j = 0; j < kQK; ++j) isum += q[j] * xq[j];
    acc[k % 16] = std::fma(static_cast<float>(isum), scale, acc[k % 16]);
    if (has_min) accm[k % 8] = std::fma(F16ToF32(LoadHalfBits(block + 2)), x.s[k], accm[k % 8]);
  }
  return has_min ? ReduceLanes16(acc) + ReduceLanes8(accm) : ReduceLanes16(acc);
}

template <class Block>
float DotScaleMinK(const void* wrow, const ActRow& x, int64_t cols, void (*unpack)(const void*, uint8_t*)) {
  const auto* blocks = static_cast<const Block*>(wrow);
  float acc[8] = {};
  uint8_t q[kQKK];
  for (int64_t i = 0; i < cols / kQKK; ++i) {
    float* lanes = acc + 2 * (i % 4);
    unpack(&blocks[i], q);
    const int8_t* xq = x.qs + i * kQKK;
    const int16_t* bs = x.bsums + i * 16;
    int sumi = 0, summ = 0;
    for (int j = 0; j < 8; ++j) {
      int sc, m;
      UnpackKScaleMin(blocks[i].scales, j, &sc, &m);
      int dot = 0;
      for (int l = 32 * j; l < 32 * j + 32; ++l) dot += q[l] * xq[l];
      sumi += sc * dot;
      summ += m * (bs[2 * j] + bs[2 * j + 1]);
    }
    const float d = x.d[i] * F16ToF32(LoadHalfBits(blocks[i].d));
    const float dmin = x.d[i] * F16ToF32(LoadHalfBits(blocks[i].dmin));
    lanes[0] = std::fma(d, static_cast<float>(sumi), lanes[0]);
    lanes[1] = std::fma(-dmin, static_cast<float>(summ), lanes[1]);
  }
  return ReduceLanes8(acc);
}

float DotQ6K(const void* wrow, const ActRow& x, int64_t cols) {
  const auto* blocks = static_cast<const BlockQ6K*>(wrow);
  float acc[8] = {};
  uint8_t q[kQKK];
  for (int64_t i = 0; i < cols / kQKK; ++i) {
    float& lane = acc[2 * (i % 4)];
    UnpackLevelsQ6K(&blocks[i], q);
    const int8_t* xq = x.qs + i * kQKK;
    const int16_t* bs = x.bsums + i * 16;
    int sumi = 0;
    for (int k = 0; k < 16; ++k) {
      int dot = 0;
      for (int l = 16 * k; l < 16 * k + 16; ++l) dot += q[l] * xq[l];
      sumi += blocks[i].scales[k] * (dot - 32 * bs[k]);
    }
    const float d = x.d[i] * F16ToF32(LoadHalfBits(blocks[i].d));
    lane = std::fma(d, static_cast<float>(sumi), lane);
  }
  return ReduceLanes8(acc);
}

// Q2_K: as Q4_K with 16 sub-blocks of 16 (4-bit scale and min per byte).
float DotQ2K(const void* wrow, const ActRow& x, int64_t cols) {
  const auto* blocks = static_cast<const BlockQ2K*>(wrow);
  float acc[8] = {};
  uint8_t q[kQKK];
  for (int64_t i = 0; i < cols / kQKK; ++i) {
    float* lanes = acc + 2 * (i % 4);
    UnpackLevelsQ2K(&blocks[i], q);
    const int8_t* xq = x.qs + i * kQKK;
    const int16_t* bs = x.bsums + i * 16;
    int sumi = 0, summ = 0;
    for (int k = 0; k < 16; ++k) {
      int dot = 0;
      for (int l = 16 * k; l < 16 * k + 16; ++l) dot += q[l] * xq[l];
      sumi += (blocks[i].scales[k] & 0xF) * dot;
      summ += (blocks[i].scales[k] >> 4) * bs[k];
    }
    const float d = x.d[i] * F16ToF32(LoadHalfBits(blocks[i].d));
    const float dmin = x.d[i] * F16ToF32(LoadHalfBits(blocks[i].dmin));
    lanes[0] = std::fma(d, static_cast<float>(sumi), lanes[0]);
    lanes[1] = std::fma(-dmin, static_cast<float>(summ), lanes[1]);
  }
  return ReduceLanes8(acc);
}

// Q3_K (16 sub-blocks of 16) and IQ4_XS (8 of 32): signed levels and signed
// sub-block scales, one FMA per super-block in lane 2 (i mod 4), as Q6_K.
// unpack(block, levels, scales) gives the levels and the kSub scales.
template <class Block, int kSub>
float DotSymmetricK(const void* wrow, const ActRow& x, int64_t cols,
                    void (*unpack)(const Block&, int8_t*, int8_t*)) {
  constexpr int kLen = kQKK / kSub;
  const auto* blocks = static_cast<const Block*>(wrow);
  float acc[8] = {};
  int8_t q[kQKK], s[kSub];
  for (int64_t i = 0; i < cols / kQKK; ++i) {
    float& lane = acc[2 * (i % 4)];
    unpack(blocks[i], q, s);
    const int8_t* xq = x.qs + i * kQKK;
    int sumi = 0;
    for (int k = 0; k < kSub; ++k) {
      int dot = 0;
      for (int l = kLen * k; l < kLen * k + kLen; ++l) dot += q[l] * xq[l];
      sumi += s[k] * dot;
    }
    const float d = x.d[i] * F16ToF32(LoadHalfBits(blocks[i].d));
    lane = std::fma(d, static_cast<float>(sumi), lane);
  }
  return ReduceLanes8(acc);
}

void UnpackQ3K(const BlockQ3K& b, int8_t* q, int8_t* s) {
  UnpackLevelsQ3K(&b, q);
  UnpackQ3KScales(b.scales, s);
}

void UnpackIQ4XS(const BlockIQ4XS& b, int8_t* q, int8_t* s) {
  UnpackLevelsIQ4XS(&b, q);
  UnpackIQ4XSScales(&b, s);
}

bool IsFloatType(DType type) { return type == DType::kF32 || type == DType::kF16 || type == DType::kBF16; }

}  // namespace

float DotQuantizedRef(DType type, const void* wrow, const ActRow& x, int64_t cols) {
  const auto* w = static_cast<const uint8_t*>(wrow);
  switch (type) {
    case DType::kQ8_0:
    case DType::kQ4_0:
    case DType::kQ4_1:
    case DType::kQ5_0:
    case DType::kQ5_1:
    case DType::kIQ4_NL:
      return DotBlocks32(type, w, x, cols);
    case DType::kQ4_K: return DotScaleMinK<BlockQ4K>(wrow, x, cols, UnpackLevelsQ4K);
    case DType::kQ5_K: return DotScaleMinK<BlockQ5K>(wrow, x, cols, UnpackLevelsQ5K);
    case DType::kQ6_K: return DotQ6K(wrow, x, cols);
    case DType::kQ2_K: return DotQ2K(wrow, x, cols);
    case DType::kQ3_K: return DotSymmetricK<BlockQ3K, 16>(wrow, x, cols, UnpackQ3K);
    case DType::kIQ4_XS: return DotSymmetricK<BlockIQ4XS, 8>(wrow, x, cols, UnpackIQ4XS);
    default: CAIRN_CHECK(false && "DotQuantizedRef: not a quantized type");
  }
  return 0.0f;
}

void MatMulReference(const MatrixView& w, const float* x, int64_t ldx, int64_t batch, float* y,
                     int64_t ldy) {
  if (IsFloatType(w.type)) return MatMulDequantReference(w, x, ldx, batch, y, ldy);
  const ActFormat format = ActFormatFor(w.type);
  std::vector<uint8_t> storage(ActRowBytes(format, w.cols) + 64);
  uint8_t* row = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(storage.data()) + 63) / 64 * 64);
  for (int64_t b = 0; b < batch; ++b) {
    QuantizeActivationRow(format, x + b * ldx, w.cols, row);
    const ActRow act = ActRowAt(format, row, w.cols);
    for (int64_t r = 0; r < w.rows; ++r) y[b * ldy + r] = DotQuantizedRef(w.type, w.Row(r), act, w.cols);
  }
}

void MatMulDequantReference(const MatrixView& w, const float* x, int64_t ldx, int64_t batch,
                            float* y, int64_t ldy) {
  std::vector<float> wr(static_cast<size_t>(w.cols));
  for (int64_t r = 0; r < w.rows; ++r) {
    DequantizeRow(w.type, w.Row(r), w.cols, wr.data());
    for (int64_t b = 0; b < batch; ++b) {
      double sum = 0;
      for (int64_t c = 0; c < w.cols; ++c) sum += static_cast<double>(wr[c]) * x[b * ldx + c];
      y[b * ldy + r] = static_cast<float>(sum);
    }
  }
}

}  // namespace cairn::kernels
