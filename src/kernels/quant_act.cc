#include "kernels/quant_act.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/aligned_buffer.h"
#include "kernels/quant_blocks.h"

namespace cairn::kernels {
namespace {

size_t RoundUp64(size_t n) { return (n + 63) / 64 * 64; }

// The natural (kQ8_1) layout of a row, in a per-thread buffer: Q8X is written
// there first, then interleaved.
uint8_t* NaturalScratch(size_t bytes) {
  thread_local AlignedBuffer<uint8_t> scratch;
  if (scratch.size() < bytes) scratch.Resize(bytes);
  return scratch.data();
}

// Q8KX keeps Q8K's layout except for the order of qs.
ActFormat LayoutOf(ActFormat format) { return format == ActFormat::kQ8KX ? ActFormat::kQ8K : format; }

}  // namespace

int ActBlockElems(ActFormat format) {
  return format == ActFormat::kQ8K || format == ActFormat::kQ8KX ? kQKK : kQK;
}

ActFormat ActFormatFor(DType type) {
  switch (type) {
    case DType::kQ8_0:
    case DType::kQ4_0:
    case DType::kQ5_0:
    case DType::kIQ4_NL:
      return ActFormat::kQ8;
    case DType::kQ4_1:
    case DType::kQ5_1:
      return ActFormat::kQ8_1;
    default:
      return ActFormat::kQ8K;
  }
}

size_t ActRowBytes(ActFormat format, int64_t cols) {
  format = LayoutOf(format);
  const size_t n = static_cast<size_t>(cols);
  if (format == ActFormat::kQ8X) {
    const size_t blocks = static_cast<size_t>(Q8XPaddedBlocks(cols));
    return blocks * kQK + 3 * RoundUp64(blocks * sizeof(float));  // qs, d, s, offset_sums
  }
  size_t bytes = RoundUp64(n) + RoundUp64(n / ActBlockElems(format) * sizeof(float));
  if (format == ActFormat::kQ8K) bytes += RoundUp64(n / 16 * sizeof(int16_t));
  if (format == ActFormat::kQ8_1) bytes += RoundUp64(n / kQK * sizeof(float));
  return bytes;
}

ActRow ActRowAt(ActFormat format, const uint8_t* row, int64_t cols) {
  format = LayoutOf(format);
  const size_t n = static_cast<size_t>(cols);
  if (format == ActFormat::kQ8X) {
    const size_t blocks = static_cast<size_t>(Q8XPaddedBlocks(cols));
    const size_t d_offset = blocks * kQK, array = RoundUp64(blocks * sizeof(float));
    return ActRow{reinterpret_cast<const int8_t*>(row), reinterpret_cast<const float*>(row + d_offset), nullptr,
                  reinterpret_cast<const float*>(row + d_offset + array),
                  reinterpret_cast<const int32_t*>(row + d_offset + 2 * array)};
  }
  const size_t d_offset = RoundUp64(n);
  // bsums (Q8K) or s (Q8_1) follow d.
  const size_t sums_offset = d_offset + RoundUp64(n / ActBlockElems(format) * sizeof(float));
  return ActRow{reinterpret_cast<const int8_t*>(row), reinterpret_cast<const float*>(row + d_offset),
                format == ActFormat::kQ8K ? reinterpret_cast<const int16_t*>(row + sums_offset) : nullptr,
                format == ActFormat::kQ8_1 ? reinterpret_cast<const float*>(row + sums_offset) : nullptr};
}

uint8_t* Q8XNaturalScratch(int64_t cols) { return NaturalScratch(ActRowBytes(ActFormat::kQ8_1, cols)); }

void InterleaveQ8X(const uint8_t* natural, int64_t cols, uint8_t* dst) {
  const ActRow from = ActRowAt(ActFormat::kQ8_1, natural, cols);
  const ActRow to = ActRowAt(ActFormat::kQ8X, dst, cols);
  auto* qs = const_cast<int8_t*>(to.qs);
  auto* d = const_cast<float*>(to.d);
  auto* s = const_cast<float*>(to.s);
  auto* offsets = const_cast<int32_t*>(to.offset_sums);
  const int64_t blocks = cols / kQK, padded = Q8XPaddedBlocks(cols);
  for (int64_t k = 0; k < padded; ++k) {
    const bool real = k < blocks;
    int8_t* group = qs + (k / kQ8XGroup) * kQ8XGroup * kQK;
    int sum = 0;
    for (int t = 0; t < 8; ++t) {
      for (int e = 0; e < 4; ++e) {
        const int8_t v = real ? from.qs[k * kQK + 4 * t + e] : 0;
        group[4 * kQ8XGroup * t + 4 * (k % kQ8XGroup) + e] = v;
        sum += v;
      }
    }
    d[k] = real ? from.d[k] : 0.0f;
    s[k] = real ? from.s[k] : 0.0f;
    offsets[k] = -128 * sum;
  }
}

void ReorderQ8KX(uint8_t* row, int64_t cols) {
  auto* qs = reinterpret_cast<int8_t*>(row);
  int8_t natural[kQKK];
  for (int64_t i = 0; i < cols / kQKK; ++i) {
    int8_t* block = qs + i * kQKK;
    std::memcpy(natural, block, kQKK);
    for (int u = 0; u < 4; ++u) {
      for (int j = 0; j < 8; ++j) std::memcpy(block + 64 * u + 8 * j, natural + 32 * j + 8 * u, 8);
    }
  }
}

void QuantizeActivationRow(ActFormat format, const float* x, int64_t cols, uint8_t* dst) {
  if (format == ActFormat::kQ8KX) {
    QuantizeActivationRow(ActFormat::kQ8K, x, cols, dst);
    return ReorderQ8KX(dst, cols);
  }
  if (format == ActFormat::kQ8X) {
    uint8_t* natural = Q8XNaturalScratch(cols);
    QuantizeActivationRow(ActFormat::kQ8_1, x, cols, natural);
    return InterleaveQ8X(natural, cols, dst);
  }
  const ActRow view = ActRowAt(format, dst, cols);
  auto* qs = const_cast<int8_t*>(view.qs);
  auto* d = const_cast<float*>(view.d);
  const int block = ActBlockElems(format);
  for (int64_t i = 0; i < cols / block; ++i) {
    const float* xb = x + i * block;
    int8_t* qb = qs + i * block;
    float amax = 0.0f;
    for (int j = 0; j < block; ++j) amax = std::max(amax, std::fabs(xb[j]));
    const float id = amax > 0.0f ? 127.0f / amax : 0.0f;
    d[i] = amax / 127.0f;
    for (int j = 0; j < block; ++j) {
      // |x * id| <= 127 up to one rounding, so the clamp only guards that ulp.
      qb[j] = static_cast<int8_t>(std::clamp(std::nearbyint(xb[j] * id), -127.0f, 127.0f));
    }
  }
  FinishActivationRow(format, cols, dst);
}

void FinishActivationRow(ActFormat format, int64_t cols, uint8_t* dst) {
  const ActRow view = ActRowAt(format, dst, cols);
  if (format == ActFormat::kQ8K) {
    auto* bsums = const_cast<int16_t*>(view.bsums);
    for (int64_t k = 0; k < cols / 16; ++k) {
      int sum = 0;
      for (int j = 0; j < 16; ++j) sum += view.qs[16 * k + j];
      bsums[k] = static_cast<int16_t>(sum);
    }
  }
  if (format == ActFormat::kQ8_1) {
    auto* s = const_cast<float*>(view.s);
    for (int64_t k = 0; k < cols / kQK; ++k) {
      int sum = 0;  // |sum| <= 32 * 127: exact in F32
      for (int j = 0; j < kQK; ++j) sum += view.qs[kQK * k + j];
      s[k] = view.d[k] * static_cast<float>(sum);
    }
  }
}

uint8_t* ActScratch(size_t bytes) {
  thread_local AlignedBuffer<uint8_t> scratch;
  if (scratch.size() < bytes) scratch.Resize(bytes);
  return scratch.data();
}

}  // namespace cairn::kernels
