#include "kernels/row_groups.h"

#include <cstring>

#include "core/error.h"
#include "kernels/quant.h"

namespace cairn::kernels {
namespace {

struct GroupShape {
  size_t block_bytes;  // B
  size_t planes;       // B / 4
  size_t tail;         // B % 4 (0 or 2)
};

GroupShape ShapeOf(DType type) {
  const size_t b = GetDTypeInfo(type).block_bytes;
  return {b, b / 4, b % 4};
}

}  // namespace

bool HasRowGroupLayout(DType type) {
  switch (type) {
    case DType::kQ4_K:
    case DType::kQ5_K:
    case DType::kQ6_K:
      return true;
    default:
      return false;
  }
}

void ToRowGroups(DType type, const uint8_t* src, size_t src_stride, int64_t cols, int64_t group0, int64_t group1,
                 uint8_t* dst) {
  CAIRN_CHECK(HasRowGroupLayout(type));
  const GroupShape s = ShapeOf(type);
  const int64_t blocks = cols / GetDTypeInfo(type).block_elems;
  for (int64_t g = group0; g < group1; ++g) {
    for (int64_t i = 0; i < blocks; ++i) {
      uint8_t* out = dst + static_cast<size_t>(g * blocks + i) * kGroupRows * s.block_bytes;
      for (int r = 0; r < kGroupRows; ++r) {
        const uint8_t* block = src + static_cast<size_t>(g * kGroupRows + r) * src_stride + i * s.block_bytes;
        for (size_t k = 0; k < s.planes; ++k) std::memcpy(out + 64 * k + 4 * r, block + 4 * k, 4);
        if (s.tail > 0) std::memcpy(out + 64 * s.planes + s.tail * r, block + 4 * s.planes, s.tail);
      }
    }
  }
}

void RowFromGroups(DType type, const uint8_t* data, int64_t cols, int64_t r, uint8_t* out) {
  const GroupShape s = ShapeOf(type);
  const int64_t blocks = cols / GetDTypeInfo(type).block_elems;
  const int64_t g = r / kGroupRows;
  const int lane = static_cast<int>(r % kGroupRows);
  for (int64_t i = 0; i < blocks; ++i) {
    const uint8_t* in = data + static_cast<size_t>(g * blocks + i) * kGroupRows * s.block_bytes;
    uint8_t* block = out + i * s.block_bytes;
    for (size_t k = 0; k < s.planes; ++k) std::memcpy(block + 4 * k, in + 64 * k + 4 * lane, 4);
    if (s.tail > 0) std::memcpy(block + 4 * s.planes, in + 64 * s.planes + s.tail * lane, s.tail);
  }
}

}  // namespace cairn::kernels
