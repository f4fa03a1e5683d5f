// Highway implementation of kernels/kv_write.h.
//
// F16 rows convert a vector at a time (hardware F32 -> F16 conversion, round
// to nearest even: the bits of core/half.h's F32ToF16, which the tests check
// on every target). A vector holding a NaN goes through F32ToF16 instead: the
// hardware keeps a NaN's payload, core/half.h writes one canonical quiet NaN.
// A prefill chunk appends n_kv_heads * head_dim values per layer and token
// (the 0.6B Qwen3: 2048 per layer, 57k per token), which converted one at a
// time took 5.6% of its prefill.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/kv_write.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/half.h"
#include "core/kv_block.h"
#include "kernels/kv_write.h"
#include "kernels/quant_blocks.h"

HWY_BEFORE_NAMESPACE();
namespace cairn::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void F32RowToF16Impl(const float* src, int64_t n, uint16_t* dst) {
#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
  // No hardware conversion: Highway's emulation does not saturate overflow
  // to infinity (the test caught 0x4b6f2a6f -> 0x7b79), so core/half.h's.
  for (int64_t i = 0; i < n; ++i) dst[i] = F32ToF16(src[i]);
#else
  const hn::ScalableTag<float> df;
  const hn::Rebind<hwy::float16_t, decltype(df)> dh;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto v = hn::LoadU(df, src + i);
    if (!hn::AllFalse(df, hn::IsNaN(v))) {
      for (int64_t j = i; j < i + lanes; ++j) dst[j] = F32ToF16(src[j]);
      continue;
    }
    hn::StoreU(hn::DemoteTo(dh, v), dh, reinterpret_cast<hwy::float16_t*>(dst + i));
  }
  for (; i < n; ++i) dst[i] = F32ToF16(src[i]);
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace cairn::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cairn::kernels {

HWY_EXPORT(F32RowToF16Impl);

float QuantizeQ8Block(const float* x, int8_t* levels) {
  float amax = 0.0f;
  bool finite = true;
  for (int i = 0; i < KvQ8Geometry::kBlock; ++i) {
    finite = finite && std::isfinite(x[i]);
    amax = std::max(amax, std::fabs(x[i]));
  }
  if (!finite) {   // (a level of NaN / inf would be undefined behaviour)
    std::fill(levels, levels + KvQ8Geometry::kBlock, int8_t{0});
    return std::numeric_limits<float>::quiet_NaN();
  }
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int i = 0; i < KvQ8Geometry::kBlock; ++i) levels[i] = static_cast<int8_t>(std::roundf(x[i] * id));
  return d;
}

void RotateForQ8K(float* row, int head_dim, bool query) {
  const int size = KvQ8Geometry{1, head_dim}.Rotation();
  if (size == 0) return;
  const int log2_size = std::countr_zero(static_cast<unsigned>(size));   // size is a power of two
  const int key_shift = log2_size / 2;
  const float scale = std::ldexp(1.0f, -(query ? log2_size - key_shift : key_shift));
  for (float* x = row; x < row + head_dim; x += size) {
    for (int span = 1; span < size; span *= 2) {
      for (int i = 0; i < size; i += 2 * span) {
        for (int j = i; j < i + span; ++j) {
          const float a = x[j], b = x[j + span];
          x[j] = a + b;
          x[j + span] = a - b;
        }
      }
    }
    for (int i = 0; i < size; ++i) x[i] *= scale;
  }
}

