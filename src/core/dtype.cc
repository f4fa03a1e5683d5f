#include "core/dtype.h"

#include <array>
#include <cctype>

#include "core/error.h"

namespace cairn {
namespace {

// Geometry from ggml-common.h (QK_K = 256). `supported` marks the types that
// Cairn loads and computes with; the others are recognised for clear errors.
constexpr std::array kInfos = {
    DTypeInfo{DType::kF32, "f32", 1, 4, true},
    DTypeInfo{DType::kF16, "f16", 1, 2, true},
    DTypeInfo{DType::kQ4_0, "q4_0", 32, 18, true},
    DTypeInfo{DType::kQ4_1, "q4_1", 32, 20, true},
    DTypeInfo{DType::kQ5_0, "q5_0", 32, 22, true},
    DTypeInfo{DType::kQ5_1, "q5_1", 32, 24, true},
    DTypeInfo{DType::kQ8_0, "q8_0", 32, 34, true},
    DTypeInfo{DType::kQ8_1, "q8_1", 32, 36, false},
    DTypeInfo{DType::kQ2_K, "q2_K", 256, 84, true},
    DTypeInfo{DType::kQ3_K, "q3_K", 256, 110, true},
    DTypeInfo{DType::kQ4_K, "q4_K", 256, 144, true},
    DTypeInfo{DType::kQ5_K, "q5_K", 256, 176, true},
    DTypeInfo{DType::kQ6_K, "q6_K", 256, 210, true},
    DTypeInfo{DType::kQ8_K, "q8_K", 256, 292, false},
    DTypeInfo{DType::kIQ4_NL, "iq4_nl", 32, 18, true},
    DTypeInfo{DType::kIQ4_XS, "iq4_xs", 256, 136, true},
    DTypeInfo{DType::kI8, "i8", 1, 1, false},
    DTypeInfo{DType::kI16, "i16", 1, 2, false},
    DTypeInfo{DType::kI32, "i32", 1, 4, false},
    DTypeInfo{DType::kI64, "i64", 1, 8, false},
    DTypeInfo{DType::kF64, "f64", 1, 8, false},
    DTypeInfo{DType::kBF16, "bf16", 1, 2, true},
};

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

}  // namespace

const DTypeInfo* FindDTypeInfo(uint32_t ggml_type_id) {
  for (const DTypeInfo& info : kInfos) {
    if (static_cast<uint32_t>(info.type) == ggml_type_id) return &info;
  }
  return nullptr;
}

const DTypeInfo& GetDTypeInfo(DType type) {
  const DTypeInfo* info = FindDTypeInfo(static_cast<uint32_t>(type));
  CAIRN_CHECK(info != nullptr);
  return *info;
}

std::optional<DType> ParseDType(std::string_view name) {
  for (const DTypeInfo& info : kInfos) {
    if (EqualsIgnoreCase(info.name, name)) return info.type;
  }
  return std::nullopt;
}

}  // namespace cairn
