#include "tokenizer/utf8.h"

namespace cairn::tokenizer {

size_t DecodeUtf8At(std::string_view text, size_t pos, uint32_t& cp) {
  const size_t n = text.size();
  if (pos >= n) return 0;
  const auto b0 = static_cast<uint8_t>(text[pos]);
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  }
  size_t len;
  uint32_t min_cp;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2, cp = b0 & 0x1F, min_cp = 0x80;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3, cp = b0 & 0x0F, min_cp = 0x800;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4, cp = b0 & 0x07, min_cp = 0x10000;
  } else {
    return 0;  // continuation byte, C0/C1 overlong lead, or F5..FF
  }
  if (pos + len > n) return 0;
  for (size_t i = 1; i < len; ++i) {
    const auto b = static_cast<uint8_t>(text[pos + i]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min_cp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

size_t ValidUtf8SequenceAt(std::string_view text, size_t pos) {
  uint32_t cp;
  return DecodeUtf8At(text, pos, cp);
}

bool IsValidUtf8(std::string_view text) {
  for (size_t pos = 0; pos < text.size();) {
    const size_t len = ValidUtf8SequenceAt(text, pos);
    if (len == 0) return false;
    pos += len;
  }
  return true;
}

namespace {

// Second-byte range allowed after lead byte b0 (Unicode Table 3-7), so that a
// prefix is only "incomplete" if some continuation could make it valid.
bool SecondByteOk(uint8_t b0, uint8_t b1) {
  if (b0 == 0xE0) return b1 >= 0xA0 && b1 <= 0xBF;
  if (b0 == 0xED) return b1 >= 0x80 && b1 <= 0x9F;
  if (b0 == 0xF0) return b1 >= 0x90 && b1 <= 0xBF;
  if (b0 == 0xF4) return b1 >= 0x80 && b1 <= 0x8F;
  return (b1 & 0xC0) == 0x80;
}

size_t ExpectedLength(uint8_t b0) {
  if (b0 >= 0xC2 && b0 <= 0xDF) return 2;
  if (b0 >= 0xE0 && b0 <= 0xEF) return 3;
  if (b0 >= 0xF0 && b0 <= 0xF4) return 4;
  return 0;
}

// Length of the maximal prefix of a valid sequence starting at pos (at least
// 1): the unit that gets one U+FFFD when the sequence is cut short.
size_t MaximalInvalidSubpart(std::string_view text, size_t pos) {
  const auto b0 = static_cast<uint8_t>(text[pos]);
  const size_t want = ExpectedLength(b0);
  if (want == 0) return 1;
  size_t i = 1;
  while (i < want && pos + i < text.size()) {
    const auto b = static_cast<uint8_t>(text[pos + i]);
    const bool ok = (i == 1) ? SecondByteOk(b0, b) : (b & 0xC0) == 0x80;
    if (!ok) break;
    ++i;
  }
  return i;
}

}  // namespace

size_t IncompleteUtf8Tail(std::string_view text) {
  const size_t n = text.size();
  // A sequence is at most 4 bytes, so an incomplete one starts in the last 3.
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    const auto b = static_cast<uint8_t>(text[n - back]);
    if ((b & 0xC0) == 0x80) continue;  // continuation byte: keep looking back
    const size_t want = ExpectedLength(b);
    if (want <= back) return 0;  // ASCII, invalid lead, or already complete
    // Only hold back if what we have could still become valid.
    return MaximalInvalidSubpart(text, n - back) == back ? back : 0;
  }
  return 0;
}

std::string SanitizeUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const size_t len = ValidUtf8SequenceAt(text, pos);
    if (len > 0) {
      out.append(text.substr(pos, len));
      pos += len;
    } else {
      out.append("\xEF\xBF\xBD");
      pos += MaximalInvalidSubpart(text, pos);
    }
  }
  return out;
}

void AppendUtf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace cairn::tokenizer
