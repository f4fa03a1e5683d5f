// Random tiny models for model-level tests, generated on first use into a
// per-user temp folder (regenerated when missing; deterministic by seed).
//
// A cached file is reused only when everything that shapes it matches, so the
// file name carries all of it: the options, a hash of the tokenizer files the
// model embeds (a run without the shared test data writes a 64-token model,
// which a later run with the data must not pick up), and a hash of the
// generator's sources taken at configure time (CAIRN_TEST_MODEL_GENERATOR_HASH).
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "common/test_paths.h"
#include "core/dtype.h"
#include "model/convert/random_model.h"

namespace cairn::test {

// FNV-1a, 64-bit: enough to tell inputs apart in a cache file name.
inline uint64_t HashBytes(const std::string& bytes, uint64_t h = 14695981039346656037ull) {
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Hash of the tokenizer files WriteRandomModel reads from dir ("none" when absent).
inline std::string TokenizerKey(const std::string& dir) {
  namespace fs = std::filesystem;
  uint64_t h = 14695981039346656037ull;
  bool any = false;
  for (const char* file : {"tokenizer.json", "tokenizer_config.json"}) {
    std::ifstream in(fs::path(dir) / file, std::ios::binary);
    if (!in) continue;
    any = true;
    h = HashBytes(file, h);
    h = HashBytes(std::string(std::istreambuf_iterator<char>(in), {}), h);
  }
  if (!any) return "none";
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

inline std::string TinyModelPath(const std::string& arch, DType quant = DType::kF32, bool mtp = false,
                                 uint64_t seed = 1) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "cairn-test-models";
  fs::create_directories(dir);
  const std::string tokenizer_dir = SharedDir() + "/testdata/qwen3-tokenizer";
  const std::string name = arch + "-tiny-" + std::string(GetDTypeInfo(quant).name) + (mtp ? "-mtp" : "") + "-s" +
                           std::to_string(seed) + "-tok" + TokenizerKey(tokenizer_dir) + "-gen" +
                           CAIRN_TEST_MODEL_GENERATOR_HASH + ".gguf";
  const fs::path path = dir / name;
  if (!fs::exists(path)) {
    model::RandomModelOptions options;
    options.arch = arch;
    options.preset = "tiny";
    options.matrix_type = quant;
    options.mtp = mtp;
    options.seed = seed;
    options.tokenizer_dir = tokenizer_dir;
    const fs::path tmp = dir / (name + ".tmp" + std::to_string(::getpid()));
    model::WriteRandomModel(options, tmp.string());
    fs::rename(tmp, path);
  }
  return path.string();
}

}  // namespace cairn::test
