// The vocabulary-only GGUF files from llama.cpp's models/ folder all load.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include "gguf/gguf_file.h"
#include "common/test_paths.h"

namespace cairn::gguf {
namespace {

std::vector<std::string> VocabFiles() {
  std::vector<std::string> out;
  const std::filesystem::path dir = std::filesystem::path(cairn::test::SharedDir()) / "testdata/tokenizer";
  if (!std::filesystem::is_directory(dir)) return out;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == ".gguf") out.push_back(entry.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(GgufVocabFiles, AllLoadWithConsistentTokenizerArrays) {
  const std::vector<std::string> files = VocabFiles();
  if (files.empty()) GTEST_SKIP() << "no shared testdata/tokenizer/*.gguf";
  EXPECT_GE(files.size(), 5u);
  const std::set<std::string> models = {"gpt2", "llama", "bert", "t5", "rwkv", "plamo2", "gemma4", "none", "no_vocab"};
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    auto f = GgufFile::Open(path);
    EXPECT_EQ(f->version(), 3u);
    EXPECT_TRUE(f->tensors().empty());
    EXPECT_FALSE(f->architecture().empty());
    EXPECT_TRUE(models.count(f->GetString("tokenizer.ggml.model")));
    const Value& tokens = f->Get("tokenizer.ggml.tokens");
    const size_t n = tokens.AsStrings().size();
    EXPECT_GT(n, 1000u);
    const Value& types = f->Get("tokenizer.ggml.token_type");
    EXPECT_EQ(types.array_type(), ValueType::kI32);
    EXPECT_EQ(types.size(), n);
    for (int64_t t : types.AsI64s()) EXPECT_TRUE(t >= 1 && t <= 6) << t;
    if (const Value* scores = f->Find("tokenizer.ggml.scores")) {
      EXPECT_EQ(scores->AsF32s().size(), n);
    }
    if (const Value* merges = f->Find("tokenizer.ggml.merges")) {
      EXPECT_GT(merges->size(), 0u);
      for (const std::string& m : merges->AsStrings()) EXPECT_NE(m.find(' '), std::string::npos) << m;
    }
    const uint64_t bos = f->GetU64("tokenizer.ggml.bos_token_id");
    EXPECT_LT(bos, n);
    EXPECT_EQ(f->Get("tokenizer.ggml.bos_token_id").type(), ValueType::kU32);
    if (const Value* vocab_size = f->Find(f->architecture() + ".vocab_size")) {
      EXPECT_EQ(vocab_size->AsU64(), n);
    }
  }
}

TEST(GgufVocabFiles, KnownValues) {
  const std::string dir = cairn::test::SharedDir() + "/testdata/tokenizer/";
  if (!std::filesystem::exists(dir + "ggml-vocab-gpt-2.gguf")) GTEST_SKIP() << "no shared testdata";
  {
    auto f = GgufFile::Open(dir + "ggml-vocab-gpt-2.gguf");
    EXPECT_EQ(f->architecture(), "gpt2");
    EXPECT_EQ(f->GetString("tokenizer.ggml.model"), "gpt2");
    EXPECT_EQ(f->Get("tokenizer.ggml.tokens").size(), 50257u);
    EXPECT_EQ(f->Get("tokenizer.ggml.merges").size(), 50000u);
    EXPECT_EQ(f->Get("tokenizer.ggml.tokens").AsStrings()[0], "!");
    EXPECT_EQ(f->GetU64("tokenizer.ggml.eos_token_id"), 50256u);
    EXPECT_EQ(f->Get("tokenizer.ggml.tokens").AsStrings()[50256], "<|endoftext|>");
  }
  {
    auto f = GgufFile::Open(dir + "ggml-vocab-llama-spm.gguf");
    EXPECT_EQ(f->architecture(), "llama");
    EXPECT_EQ(f->GetString("tokenizer.ggml.model"), "llama");
    EXPECT_EQ(f->Get("tokenizer.ggml.tokens").size(), 32000u);
    EXPECT_EQ(f->Get("tokenizer.ggml.scores").size(), 32000u);
    EXPECT_EQ(f->Find("tokenizer.ggml.merges"), nullptr);
    EXPECT_EQ(f->Get("tokenizer.ggml.tokens").AsStrings()[1], "<s>");
    EXPECT_TRUE(f->GetBool("tokenizer.ggml.add_bos_token", false));
  }
  {
    auto f = GgufFile::Open(dir + "ggml-vocab-deepseek-coder.gguf");
    EXPECT_EQ(f->Get("tokenizer.ggml.tokens").size(), 32256u);
    EXPECT_EQ(f->Get("tokenizer.ggml.merges").size(), 31757u);
    EXPECT_EQ(f->GetString("tokenizer.ggml.model"), "gpt2");
  }
}

}  // namespace
}  // namespace cairn::gguf
