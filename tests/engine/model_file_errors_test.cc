// Bad model files: each gets one clear error from Engine::Create (what
// `cairn serve` / `cairn run` print before exiting 1), never a crash.
// Files are the tiny qwen3 test model rewritten with one defect each.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "common/temp_dir.h"
#include "core/error.h"
#include "engine/engine.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "model/test_models.h"

namespace cairn::engine {
namespace {

struct Edit {
  std::function<bool(const std::string& key)> drop_key = [](const std::string&) { return false; };
  std::function<void(gguf::GgufWriter&)> add_keys = [](gguf::GgufWriter&) {};
  // Rewrites one tensor: may change its shape, type and bytes; false drops it.
  std::function<bool(gguf::TensorInfo&, std::vector<uint8_t>&)> tensor = [](gguf::TensorInfo&, std::vector<uint8_t>&) {
    return true;
  };
};

std::string Rewrite(const std::string& dir, const std::string& name, const Edit& edit) {
  auto src = gguf::GgufFile::Open(test::TinyModelPath("qwen3", DType::kF32));
  gguf::GgufWriter w;
  for (const auto& [key, value] : src->metadata()) {
    if (key == "general.alignment" || edit.drop_key(key)) continue;
    w.Set(key, value);
  }
  edit.add_keys(w);
  for (gguf::TensorInfo t : src->tensors()) {
    std::vector<uint8_t> bytes(t.data, t.data + t.bytes);
    if (!edit.tensor(t, bytes)) continue;
    w.AddTensor(t.name, t.shape, t.type, bytes);
  }
  const std::string path = dir + "/" + name + ".gguf";
  w.WriteFile(path);
  return path;
}

void ExpectCreateError(const std::string& path, const std::string& needle) {
  EngineOptions o;
  o.model_path = path;
  o.threads = 1;
  o.spec_mode = "baseline";
  try {
    Engine::Create(o);
    ADD_FAILURE() << path << " loaded; expected an error with: " << needle;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(ModelFileErrors, EachDefectIsOneClearError) {
  test::TempDir dir("cairn_bad_models");
  // A tensor of a type Cairn knows but cannot compute with.
  ExpectCreateError(Rewrite(dir.path(), "type", {.tensor = [](gguf::TensorInfo& t, std::vector<uint8_t>& b) {
                                                    if (t.name != "blk.0.ffn_up.weight") return true;
                                                    t.type = DType::kI16;   // known to GGUF, not a weight type
                                                    b.assign(static_cast<size_t>(t.elements() * 2), 0);
                                                    return true;
                                                  }}),
                    "blk.0.ffn_up.weight");
  // A wrong tensor shape.
  ExpectCreateError(Rewrite(dir.path(), "shape", {.tensor = [](gguf::TensorInfo& t, std::vector<uint8_t>& b) {
                                                     if (t.name != "blk.1.attn_q.weight") return true;
                                                     t.shape[1] /= 2;
                                                     b.resize(b.size() / 2);
                                                     return true;
                                                   }}),
                    "tensor 'blk.1.attn_q.weight' has shape");
  // A missing tensor.
  ExpectCreateError(Rewrite(dir.path(), "tensor", {.tensor = [](gguf::TensorInfo& t, std::vector<uint8_t>&) {
                                                      return t.name != "blk.0.attn_norm.weight";
                                                    }}),
                    "missing tensor 'blk.0.attn_norm.weight'");
  // A missing required key.
  ExpectCreateError(Rewrite(dir.path(), "key", {.drop_key = [](const std::string& k) { return k.ends_with(".block_count"); }}),
                    "block_count");
  ExpectCreateError(Rewrite(dir.path(), "arch", {.drop_key = [](const std::string& k) { return k == "general.architecture"; }}),
                    "missing metadata key 'general.architecture'");
  // A vocabulary that does not match the embedding rows.
  ExpectCreateError(Rewrite(dir.path(), "vocab", {.drop_key = [](const std::string& k) {
                                                     return k == "tokenizer.ggml.tokens" || k == "tokenizer.ggml.token_type";
                                                   },
                                                   .add_keys = [](gguf::GgufWriter& w) {
                                                     std::vector<std::string> few;
                                                     for (int i = 0; i < 300; ++i) few.push_back("t" + std::to_string(i));
                                                     w.Set("tokenizer.ggml.tokens", gguf::Value::StringArray(few));
                                                   }}),
                    "vocabulary");
  // Truncated data.
  const std::string whole = Rewrite(dir.path(), "whole", {});
  const std::string cut = dir.path() + "/cut.gguf";
  std::filesystem::copy_file(whole, cut);
  std::filesystem::resize_file(cut, std::filesystem::file_size(whole) - 1000);
  ExpectCreateError(cut, "beyond the end");
  // The intact rewrite loads (the edits above are the only defects).
  EngineOptions o;
  o.model_path = whole;
  o.threads = 1;
  o.spec_mode = "baseline";
  EXPECT_NO_THROW(Engine::Create(o));
}

}  // namespace
}  // namespace cairn::engine
