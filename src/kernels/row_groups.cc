#include "kernels/row_groups.h"

#include <cstring>

#include "core/error.h"
#include "kernels/quant.h"

namespace cairn::kernels {
namespace {

struct GroupShape {
  size_t block_bytes;  // B
  size_t head;         // leading bytes stored per row first (the F16 d of a 32-element block): 0 or 2
  size_t planes;       // (B - head) / 4
  size_t tail;         // trailing bytes stored per row last (Q6_K's d): 0 or 2
};

GroupShape ShapeOf(DType type) {
  const size_t b = GetDTypeInfo(type).block_bytes;
  const size_t head = GetDTypeInfo(type).block_elems == 32 ? b % 4 : 0;
  return {b, head, (b - head) / 4, (b - head) % 4};
}

}  // namespace

bool HasRowGroupLayout(DType type) {
  switch (type) {
    case DType::kQ4_K:
    case DType::kQ5_K:
    case DType::kQ6_K:
    case DType::kQ8_0:
    case DType::kQ5_0:
    case DType::kQ4_0:
    case DType::kIQ4_NL:
    case DType::kQ4_1:
    case DType::kQ5_1:
    case DType::kQ2_K:
    case DType::kQ3_K:
    case DType::kIQ4_XS:
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
        std::memcpy(out + s.head * r, block, s.head);
        uint8_t* planes = out + kGroupRows * s.head;
        for (size_t k = 0; k < s.planes; ++k) std::memcpy(planes + 64 * k + 4 * r, block + s.head + 4 * k, 4);
        if (s.tail > 0) std::memcpy(planes + 64 * s.planes + s.tail * r, block + s.head + 4 * s.planes, s.tail);
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
    std::memcpy(block, in + s.head * lane, s.head);
    const uint8_t* planes = in + kGroupRows * s.head;
    for (size_t k = 0; k < s.planes; ++k) std::memcpy(block + s.head + 4 * k, planes + 64 * k + 4 * lane, 4);
    if (s.tail > 0) std::memcpy(block + s.head + 4 * s.planes, planes + 64 * s.planes + s.tail * lane, s.tail);
  }
}

}  // namespace cairn::kernels
