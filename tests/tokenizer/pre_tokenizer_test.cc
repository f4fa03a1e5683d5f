#include "tokenizer/pre_tokenizer.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace cairn::tokenizer {
namespace {

std::vector<std::string> Split(std::string_view pre, std::string_view text) {
  const PreTokenizer p(PreTokenizerPatterns(pre));
  std::vector<std::string_view> views;
  p.Split(text, views);
  std::string joined;
  std::vector<std::string> out;
  for (auto v : views) {
    joined += v;
    out.emplace_back(v);
  }
  EXPECT_EQ(joined, text) << "pieces must cover the text exactly";
  return out;
}

using V = std::vector<std::string>;

TEST(PreTokenizer, Qwen2Basics) {
  EXPECT_EQ(Split("qwen2", "Hello world"), (V{"Hello", " world"}));
  EXPECT_EQ(Split("qwen2", "I've 123"), (V{"I", "'ve", " ", "1", "2", "3"}));
  EXPECT_EQ(Split("qwen2", "a  b"), (V{"a", " ", " b"}));  // \s+(?!\S) backs off one space
  EXPECT_EQ(Split("qwen2", "x\n\n  y"), (V{"x", "\n\n", " ", " y"}));
  EXPECT_EQ(Split("qwen2", "'S 'RE"), (V{"'S", " '", "RE"}));
}

TEST(PreTokenizer, WhiteSpaceIncludesNextLine) {
  // Oniguruma's \s (used by HF) includes U+0085; PCRE2's does not.
  EXPECT_EQ(Split("qwen2", "a\xC2\x85\xC2\x85" "b"), (V{"a", "\xC2\x85", "\xC2\x85" "b"}));
}

TEST(PreTokenizer, Llama3GroupsThreeDigits) {
  EXPECT_EQ(Split("llama3", "12345"), (V{"123", "45"}));
}

TEST(PreTokenizer, Gpt2AndSequences) {
  EXPECT_EQ(Split("gpt-2", "Hello, world!"), (V{"Hello", ",", " world", "!"}));
  // starcoder: digits split first, each regex sees one piece.
  EXPECT_EQ(Split("starcoder", "ab12"), (V{"ab", "1", "2"}));
  EXPECT_EQ(Split("deepseek-coder", "a\nb"), (V{"a", "\n", "b"}));
}

TEST(PreTokenizer, Qwen35JoinsCombiningMarks) {
  // "q" + U+0301: a mark with no precomposed form.
  EXPECT_EQ(Split("qwen35", "q\xCC\x81x y"), (V{"q\xCC\x81x", " y"}));
  EXPECT_EQ(Split("qwen2", "q\xCC\x81x y"), (V{"q", "\xCC\x81x", " y"}));
}

TEST(PreTokenizer, InvalidUtf8IsKeptNotDropped) {
  const auto pieces = Split("qwen2", "ab\xFF\xFE cd\xE4");
  EXPECT_FALSE(pieces.empty());
}

TEST(PreTokenizer, LongWhitespaceRun) {
  const std::string run(200000, ' ');
  const auto pieces = Split("qwen2", run + "x");
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(pieces[1], " x");
}

TEST(PreTokenizer, AllKnownIdsCompile) {
  for (const char* pre : {"default", "gpt-2", "mpt", "llama3", "llama-bpe", "qwen2", "qwen35",
                          "deepseek-llm", "deepseek-coder", "falcon", "starcoder", "refact"}) {
    EXPECT_NO_THROW(PreTokenizer p(PreTokenizerPatterns(pre))) << pre;
  }
  EXPECT_THROW(PreTokenizerPatterns("no-such-pre"), Error);
}

TEST(PreTokenizer, ExpandWhitespaceClasses) {
  EXPECT_EQ(ExpandWhitespaceClasses("a\\sb").find("\\s"), std::string::npos);
  EXPECT_NE(ExpandWhitespaceClasses("[^\\s\\p{L}]").find("[^\\t-\\r"), std::string::npos);
  EXPECT_EQ(ExpandWhitespaceClasses("\\\\s"), "\\\\s");  // escaped backslash, then 's'
}

}  // namespace
}  // namespace cairn::tokenizer
