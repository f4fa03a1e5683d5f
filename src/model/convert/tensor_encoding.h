// Choosing and producing the stored type of each tensor when writing a model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace cairn::model {

// Stored type of a tensor: 1-D and non-matrix tensors stay F32; matrices get
// `matrix_type`, except that K-quant files keep output.weight at q6_K and a
// matrix whose row length does not fit the block size falls back to q8_0,
// then f16.
DType ChooseTensorType(const std::string& name, const std::vector<int64_t>& ne, bool matrix, DType matrix_type);

// llama_ftype value for general.file_type.
uint32_t LlamaFileType(DType matrix_type);

// Encodes rows of `cols` F32 values as `type` (rows = data.size() / cols).
std::vector<uint8_t> EncodeRows(const std::vector<float>& data, int64_t cols, DType type);

}  // namespace cairn::model
