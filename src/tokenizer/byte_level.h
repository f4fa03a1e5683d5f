// GPT-2 byte-level alphabet: every byte 0..255 is shown as one printable code
// point, so byte-level BPE vocabularies store tokens as printable text
// ("Ġ" = space, "Ċ" = newline). Printable Latin-1 bytes map to themselves and
// the other 68 bytes to U+0100.. in byte order.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace cairn::tokenizer {

// Code point that represents byte `b`.
uint32_t ByteToCodePoint(uint8_t b);

// Byte represented by code point `cp`, or -1 when `cp` is not in the alphabet.
int CodePointToByte(uint32_t cp);

// Token text (byte-level alphabet) -> raw bytes. Code points outside the
// alphabet (e.g. in added tokens) are kept as their UTF-8 bytes.
std::string ByteLevelDecode(std::string_view token_text);

// Raw bytes -> byte-level alphabet text.
std::string ByteLevelEncode(std::string_view bytes);

}  // namespace cairn::tokenizer
