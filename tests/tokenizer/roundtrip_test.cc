// decode(encode(s)) == the text the model sees: byte-level BPE must
// round-trip any bytes exactly up to the vocabulary's normalizer (Qwen3: NFC on
// well-formed runs), and streaming detokenization must reproduce the same text.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

#include "test_vocab.h"
#include "tokenizer/streaming_detokenizer.h"
#include "tokenizer/utf8.h"

namespace cairn::tokenizer {
namespace {

int Iterations(int normal) {
  const char* sanitized = std::getenv("CAIRN_SANITIZED");
  return (sanitized != nullptr && sanitized[0] == '1') ? normal / 10 : normal;
}

std::string RandomUtf8(std::mt19937& rng, size_t n_chars) {
  std::string s;
  for (size_t i = 0; i < n_chars; ++i) {
    const uint32_t r = rng() % 100;
    uint32_t cp;
    if (r < 50) {
      cp = 0x20 + rng() % 0x5F;
    } else if (r < 60) {
      cp = "\t\n\r \x0b\x0c"[rng() % 6];
    } else if (r < 80) {
      cp = 0x80 + rng() % (0x800 - 0x80);
    } else if (r < 95) {
      cp = 0x800 + rng() % (0x10000 - 0x800);
    } else {
      cp = 0x10000 + rng() % (0x110000 - 0x10000);
    }
    if (cp >= 0xD800 && cp <= 0xDFFF) cp = 'x';
    AppendUtf8(cp, s);
  }
  return s;
}

TEST(RoundTrip, RandomValidUtf8) {
  const Tokenizer& t = test::Qwen3();
  std::mt19937 rng(1234);
  for (int i = 0; i < Iterations(2000); ++i) {
    const std::string s = RandomUtf8(rng, rng() % 200);
    const auto ids = t.Encode(s);
    ASSERT_EQ(t.Decode(ids), t.NormalizedText(s));
    // Parsing special tokens too: rendering them restores the text.
    ASSERT_EQ(t.DecodeBytes(t.Encode(s, true), true), t.NormalizedText(s, true));
  }
}

TEST(RoundTrip, RandomBytesIncludingInvalidUtf8) {
  const Tokenizer& t = test::Qwen3();
  std::mt19937 rng(99);
  for (int i = 0; i < Iterations(2000); ++i) {
    std::string s(rng() % 64, '\0');
    for (char& c : s) c = static_cast<char>(rng());
    ASSERT_EQ(t.DecodeBytes(t.Encode(s)), t.NormalizedText(s));
  }
}

TEST(RoundTrip, StreamingEqualsDecode) {
  const Tokenizer& t = test::Qwen3();
  std::mt19937 rng(7);
  for (int i = 0; i < Iterations(500); ++i) {
    const std::string s = RandomUtf8(rng, rng() % 100) + "🦙😶‍🌫️中文";
    const auto ids = t.Encode(s);
    StreamingDetokenizer stream(t);
    std::string out;
    for (TokenId id : ids) {
      const std::string piece = stream.Push(id);
      ASSERT_TRUE(IsValidUtf8(piece));
      out += piece;
    }
    out += stream.Flush();
    ASSERT_EQ(out, t.NormalizedText(s));
  }
}

TEST(RoundTrip, NfcOnlyChangesNonNfcText) {
  const Tokenizer& t = test::Qwen3();
  // Decomposed "é" (e + U+0301) is tokenized as the precomposed U+00E9.
  EXPECT_EQ(t.NormalizedText("caf\x65\xCC\x81"), "caf\xC3\xA9");
  EXPECT_EQ(t.Encode("caf\x65\xCC\x81"), t.Encode("caf\xC3\xA9"));
  // Ill-formed bytes pass through; NFC applies to the well-formed runs around them.
  EXPECT_EQ(t.NormalizedText("e\xCC\x81\xFF" "e\xCC\x81"), "\xC3\xA9\xFF\xC3\xA9");
  // An invalid byte between base and mark blocks composition.
  EXPECT_EQ(t.NormalizedText("e\xFF\xCC\x81"), "e\xFF\xCC\x81");
  // Special tokens split first: ">" + U+0338 would compose to U+226F, but not across
  // a recognised special token.
  EXPECT_EQ(t.NormalizedText("<|im_end|>\xCC\xB8", true), "<|im_end|>\xCC\xB8");
  EXPECT_EQ(t.NormalizedText("<|im_end|>\xCC\xB8", false), "<|im_end|\xE2\x89\xAF");
}

TEST(StreamingDetokenizer, HoldsBackPartialCharacters) {
  const Tokenizer& t = test::Qwen3();
  // " 🦙" is three byte-level tokens: " \xF0\x9F", "\xA6", "\x99".
  const auto ids = t.Encode(" 🦙");
  ASSERT_EQ(ids.size(), 3u);
  StreamingDetokenizer stream(t);
  EXPECT_EQ(stream.Push(ids[0]), " ");
  EXPECT_EQ(stream.pending_bytes(), 2u);
  EXPECT_EQ(stream.Push(ids[1]), "");
  EXPECT_EQ(stream.Push(ids[2]), "🦙");
  EXPECT_EQ(stream.Flush(), "");
  // An unfinished character at the end becomes U+FFFD on flush.
  EXPECT_EQ(stream.Push(ids[0]), " ");
  EXPECT_EQ(stream.Flush(), "\xEF\xBF\xBD");
}

TEST(StreamingDetokenizer, ControlTokensHiddenUnlessRendered) {
  const Tokenizer& t = test::Qwen3();
  StreamingDetokenizer hidden(t);
  EXPECT_EQ(hidden.Push(151645), "");
  StreamingDetokenizer shown(t, /*render_special=*/true);
  EXPECT_EQ(shown.Push(151645), "<|im_end|>");
}

}  // namespace
}  // namespace cairn::tokenizer
