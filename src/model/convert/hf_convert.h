// Hugging Face checkpoint -> GGUF, following llama.cpp's conventions exactly
// (tensor names, shapes, metadata keys and weight transforms), so files made
// here load in llama.cpp and published GGUFs load here. Unlike llama.cpp's
// converter it keeps Qwen3.5 MTP (`mtp.*`) weights as the nextn block.
#pragma once

#include <string>

#include "core/dtype.h"

namespace cairn::model {

struct ConvertOptions {
  // Type for 2-D weight matrices: f32, f16, bf16, q8_0, q4_0, q4_K, q5_K, q6_K.
  // Norms, conv taps and other 1-D tensors stay F32. K-quant files store
  // output.weight as q6_K; matrices whose row length does not fit the block
  // size fall back to q8_0, then f16.
  DType matrix_type = DType::kF16;
  bool keep_mtp = true;
  bool verbose = false;
};

// Converts HF_DIR (config.json, *.safetensors, optional tokenizer.json +
// tokenizer_config.json) into a GGUF file. Supported model_type: llama, qwen3,
// qwen3_5 / qwen3_5_text. Throws cairn::Error with a specific message.
void ConvertHfToGguf(const std::string& hf_dir, const std::string& out_path, const ConvertOptions& options);

}  // namespace cairn::model
