// Element types of tensors, numbered exactly as ggml numbers them (GGUF tensor
// info type field), so a GGUF type id converts to DType with a range check.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace cairn {

enum class DType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ8_1 = 9,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,
  kIQ4_NL = 20,
  kIQ4_XS = 23,
  kI8 = 24,
  kI16 = 25,
  kI32 = 26,
  kI64 = 27,
  kF64 = 28,
  kBF16 = 30,
};

// Block geometry: a row of n elements occupies (n / block_elems) * block_bytes bytes.
struct DTypeInfo {
  DType type;
  std::string_view name;   // ggml spelling: "f32", "q8_0", "q4_K", ...
  int block_elems;         // elements per block (1 for plain types)
  int block_bytes;         // bytes per block
  bool supported;          // Cairn has dequant + dot kernels for it
};

// Returns nullptr for ids ggml does not define (or that Cairn does not know).
const DTypeInfo* FindDTypeInfo(uint32_t ggml_type_id);
const DTypeInfo& GetDTypeInfo(DType type);
std::optional<DType> ParseDType(std::string_view name);  // case-insensitive

// Bytes of a row of `elems` elements; elems must be a multiple of block_elems.
inline size_t RowBytes(DType type, int64_t elems) {
  const DTypeInfo& info = GetDTypeInfo(type);
  return static_cast<size_t>(elems / info.block_elems) * static_cast<size_t>(info.block_bytes);
}

}  // namespace cairn
