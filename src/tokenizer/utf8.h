// UTF-8 helpers shared by the tokenizers and the detokenizers.
//
// Tokenizer input is treated as a byte string: valid UTF-8 is the normal case,
// but nothing here assumes it (byte-level BPE must encode any bytes). These
// helpers decode leniently (an invalid byte is one "code point" of its own) so
// that splitting never loses or duplicates bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cairn::tokenizer {

// Length of the UTF-8 sequence announced by lead byte `b` (1 for ASCII and for
// bytes that cannot start a sequence, so callers always make progress).
inline size_t Utf8SequenceLength(uint8_t b) {
  if (b < 0xC0) return 1;  // ASCII or a stray continuation byte
  if (b < 0xE0) return 2;
  if (b < 0xF0) return 3;
  if (b < 0xF8) return 4;
  return 1;
}

// Length of the valid UTF-8 sequence starting at text[pos], or 0 when the bytes
// there are not a complete, well-formed sequence (overlongs, surrogates and
// code points above U+10FFFF are rejected, as by the Unicode standard).
size_t ValidUtf8SequenceAt(std::string_view text, size_t pos);

// True when `text` is entirely well-formed UTF-8.
bool IsValidUtf8(std::string_view text);

// Number of bytes at the end of `text` that form an incomplete-but-so-far
// valid UTF-8 sequence (0..3): a streaming decoder must wait for more bytes
// before emitting them.
size_t IncompleteUtf8Tail(std::string_view text);

// Replaces every ill-formed byte sequence by U+FFFD (one per maximal invalid
// subpart, as Python's errors="replace" and HF's decoders do).
std::string SanitizeUtf8(std::string_view text);

// Appends the UTF-8 encoding of code point `cp` (must be <= 0x10FFFF).
void AppendUtf8(uint32_t cp, std::string& out);

// Decodes one code point at text[pos] into `cp` and returns its byte length;
// returns 0 (and leaves cp unspecified) when the sequence is invalid.
size_t DecodeUtf8At(std::string_view text, size_t pos, uint32_t& cp);

}  // namespace cairn::tokenizer
