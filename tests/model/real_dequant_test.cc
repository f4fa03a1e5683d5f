// Dequantization of the 32-element block types in real published GGUF files
// (tools/fetch_models.py) against checksums of gguf-py's dequantize (the
// llama.cpp reference; golden/real_dequant_sums.txt). Skipped when the models
// are not in the cache.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/half.h"
#include "gguf/gguf_file.h"
#include "kernels/quant.h"

namespace cairn {
namespace {

std::string ModelsDir() {
  if (const char* d = std::getenv("CAIRN_MODELS_DIR"); d != nullptr && *d != '\0') return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0') return std::string(x) + "/cairn/models";
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') return std::string(h) + "/.cache/cairn/models";
  return "";
}

TEST(RealModelDequant, MatchesGgufPyChecksums) {
  std::ifstream in(CAIRN_SOURCE_DIR "/tests/model/golden/real_dequant_sums.txt");
  ASSERT_TRUE(in) << "missing golden";
  const std::string dir = ModelsDir();
  std::map<std::string, std::unique_ptr<gguf::GgufFile>> files;
  std::vector<float> row;
  int checked = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string model, name, type;
    int64_t elements = 0;
    uint64_t want1 = 0, want2 = 0;
    fields >> model >> name >> type >> elements >> want1 >> want2;
    const std::string path = dir + "/" + model;
    if (!std::filesystem::exists(path)) continue;
    auto& file = files[model];
    if (!file) file = gguf::GgufFile::Open(path);
    const gguf::TensorInfo* t = file->FindTensor(name);
    ASSERT_NE(t, nullptr) << name;
    ASSERT_EQ(t->elements(), elements) << name;
    const int64_t cols = t->shape[0];
    const size_t row_bytes = RowBytes(t->type, cols);
    row.resize(static_cast<size_t>(cols));
    uint64_t s1 = 0, s2 = 0, i = 0;
    for (int64_t r = 0; r < t->rows(); ++r) {
      kernels::DequantizeRow(t->type, t->data + r * row_bytes, cols, row.data());
      for (float v : row) {
        const uint64_t bits = FloatBits(v);
        s1 += bits;
        s2 += bits * ++i;
      }
    }
    EXPECT_EQ(s1, want1) << model << " " << name << " (" << type << ")";
    EXPECT_EQ(s2, want2) << model << " " << name << " (" << type << ")";
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "no real model in " << dir << " (tools/fetch_models.py)";
}

}  // namespace
}  // namespace cairn
