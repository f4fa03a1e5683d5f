// Random-initialised models at real published shapes (`cairn mkmodel`), so
// tests and benchmarks run on realistic sizes without downloads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace cairn::model {

struct RandomModelOptions {
  std::string arch = "qwen35";    // llama | qwen3 | qwen35 | gemma3
  std::string preset = "tiny";    // see RandomModelPresets()
  DType matrix_type = DType::kQ8_0;
  bool mtp = false;               // add a Qwen3.5 MTP (nextn) block
  uint64_t seed = 1;
  int threads = 0;                // 0 = all cores
  // HF tokenizer directory (tokenizer.json + tokenizer_config.json) whose
  // vocabulary and chat template the model carries.
  std::string tokenizer_dir;
};

// "arch/preset: description" lines for --help.
std::vector<std::string> RandomModelPresets();

// Writes the model; throws cairn::Error for unknown arch/preset combinations.
void WriteRandomModel(const RandomModelOptions& options, const std::string& out_path);

}  // namespace cairn::model
