// Differential tests against Hugging Face `tokenizers` on two small
// tokenizers trained by tools/tokenizer_golden.py (committed with their
// goldens): SentencePiece-style BPE in the Llama-2 tokenizer.json layout
// (byte fallback, Prepend/Replace normalizer) and byte-level BPE with an NFC
// normalizer. Both carry added tokens with lstrip/rstrip/single_word/
// normalized. Every case must match HF's ids, directly after import and after
// a round trip through GGUF metadata (what `cairn convert-tokenizer` writes).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

#include "gguf/gguf_writer.h"
#include "test_vocab.h"
#include "tokenizer/gguf_vocab.h"

namespace cairn::tokenizer {
namespace {

std::string GoldenDir() { return cairn::test::SourceDir() + "/tests/tokenizer/golden/"; }

struct GoldenCase {
  std::string text;
  bool special;
  std::vector<TokenId> ids;
};

std::vector<GoldenCase> ReadGolden(const std::string& name) {
  std::ifstream in(GoldenDir() + name + "_golden.jsonl");
  std::vector<GoldenCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto j = nlohmann::json::parse(line);
    cases.push_back({j["text"].get<std::string>(), j["special"].get<bool>(),
                     j["ids"].get<std::vector<TokenId>>()});
  }
  return cases;
}

// Runs every case; returns the number identical to HF (reports the first few misses).
int CountMatches(const Tokenizer& t, const std::vector<GoldenCase>& cases) {
  int passed = 0, shown = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto ids = t.Encode(cases[i].text, cases[i].special);
    if (ids == cases[i].ids) {
      ++passed;
    } else if (shown++ < 5) {
      ADD_FAILURE() << "case " << i << " (special=" << cases[i].special << ") text: '"
                    << cases[i].text << "'\ngot " << ::testing::PrintToString(ids) << "\nwant "
                    << ::testing::PrintToString(cases[i].ids);
    }
  }
  return passed;
}

Vocabulary ThroughGguf(const Vocabulary& vocab) {
  gguf::GgufWriter writer;
  WriteVocabularyToGguf(vocab, writer);
  const auto file = gguf::GgufFile::FromBytes(writer.ToBytes());
  return VocabularyFromGguf(*file);
}

TEST(HfTinyGolden, SentencePieceBpeMatchesHuggingFace) {
  const Vocabulary vocab = LoadHfTokenizerFiles(GoldenDir() + "tiny_spm_tokenizer.json");
  EXPECT_EQ(vocab.model, ModelKind::kSpm);
  EXPECT_TRUE(vocab.add_space_prefix);
  EXPECT_EQ(vocab.normalizer, Normalizer::kNone);
  EXPECT_EQ(vocab.unk, 0);
  EXPECT_EQ(vocab.type(3), TokenType::kByte);  // <0x00>
  const TokenId mask = vocab.FindToken("<mask>");
  ASSERT_NE(mask, kNoToken);
  EXPECT_EQ(vocab.attr(mask), kAttrLstrip);
  EXPECT_TRUE(std::isinf(vocab.scores[1]));  // <s>: never formed by merging

  const auto cases = ReadGolden("tiny_spm");
  ASSERT_GE(cases.size(), 500u);
  const Tokenizer direct(vocab);
  EXPECT_EQ(CountMatches(direct, cases), static_cast<int>(cases.size()));

  const Vocabulary reloaded = ThroughGguf(vocab);
  EXPECT_EQ(reloaded.scores.size(), vocab.scores.size());
  EXPECT_EQ(reloaded.attrs, vocab.attrs);
  const Tokenizer from_gguf(reloaded);
  EXPECT_EQ(CountMatches(from_gguf, cases), static_cast<int>(cases.size()));
}

// The same vocabulary with a Metaspace pre-tokenizer (split: false): HF
// prefixes "▁" only where a piece does not start with a space, and with
// prepend_scheme "first" only at the start of the text.
void CheckMetaspace(const std::string& name, SpacePrefix rule) {
  const Vocabulary vocab = LoadHfTokenizerFiles(GoldenDir() + name + "_tokenizer.json");
  EXPECT_EQ(vocab.model, ModelKind::kSpm);
  EXPECT_TRUE(vocab.add_space_prefix);
  EXPECT_EQ(vocab.space_prefix, rule);
  const auto cases = ReadGolden(name);
  ASSERT_GE(cases.size(), 250u);
  const Tokenizer direct(vocab);
  EXPECT_EQ(CountMatches(direct, cases), static_cast<int>(cases.size()));
  const Vocabulary reloaded = ThroughGguf(vocab);
  EXPECT_EQ(reloaded.space_prefix, rule);
  const Tokenizer from_gguf(reloaded);
  EXPECT_EQ(CountMatches(from_gguf, cases), static_cast<int>(cases.size()));
}

