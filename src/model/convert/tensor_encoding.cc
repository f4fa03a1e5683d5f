#include "model/convert/tensor_encoding.h"

#include "kernels/quant.h"

namespace cairn::model {

DType ChooseTensorType(const std::string& name, const std::vector<int64_t>& ne, bool matrix, DType matrix_type) {
  if (!matrix || ne.size() != 2) return DType::kF32;
  if (matrix_type == DType::kF32 || matrix_type == DType::kBF16 || matrix_type == DType::kF16) return matrix_type;
  DType type = matrix_type;
  const bool kquant = GetDTypeInfo(type).block_elems == 256;  // K-quants and IQ4_XS: a Q6_K head, as llama.cpp
  if (kquant && name == "output.weight") type = DType::kQ6_K;
  const auto fits = [&](DType d) { return ne[0] % GetDTypeInfo(d).block_elems == 0; };
  if (!fits(type)) type = fits(DType::kQ8_0) ? DType::kQ8_0 : DType::kF16;
  return type;
}

uint32_t LlamaFileType(DType matrix_type) {
  switch (matrix_type) {
    case DType::kF32: return 0;
    case DType::kF16: return 1;
    case DType::kQ4_0: return 2;
    case DType::kQ4_1: return 3;
    case DType::kQ8_0: return 7;
    case DType::kQ5_0: return 8;
    case DType::kQ5_1: return 9;
    case DType::kQ2_K: return 10;
    case DType::kQ3_K: return 12;  // Q3_K_M
    case DType::kQ4_K: return 15;  // Q4_K_M
    case DType::kQ5_K: return 17;  // Q5_K_M
    case DType::kQ6_K: return 18;
    case DType::kIQ4_NL: return 25;
    case DType::kIQ4_XS: return 30;
    case DType::kBF16: return 32;
    default: return 0;
  }
}

std::vector<uint8_t> EncodeRows(const std::vector<float>& data, int64_t cols, DType type) {
  const int64_t rows = static_cast<int64_t>(data.size()) / cols;
  const size_t row_bytes = RowBytes(type, cols);
  std::vector<uint8_t> bytes(row_bytes * static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    kernels::QuantizeRow(type, data.data() + r * cols, cols, bytes.data() + r * row_bytes);
  }
  return bytes;
}

}  // namespace cairn::model
