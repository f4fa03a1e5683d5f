// Helpers shared by the GGUF reader and writer (not part of the public API).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/dtype.h"
#include "gguf/gguf_file.h"

namespace cairn::gguf::internal {

inline constexpr char kMagic[4] = {'G', 'G', 'U', 'F'};
inline constexpr uint32_t kWriteVersion = 3;
inline constexpr int kMaxDims = 4;
inline constexpr const char* kAlignmentKey = "general.alignment";

bool IsKnownValueType(uint32_t raw);
bool IsUnsignedInt(ValueType t);
bool IsSignedInt(ValueType t);
bool IsInt(ValueType t);
bool IsFloat(ValueType t);
size_t ScalarSize(ValueType t);      // 0 for string/array
size_t MinEncodedSize(ValueType t);  // smallest encoding of one value of this type
bool UnsignedFits(ValueType t, uint64_t v);
bool SignedFits(ValueType t, int64_t v);

// Quotable, single-line rendering of a (possibly binary) name for error messages.
std::string Printable(std::string_view s, size_t max_bytes = 80);

inline bool IsPowerOfTwo(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

// Rounds `x` up to a multiple of `align` (a power of two); false on overflow.
inline bool PadUp(uint64_t x, uint64_t align, uint64_t* out) {
  const uint64_t mask = align - 1;
  if (x > UINT64_MAX - mask) return false;
  *out = (x + mask) & ~mask;
  return true;
}

// Checks a tensor shape (1..4 dims, each > 0, element count and byte size
// without overflow, ne0 a multiple of the block size). On success returns an
// empty string and stores the byte size; otherwise returns the problem.
std::string CheckTensorShape(std::span<const int64_t> shape, const DTypeInfo& info, uint64_t* bytes);

}  // namespace cairn::gguf::internal
