#include "tokenizer/byte_level.h"

#include "tokenizer/utf8.h"

namespace cairn::tokenizer {
namespace {

// Bytes GPT-2 considers printable: '!'..'~', '¡'..'¬', '®'..'ÿ'.
constexpr bool IsPrintableByte(int b) {
  return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

struct Tables {
  std::array<uint32_t, 256> to_cp{};
  std::array<int16_t, 512> from_cp{};  // every alphabet code point is < 0x144
  Tables() {
    from_cp.fill(-1);
    uint32_t next = 0x100;
    for (int b = 0; b < 256; ++b) {
      to_cp[b] = IsPrintableByte(b) ? static_cast<uint32_t>(b) : next++;
      from_cp[to_cp[b]] = static_cast<int16_t>(b);
    }
  }
};

const Tables& GetTables() {
  static const Tables tables;
  return tables;
}

}  // namespace

uint32_t ByteToCodePoint(uint8_t b) { return GetTables().to_cp[b]; }

int CodePointToByte(uint32_t cp) {
  return cp < 512 ? GetTables().from_cp[cp] : -1;
}

std::string ByteLevelDecode(std::string_view token_text) {
  std::string out;
  out.reserve(token_text.size());
  for (size_t pos = 0; pos < token_text.size();) {
    uint32_t cp = 0;
    const size_t len = DecodeUtf8At(token_text, pos, cp);
    if (len == 0) {  // not UTF-8: keep the byte
      out.push_back(token_text[pos++]);
      continue;
    }
    const int b = CodePointToByte(cp);
    if (b >= 0) {
      out.push_back(static_cast<char>(b));
    } else {
      out.append(token_text.substr(pos, len));
    }
    pos += len;
  }
  return out;
}

std::string ByteLevelEncode(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) AppendUtf8(ByteToCodePoint(static_cast<uint8_t>(c)), out);
  return out;
}

}  // namespace cairn::tokenizer
