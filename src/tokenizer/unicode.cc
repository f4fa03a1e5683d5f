#include "tokenizer/unicode.h"

#include <utf8proc.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <utility>

#include "core/error.h"
#include "tokenizer/utf8.h"

namespace cairn::tokenizer {
namespace {

// Combining marks (canonical combining class != 0 in utf8proc's Unicode 15)
// that Hugging Face tokenizers 0.23's NFC tables (an older Unicode) do not
// know: there they are inert starters, so no reordering or composition crosses
// them. Found by comparing both on every code point in the contexts "c",
// "a c U+0301", "c U+0316 U+0301", "U+0301 c" and "a U+0316 c U+0301".
constexpr std::array<std::pair<uint32_t, uint32_t>, 36> kHfInertMarks = {{
    {0x7FD, 0x7FD},     {0x898, 0x89F},     {0x8CA, 0x8D3},     {0x9FE, 0x9FE},
    {0xC3C, 0xC3C},     {0xD3B, 0xD3C},     {0xEBA, 0xEBA},     {0x1715, 0x1715},
    {0x1ABF, 0x1ACE},   {0x1DF6, 0x1DFA},   {0xA82C, 0xA82C},   {0x10D24, 0x10D27},
    {0x10EAB, 0x10EAC}, {0x10EFD, 0x10EFF}, {0x10F46, 0x10F50}, {0x10F82, 0x10F85},
    {0x11070, 0x11070}, {0x1133B, 0x1133B}, {0x1145E, 0x1145E}, {0x11839, 0x1183A},
    {0x1193D, 0x1193E}, {0x11943, 0x11943}, {0x119E0, 0x119E0}, {0x11A34, 0x11A34},
    {0x11A47, 0x11A47}, {0x11A99, 0x11A99}, {0x11D42, 0x11D42}, {0x11D44, 0x11D45},
    {0x11D97, 0x11D97}, {0x11F41, 0x11F42}, {0x16FF0, 0x16FF1}, {0x1E08F, 0x1E08F},
    {0x1E130, 0x1E136}, {0x1E2AE, 0x1E2AE}, {0x1E2EC, 0x1E2EF}, {0x1E4EC, 0x1E4EF},
}};

bool IsHfInertMark(uint32_t cp) {
  if (cp < kHfInertMarks.front().first) return false;
  const auto it = std::upper_bound(
      kHfInertMarks.begin(), kHfInertMarks.end(), cp,
      [](uint32_t value, const std::pair<uint32_t, uint32_t>& range) { return value < range.first; });
  return it != kHfInertMarks.begin() && cp <= std::prev(it)->second;
}

bool IsWhiteSpace(uint32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
         cp == 0x205F || cp == 0x3000;
}

bool IsWordChar(uint32_t cp) {
  if (cp == '_' || cp == 0x200C || cp == 0x200D) return true;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_MN: case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_PC:
      return true;
    default:
      return false;
  }
}

// Decodes the last code point of `text`: its byte length (0 when `text` does
// not end with a well-formed sequence).
size_t LastCodePoint(std::string_view text, uint32_t& cp) {
  for (size_t len = 1; len <= 4 && len <= text.size(); ++len) {
    const size_t pos = text.size() - len;
    if (DecodeUtf8At(text, pos, cp) == len) return len;
  }
  return 0;
}

// NFC of one well-formed UTF-8 run.
void AppendNfc(std::string_view run, std::string& out) {
  utf8proc_uint8_t* mapped = nullptr;
  const utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(run.data()),
                   static_cast<utf8proc_ssize_t>(run.size()), &mapped,
                   static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  if (n < 0) {  // cannot happen for validated input; keep the text rather than lose it
    out.append(run);
    return;
  }
  out.append(reinterpret_cast<const char*>(mapped), static_cast<size_t>(n));
  std::free(mapped);
}

}  // namespace

bool QuickCheckNormalized(Normalizer kind, std::string_view text) {
  if (kind == Normalizer::kNone) return true;
  for (char c : text) {
    if (static_cast<uint8_t>(c) >= 0xCC) return false;
  }
  return true;
}

namespace {

// NFC of `text`, split into maximal well-formed runs: ill-formed bytes pass
// through, and so do marks HF's tables lack (both end a run: nothing
// normalizes across them).
void AppendNfcRuns(std::string_view text, std::string& out) {
  size_t run_start = 0;
  size_t pos = 0;
  uint32_t cp = 0;
  while (pos < text.size()) {
    size_t len = DecodeUtf8At(text, pos, cp);
    if (len != 0 && !IsHfInertMark(cp)) {
      pos += len;
      continue;
    }
    len = std::max<size_t>(len, 1);
    if (pos > run_start) AppendNfc(text.substr(run_start, pos - run_start), out);
    out.append(text.substr(pos, len));
    pos += len;
    run_start = pos;
  }
  if (pos > run_start) AppendNfc(text.substr(run_start, pos - run_start), out);
}

// A code point below U+0300 (lead byte < 0xCC) never combines with what
// precedes it (it is a starter and no composition's second element), so NFC
// of a string splits before it: NFC(xy) = NFC(x) NFC(y). Bytes that cannot
// start such a character: continuation bytes and lead bytes >= 0xCC.
bool StartsLowCodePoint(uint8_t b) { return b < 0x80 || (b >= 0xC0 && b < 0xCC); }

}  // namespace

void AppendNormalized(Normalizer kind, std::string_view text, std::string& out) {
  if (kind == Normalizer::kNone) {
    out.append(text);
    return;
  }
  // Copy stretches of code points below U+0300 verbatim; run utf8proc only on
  // segments from the character before a higher code point to the next
  // split point. Mostly-ASCII text (code, English) thus skips utf8proc.
  const size_t n = text.size();
  size_t pos = 0;
  while (pos < n) {
    size_t high = pos;
    while (high < n && static_cast<uint8_t>(text[high]) < 0xCC) ++high;
    if (high == n) {
      out.append(text.substr(pos));
      return;
    }
    size_t begin = high;  // include the preceding character: it may be a base
    if (begin > pos) {
      --begin;
      while (begin > pos && high - begin < 4 && !StartsLowCodePoint(static_cast<uint8_t>(text[begin]))) {
        --begin;
      }
    }
    size_t end = high + 1;
    while (end < n && !StartsLowCodePoint(static_cast<uint8_t>(text[end]))) ++end;
    out.append(text.substr(pos, begin - pos));
    AppendNfcRuns(text.substr(begin, end - begin), out);
    pos = end;
  }
}

size_t WhiteSpaceSuffixLength(std::string_view text) {
  size_t end = text.size();
  uint32_t cp = 0;
  while (end > 0) {
    const size_t len = LastCodePoint(text.substr(0, end), cp);
    if (len == 0 || !IsWhiteSpace(cp)) break;
    end -= len;
  }
  return text.size() - end;
}

size_t WhiteSpacePrefixLength(std::string_view text) {
  size_t pos = 0;
  uint32_t cp = 0;
  while (pos < text.size()) {
    const size_t len = DecodeUtf8At(text, pos, cp);
    if (len == 0 || !IsWhiteSpace(cp)) break;
    pos += len;
  }
  return pos;
}

bool EndsWithWordChar(std::string_view text) {
  uint32_t cp = 0;
  return LastCodePoint(text, cp) != 0 && IsWordChar(cp);
}

bool StartsWithWordChar(std::string_view text) {
  uint32_t cp = 0;
  return DecodeUtf8At(text, 0, cp) != 0 && IsWordChar(cp);
}

}  // namespace cairn::tokenizer
