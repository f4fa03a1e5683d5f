#include "tokenizer/utf8.h"

#include <gtest/gtest.h>

#include "tokenizer/byte_level.h"

namespace cairn::tokenizer {
namespace {

TEST(Utf8, Validity) {
  EXPECT_TRUE(IsValidUtf8("plain ascii"));
  EXPECT_TRUE(IsValidUtf8("Cửa Việt 🦙 中文"));
  EXPECT_FALSE(IsValidUtf8("\xC0\x80"));          // overlong NUL
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xE4\xB8"));          // truncated
  EXPECT_FALSE(IsValidUtf8("\x80"));
}

TEST(Utf8, IncompleteTail) {
  EXPECT_EQ(IncompleteUtf8Tail("abc"), 0u);
  EXPECT_EQ(IncompleteUtf8Tail("a\xE4"), 1u);
  EXPECT_EQ(IncompleteUtf8Tail("a\xE4\xB8"), 2u);
  EXPECT_EQ(IncompleteUtf8Tail("a\xE4\xB8\xAD"), 0u);   // complete 中
  EXPECT_EQ(IncompleteUtf8Tail("\xF0\x9F\xA6"), 3u);    // 3 of 4 bytes of 🦙
  EXPECT_EQ(IncompleteUtf8Tail("\xE0\x80"), 0u);        // can never be valid
  EXPECT_EQ(IncompleteUtf8Tail("\x80\x80"), 0u);
}

TEST(Utf8, SanitizeReplacesMaximalSubparts) {
  EXPECT_EQ(SanitizeUtf8("ok"), "ok");
  EXPECT_EQ(SanitizeUtf8("a\xFF" "b"), "a\xEF\xBF\xBD" "b");
  // A truncated 3-byte sequence is one U+FFFD, as Python's errors="replace".
  EXPECT_EQ(SanitizeUtf8("\xE4\xB8" "x"), "\xEF\xBF\xBD" "x");
  EXPECT_EQ(SanitizeUtf8("\xC0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(ByteLevel, AlphabetRoundTrip) {
  for (int b = 0; b < 256; ++b) {
    EXPECT_EQ(CodePointToByte(ByteToCodePoint(static_cast<uint8_t>(b))), b);
  }
  EXPECT_EQ(ByteToCodePoint(' '), 0x120u);   // "Ġ"
  EXPECT_EQ(ByteToCodePoint('\n'), 0x10Au);  // "Ċ"
  EXPECT_EQ(ByteToCodePoint('A'), static_cast<uint32_t>('A'));
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  EXPECT_EQ(ByteLevelDecode(ByteLevelEncode(all)), all);
  EXPECT_EQ(ByteLevelEncode(" hi"), "\xC4\xA0hi");
}

}  // namespace
}  // namespace cairn::tokenizer
