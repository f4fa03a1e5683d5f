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
  // Cairn's own key keeps the NFC normalizer (llama.cpp's files lack it).
  EXPECT_EQ(original.normalizer, Normalizer::kNfc);
  EXPECT_EQ(read.normalizer, Normalizer::kNfc);
  EXPECT_NE(file->Find(kNormalizerKey), nullptr);
  EXPECT_EQ(file->Find(kTokenAttrsKey), nullptr);  // Qwen3's added tokens use no options
  const Tokenizer from_gguf(read);
  EXPECT_EQ(from_gguf.Encode("e\xCC\x81"), from_gguf.Encode("\xC3\xA9"));
  const auto cases = test::ReadVocabCases(test::VocabTestDir() + "/ggml-vocab-qwen2.gguf.inp",
                                          test::VocabTestDir() + "/ggml-vocab-qwen2.gguf.out");
  for (const auto& c : cases) EXPECT_EQ(from_gguf.Encode(c.text), c.ids) << c.text;
}

TEST(GgufVocab, LlamaCppFilesHaveNoNormalizerAndBadCairnKeysAreErrors) {
  const Vocabulary spm = LoadGgufVocabulary(test::VocabTestDir() + "/ggml-vocab-llama-spm.gguf");
  EXPECT_EQ(spm.normalizer, Normalizer::kNone);
  EXPECT_TRUE(spm.attrs.empty());
  // Non-NFC text is tokenized as given (llama.cpp's behaviour).
  const Tokenizer t(spm);
  EXPECT_NE(t.Encode("e\xCC\x81"), t.Encode("\xC3\xA9"));

  gguf::GgufWriter writer;
  WriteVocabularyToGguf(spm, writer);
  writer.Set(kNormalizerKey, gguf::Value::String("nfkc"));
  const auto file = gguf::GgufFile::FromBytes(writer.ToBytes());
  EXPECT_THROW(VocabularyFromGguf(*file), Error);
  gguf::GgufWriter short_attrs;
  WriteVocabularyToGguf(spm, short_attrs);
  short_attrs.Set(kTokenAttrsKey, gguf::Value::I32Array({1, 2}));
  EXPECT_THROW(VocabularyFromGguf(*gguf::GgufFile::FromBytes(short_attrs.ToBytes())), Error);
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
