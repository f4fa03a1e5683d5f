// Random tiny models for model-level tests, generated on first use into a
// per-user temp folder (regenerated when missing; deterministic by seed).
#pragma once

#include <filesystem>
#include <string>

#include "common/test_paths.h"
#include "core/dtype.h"
#include "model/convert/random_model.h"

namespace cairn::test {

inline std::string TinyModelPath(const std::string& arch, DType quant = DType::kF32, bool mtp = false,
                                 uint64_t seed = 1) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "cairn-test-models";
  fs::create_directories(dir);
  const std::string name = arch + "-tiny-" + std::string(GetDTypeInfo(quant).name) + (mtp ? "-mtp" : "") + "-s" +
                           std::to_string(seed) + ".gguf";
  const fs::path path = dir / name;
  if (!fs::exists(path)) {
    model::RandomModelOptions options;
    options.arch = arch;
    options.preset = "tiny";
    options.matrix_type = quant;
    options.mtp = mtp;
    options.seed = seed;
    options.tokenizer_dir = SharedDir() + "/testdata/qwen3-tokenizer";
    const fs::path tmp = dir / (name + ".tmp" + std::to_string(::getpid()));
    model::WriteRandomModel(options, tmp.string());
    fs::rename(tmp, path);
  }
  return path.string();
}

}  // namespace cairn::test