namespace {

// One head's row of token j into its KvQ8Geometry region (rotated first).
void StoreQ8Row(const KvQ8Geometry& g, const float* key, int64_t j, uint8_t* region) {
  CAIRN_CHECK(g.head_dim <= KvQ8Geometry::kMaxHeadDim);
  float row[KvQ8Geometry::kMaxHeadDim];
  std::copy(key, key + g.head_dim, row);
  RotateForQ8K(row, g.head_dim, /*query=*/false);
  int8_t levels[KvQ8Geometry::kBlock];
  for (int b = 0; b < g.Blocks(); ++b) {
    const float d = QuantizeQ8Block(row + b * KvQ8Geometry::kBlock, levels);
    for (int t = 0; t < KvQ8Geometry::kBlock / 4; ++t) {
      uint8_t* quad = region + g.QuadOffset(b * (KvQ8Geometry::kBlock / 4) + t, j);
      for (int e = 0; e < 4; ++e) quad[e] = static_cast<uint8_t>(levels[4 * t + e] + 128);
    }
    StoreHalfBits(F32ToF16(d), region + g.ScaleOffset(b, j));
  }
}

void LoadQ8Row(const KvQ8Geometry& g, const uint8_t* region, int64_t j, float* row) {
  for (int b = 0; b < g.Blocks(); ++b) {
    const float d = F16ToF32(LoadHalfBits(region + g.ScaleOffset(b, j)));
    for (int i = 0; i < KvQ8Geometry::kBlock; ++i) {
      const int quad = b * (KvQ8Geometry::kBlock / 4) + i / 4;
      row[b * KvQ8Geometry::kBlock + i] = static_cast<float>(region[g.QuadOffset(quad, j) + i % 4] - 128) * d;
    }
  }
}

}  // namespace

void StoreKvToken(DType dtype, int n_kv_heads, int head_dim, int block_tokens, const float* src, uint8_t* slab,
                  int token_in_block) {
  CAIRN_CHECK(dtype == DType::kF16 || dtype == DType::kBF16 || dtype == DType::kQ8_0);
  CAIRN_CHECK(token_in_block >= 0 && token_in_block < block_tokens);
  if (dtype == DType::kQ8_0) {
    const KvQ8Geometry g{block_tokens, head_dim};
    CAIRN_CHECK(head_dim % KvQ8Geometry::kBlock == 0);
    for (int h = 0; h < n_kv_heads; ++h) {
      StoreQ8Row(g, src + static_cast<int64_t>(h) * head_dim, token_in_block, slab + h * g.RegionBytes());
    }
    return;
  }
  for (int h = 0; h < n_kv_heads; ++h) {
    uint16_t* dst = reinterpret_cast<uint16_t*>(slab) + (static_cast<int64_t>(h) * block_tokens + token_in_block) * head_dim;
    const float* row = src + static_cast<int64_t>(h) * head_dim;
    if (dtype == DType::kF16) {
      HWY_DYNAMIC_DISPATCH(F32RowToF16Impl)(row, head_dim, dst);
    } else {
      for (int i = 0; i < head_dim; ++i) dst[i] = F32ToBf16(row[i]);
    }
  }
}

void LoadKvToken(DType dtype, int n_kv_heads, int head_dim, int block_tokens, const uint8_t* slab,
                 int token_in_block, float* dst) {
  if (dtype == DType::kQ8_0) {
    const KvQ8Geometry g{block_tokens, head_dim};
    for (int h = 0; h < n_kv_heads; ++h) {
      LoadQ8Row(g, slab + h * g.RegionBytes(), token_in_block, dst + static_cast<int64_t>(h) * head_dim);
    }
    return;
  }
  for (int h = 0; h < n_kv_heads; ++h) {
    const uint16_t* src =
        reinterpret_cast<const uint16_t*>(slab) + (static_cast<int64_t>(h) * block_tokens + token_in_block) * head_dim;
    float* row = dst + static_cast<int64_t>(h) * head_dim;
    for (int i = 0; i < head_dim; ++i) row[i] = dtype == DType::kF16 ? F16ToF32(src[i]) : Bf16ToF32(src[i]);
  }
}

void F32RowToF16(const float* src, int64_t n, uint16_t* dst) { HWY_DYNAMIC_DISPATCH(F32RowToF16Impl)(src, n, dst); }

}  // namespace cairn::kernels
#endif  // HWY_ONCE
