// Small hand-built vocabularies pin down the merge algorithms.
#include <gtest/gtest.h>

#include "core/error.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/tokenizer.h"

namespace cairn::tokenizer {
namespace {

// Byte-level vocabulary: all 256 bytes, then merged tokens.
Vocabulary ByteVocab(std::vector<std::string> extra, std::vector<std::string> merges) {
  Vocabulary v;
  v.model = ModelKind::kBpe;
  v.pre = "gpt-2";
  for (int b = 0; b < 256; ++b) v.tokens.push_back(ByteLevelEncode(std::string(1, char(b))));
  for (auto& t : extra) v.tokens.push_back(t);
  v.merges = std::move(merges);
  return v;
}

TEST(BpeSynthetic, MergesByRankLeftmostOnTies) {
  // Tokens: 256 "aa", 257 "aaa". "aaa" merges (a,a) leftmost first -> "aa"+"a",
  // then (aa,a) -> "aaa".
  const Tokenizer t(ByteVocab({"aa", "aaa"}, {"a a", "aa a"}));
  EXPECT_EQ(t.Encode("aaa"), (std::vector<TokenId>{257}));
  EXPECT_EQ(t.Encode("aaaa"), (std::vector<TokenId>{256, 256}));
  EXPECT_EQ(t.Encode("aaaaa"), (std::vector<TokenId>{256, 257}) );
}

TEST(BpeSynthetic, LowerRankWins) {
  // "abc": (b,c) has rank 0, (a,b) rank 1 -> a + bc.
  const Tokenizer t(ByteVocab({"ab", "bc"}, {"b c", "a b"}));
  EXPECT_EQ(t.Encode("abc"), (std::vector<TokenId>{'a', 257}));
}

TEST(BpeSynthetic, SpaceIsByteLevelMapped) {
  const Tokenizer t(ByteVocab({"\xC4\xA0" "a"}, {"\xC4\xA0 a"}));
  EXPECT_EQ(t.Encode(" a"), (std::vector<TokenId>{256}));
  EXPECT_EQ(t.DecodeBytes(std::vector<TokenId>{256}), " a");
}

TEST(BpeSynthetic, IgnoreMergesEmitsWholeWord) {
  Vocabulary v = ByteVocab({"abc"}, {});
  v.ignore_merges = true;
  const Tokenizer t(std::move(v));
  EXPECT_EQ(t.Encode("abc"), (std::vector<TokenId>{256}));
}

TEST(BpeSynthetic, BadMetadataThrows) {
  Vocabulary v = ByteVocab({}, {"nospace"});
  EXPECT_THROW(Tokenizer{v}, Error);
  Vocabulary w = ByteVocab({}, {});
  w.eos = 100000;
  EXPECT_THROW(Tokenizer{w}, Error);
  Vocabulary x = ByteVocab({}, {});
  x.pre = "unknown-pre";
  EXPECT_THROW(Tokenizer{x}, Error);
  Vocabulary y = ByteVocab({}, {});
  y.types.assign(3, TokenType::kNormal);
  EXPECT_THROW(Tokenizer{y}, Error);
  const Tokenizer ok(ByteVocab({}, {}));
  EXPECT_THROW(ok.TokenToBytes(9999), Error);
  EXPECT_THROW(ok.Decode(std::vector<TokenId>{-1}), Error);
}

// SentencePiece vocabulary: <unk>, <s>, </s>, 256 byte tokens, then pieces.
Vocabulary SpmVocab() {
  Vocabulary v;
  v.model = ModelKind::kSpm;
  v.add_space_prefix = true;
  v.add_bos = true;
  v.tokens = {"<unk>", "<s>", "</s>"};
  v.types = {TokenType::kUnknown, TokenType::kControl, TokenType::kControl};
  v.scores = {0, 0, 0};
  v.unk = 0;
  v.bos = 1;
  v.eos = 2;
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    v.tokens.push_back(name);
    v.types.push_back(TokenType::kByte);
    v.scores.push_back(0);
  }
  const std::vector<std::pair<std::string, float>> pieces = {
      {"\xE2\x96\x81", -1}, {"h", -2}, {"e", -2}, {"l", -2}, {"o", -2},
      {"\xE2\x96\x81h", -3}, {"ll", -4}, {"\xE2\x96\x81he", -5}, {"llo", -6},
      {"\xE2\x96\x81hello", -7}, {"\xE2\x96\x81hell", -8}};
  for (const auto& [text, score] : pieces) {
    v.tokens.push_back(text);
    v.types.push_back(TokenType::kNormal);
    v.scores.push_back(score);
  }
  return v;
}

TEST(SpmSynthetic, ScoresSpacePrefixAndByteFallback) {
  const Tokenizer t(SpmVocab());
  const TokenId base = 3 + 256;
  // "▁hello": ▁h(-3) first, then ll(-4), ▁he(-5), llo(-6), ▁hello(-7).
  EXPECT_EQ(t.Encode("hello"), (std::vector<TokenId>{base + 9}));
  // Unknown "z" falls back to its byte token <0x7A>.
  EXPECT_EQ(t.Encode("hez"), (std::vector<TokenId>{base + 7, 3 + 'z'}));
  EXPECT_EQ(t.Decode(t.Encode("hello hez")), "hello hez");
  EXPECT_EQ(t.Encode("h", false, true), (std::vector<TokenId>{1, base + 5}));
  // Control tokens in text: only with parse_special; a space prefix follows them.
  EXPECT_EQ(t.Encode("<s>h", true), (std::vector<TokenId>{1, base + 5}));
}

}  // namespace
}  // namespace cairn::tokenizer
