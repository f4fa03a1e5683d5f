// NFC normalization and the character classes of HF's added-token options.
#include "tokenizer/unicode.h"

#include <gtest/gtest.h>
#include <utf8proc.h>

#include <cstdlib>
#include <random>

#include "tokenizer/utf8.h"

namespace cairn::tokenizer {
namespace {

std::string Nfc(std::string_view text) {
  std::string out;
  AppendNormalized(Normalizer::kNfc, text, out);
  return out;
}

// utf8proc on the whole string at once (valid UTF-8 only): the reference.
std::string WholeNfc(const std::string& text) {
  utf8proc_uint8_t* mapped = utf8proc_NFC(reinterpret_cast<const utf8proc_uint8_t*>(text.c_str()));
  std::string out(reinterpret_cast<const char*>(mapped));
  std::free(mapped);
  return out;
}

TEST(Unicode, NfcComposesReordersAndKeepsInvalidBytes) {
  EXPECT_EQ(Nfc("cafe\xCC\x81"), "caf\xC3\xA9");                       // e + U+0301 -> é
  EXPECT_EQ(Nfc("\xE1\x84\x92\xE1\x85\xA1\xE1\x86\xAB"), "\xED\x95\x9C");  // jamo -> 한
  EXPECT_EQ(Nfc("\xE2\x84\xAB"), "\xC3\x85");                           // Angstrom sign -> Å
  // a + U+0301 (ccc 230) + U+0316 (ccc 220): reordered, then composed.
  EXPECT_EQ(Nfc("a\xCC\x81\xCC\x96"), "\xC3\xA1\xCC\x96");
  EXPECT_EQ(Nfc("plain ASCII stays"), "plain ASCII stays");
  EXPECT_EQ(Nfc("\xFF" "e\xCC\x81\xC3"), "\xFF\xC3\xA9\xC3");
  EXPECT_EQ(Nfc(""), "");
  std::string none;
  AppendNormalized(Normalizer::kNone, "e\xCC\x81", none);
  EXPECT_EQ(none, "e\xCC\x81");
  EXPECT_FALSE(QuickCheckNormalized(Normalizer::kNfc, "e\xCC\x81"));
  EXPECT_TRUE(QuickCheckNormalized(Normalizer::kNfc, "caf\xC3\xA9"));  // below U+0300
}

TEST(Unicode, MarksNewerThanHfTablesAreInert) {
  // U+1DF6 (ccc 232 since Unicode 10) is unknown to HF tokenizers' NFC: it
  // must not be reordered after U+0316, as a newer utf8proc would do.
  EXPECT_EQ(Nfc("a\xE1\xB7\xB6\xCC\x96"), "a\xE1\xB7\xB6\xCC\x96");
  EXPECT_EQ(WholeNfc("a\xE1\xB7\xB6\xCC\x96"), "a\xCC\x96\xE1\xB7\xB6");
  // Marks after it still compose with nothing; before it, text is normalized.
  EXPECT_EQ(Nfc("e\xCC\x81\xE1\xB7\xB6"), "\xC3\xA9\xE1\xB7\xB6");
}

// The chunked fast path (verbatim copies of code points below U+0300) must
// agree with normalizing the whole string.
TEST(Unicode, ChunkedNfcEqualsWholeStringNfc) {
  const uint32_t pool[] = {'a', 'e', ' ', '\n', 0xE9, 0x2C6, 0x300, 0x301, 0x316, 0x327, 0x338,
                           '>', '=', 0x3B1, 0x345, 0x1100, 0x1161, 0x11A8, 0xAC00, 0x4E2D, 0x212B,
                           0x1F600, 0x200D, 0xFE0F, 0x0F73, 0x0344, 0x2FF, 0x2B0};
  std::mt19937 rng(5);
  for (int i = 0; i < 3000; ++i) {
    std::string s;
    const size_t n = rng() % 24;
    for (size_t k = 0; k < n; ++k) AppendUtf8(pool[rng() % std::size(pool)], s);
    ASSERT_EQ(Nfc(s), WholeNfc(s)) << "case " << i;
  }
}

TEST(Unicode, WhiteSpaceAndWordCharacters) {
  EXPECT_EQ(WhiteSpaceSuffixLength("ab \t\xE3\x80\x80"), 5u);  // space, tab, U+3000
  EXPECT_EQ(WhiteSpaceSuffixLength("ab"), 0u);
  EXPECT_EQ(WhiteSpaceSuffixLength("\xC2\x85\xC2\xA0"), 4u);  // U+0085, U+00A0
  EXPECT_EQ(WhiteSpacePrefixLength(" \n\xE2\x80\x83x "), 5u);  // U+2003
  EXPECT_EQ(WhiteSpacePrefixLength("\xFF "), 0u);
  EXPECT_TRUE(EndsWithWordChar("x_"));
  EXPECT_TRUE(EndsWithWordChar("\xE4\xB8\xAD"));       // 中
  EXPECT_TRUE(EndsWithWordChar("e\xCC\x81"));          // combining mark
  EXPECT_TRUE(EndsWithWordChar("\xD9\xA3"));           // Arabic-Indic digit
  EXPECT_FALSE(EndsWithWordChar("x-"));
  EXPECT_FALSE(EndsWithWordChar("x\xF0\x9F\xA6\x99"));  // emoji
  EXPECT_FALSE(EndsWithWordChar(""));
  EXPECT_TRUE(StartsWithWordChar("9"));
  EXPECT_FALSE(StartsWithWordChar(" x"));
  EXPECT_FALSE(StartsWithWordChar("\xCC"));  // truncated sequence
}

}  // namespace
}  // namespace cairn::tokenizer