TEST(HfTinyGolden, MetaspaceFirstMatchesHuggingFace) {
  CheckMetaspace("tiny_spm_metaspace_first", SpacePrefix::kMetaspaceFirst);
}

TEST(HfTinyGolden, MetaspaceAlwaysMatchesHuggingFace) {
  CheckMetaspace("tiny_spm_metaspace_always", SpacePrefix::kMetaspaceAlways);
}

TEST(HfTinyGolden, NfcByteLevelBpeMatchesHuggingFace) {
  const Vocabulary vocab = LoadHfTokenizerFiles(GoldenDir() + "tiny_nfc_bpe_tokenizer.json");
  EXPECT_EQ(vocab.model, ModelKind::kBpe);
  EXPECT_EQ(vocab.pre, "qwen2");
  EXPECT_EQ(vocab.normalizer, Normalizer::kNfc);
  const TokenId an = vocab.FindToken("\xC3\x85n");  // "Ån", matched after NFC
  ASSERT_NE(an, kNoToken);
  EXPECT_EQ(vocab.attr(an), kAttrNormalized);

  const auto cases = ReadGolden("tiny_nfc_bpe");
  ASSERT_GE(cases.size(), 500u);
  const Tokenizer direct(vocab);
  EXPECT_EQ(CountMatches(direct, cases), static_cast<int>(cases.size()));

  const Vocabulary reloaded = ThroughGguf(vocab);
  EXPECT_EQ(reloaded.normalizer, Normalizer::kNfc);
  EXPECT_EQ(reloaded.attrs, vocab.attrs);
  const Tokenizer from_gguf(reloaded);
  EXPECT_EQ(CountMatches(from_gguf, cases), static_cast<int>(cases.size()));
}

// The options themselves, on hand-picked strings (ids from the trained vocabulary).
TEST(HfTinyGolden, AddedTokenOptions) {
  const Tokenizer t(LoadHfTokenizerFiles(GoldenDir() + "tiny_nfc_bpe_tokenizer.json"));
  const Vocabulary& v = t.vocab();
  const TokenId lst = v.FindToken("<|lst|>"), rst = v.FindToken("<|rst|>"), w = v.FindToken("<w>");
  // lstrip swallows the whitespace on the left only; rstrip on the right only.
  EXPECT_EQ(t.NormalizedText("a \t<|lst|> b", true), "a<|lst|> b");
  EXPECT_EQ(t.NormalizedText("a <|rst|> \n b", true), "a <|rst|>b");
  // Without special parsing they are plain text (and nothing is stripped).
  EXPECT_EQ(t.NormalizedText("a <|lst|> b", false), "a <|lst|> b");
  // single_word: not matched when a word character touches it.
  const auto has = [](const std::vector<TokenId>& ids, TokenId id) {
    return std::find(ids.begin(), ids.end(), id) != ids.end();
  };
  EXPECT_TRUE(has(t.Encode("x <w> y"), w));
  EXPECT_TRUE(has(t.Encode("<w>."), w));
  EXPECT_FALSE(has(t.Encode("x<w>"), w));
  EXPECT_FALSE(has(t.Encode("<w>_"), w));
  EXPECT_FALSE(has(t.Encode("\xC3\xA9<w>"), w));    // é is a letter
  EXPECT_FALSE(has(t.Encode("e\xCC\x81<w>"), w));   // so is a combining mark
  EXPECT_TRUE(has(t.Encode("a <|lst|>", true), lst));
  EXPECT_TRUE(has(t.Encode("<|rst|> a", true), rst));
  // normalized: "Ån" also matches its decomposed and Angstrom-sign spellings.
  const TokenId an = v.FindToken("\xC3\x85n");
  EXPECT_EQ(t.Encode("A\xCC\x8An"), (std::vector<TokenId>{an}));
  EXPECT_EQ(t.Encode("\xE2\x84\xABn"), (std::vector<TokenId>{an}));
}

}  // namespace
}  // namespace cairn::tokenizer
