// Every llama.cpp vocab-only GGUF in shared/testdata/tokenizer must tokenize
// each .inp string to exactly the ids of its .out line (no BOS, no special
// parsing), and the GGUF round trip of the Qwen3 vocabulary must be lossless.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/error.h"
#include "gguf/gguf_writer.h"
#include "test_vocab.h"
#include "tokenizer/gguf_vocab.h"

namespace cairn::tokenizer {
namespace {

class VocabFile : public ::testing::TestWithParam<std::string> {};

TEST_P(VocabFile, MatchesExpectedIds) {
  const std::string base = test::VocabTestDir() + "/ggml-vocab-" + GetParam() + ".gguf";
  const Tokenizer tokenizer(LoadGgufVocabulary(base));
  const auto cases = test::ReadVocabCases(base + ".inp", base + ".out");
  ASSERT_EQ(cases.size(), 46u);
  int passed = 0;
  for (const auto& c : cases) {
    const auto ids = tokenizer.Encode(c.text, /*parse_special=*/false);
    EXPECT_EQ(ids, c.ids) << GetParam() << " text: '" << c.text << "'";
    passed += ids == c.ids;
  }
  EXPECT_EQ(passed, 46) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(AllVocabs, VocabFile,
                         ::testing::Values("gpt-2", "deepseek-coder", "deepseek-llm", "llama-spm",
                                           "phi-3"));

TEST(GgufVocab, MetadataOfTestFiles) {
  const Vocabulary spm = LoadGgufVocabulary(test::VocabTestDir() + "/ggml-vocab-llama-spm.gguf");
  EXPECT_EQ(spm.model, ModelKind::kSpm);
  EXPECT_EQ(spm.size(), 32000u);
  EXPECT_EQ(spm.bos, 1);
  EXPECT_EQ(spm.eos, 2);
  EXPECT_TRUE(spm.add_bos);
  const Vocabulary gpt2 = LoadGgufVocabulary(test::VocabTestDir() + "/ggml-vocab-gpt-2.gguf");
  EXPECT_EQ(gpt2.model, ModelKind::kBpe);
  EXPECT_EQ(gpt2.pre, "gpt-2");
  EXPECT_EQ(gpt2.size(), 50257u);
}

TEST(GgufVocab, SpmDecodeRoundTrip) {
  const Tokenizer t(LoadGgufVocabulary(test::VocabTestDir() + "/ggml-vocab-llama-spm.gguf"));
  for (const std::string text : {"Hello world", "  two leading", "Cửa Việt 🦙", "a\tb\nc"}) {
    EXPECT_EQ(t.Decode(t.Encode(text)), text);
  }
  const auto with_bos = t.Encode("Hi", false, true);
  ASSERT_FALSE(with_bos.empty());
  EXPECT_EQ(with_bos[0], 1);
}

TEST(GgufVocab, Qwen3WriteReadRoundTrip) {
  const Vocabulary& original = test::Qwen3().vocab();
  gguf::GgufWriter writer;
  WriteVocabularyToGguf(original, writer);
  const std::vector<uint8_t> bytes = writer.ToBytes();
  const auto file = gguf::GgufFile::FromBytes(bytes);
  const Vocabulary read = VocabularyFromGguf(*file);
  EXPECT_EQ(read.tokens, original.tokens);
  EXPECT_EQ(read.types, original.types);
  EXPECT_EQ(read.merges, original.merges);
  EXPECT_EQ(read.pre, "qwen2");
  EXPECT_EQ(read.eos, original.eos);
  EXPECT_EQ(read.eot, original.eot);
  EXPECT_EQ(read.pad, original.pad);
  EXPECT_EQ(read.bos, kNoToken);
  EXPECT_EQ(read.chat_template, original.chat_template);
  const Tokenizer from_gguf(read);
  const auto cases = test::ReadVocabCases(test::VocabTestDir() + "/ggml-vocab-qwen2.gguf.inp",
                                          test::VocabTestDir() + "/ggml-vocab-qwen2.gguf.out");
  for (const auto& c : cases) EXPECT_EQ(from_gguf.Encode(c.text), c.ids) << c.text;
}

TEST(GgufVocab, MissingKeysAreClearErrors) {
  gguf::GgufWriter writer;
  writer.Set("general.architecture", gguf::Value::String("llama"));
  const auto file = gguf::GgufFile::FromBytes(writer.ToBytes());
  try {
    VocabularyFromGguf(*file);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer.ggml.model"), std::string::npos) << e.what();
  }
  gguf::GgufWriter unknown;
  unknown.Set("tokenizer.ggml.model", gguf::Value::String("bert"));
  const auto file2 = gguf::GgufFile::FromBytes(unknown.ToBytes());
  EXPECT_THROW(VocabularyFromGguf(*file2), Error);
}

}  // namespace
}  // namespace cairn::tokenizer
