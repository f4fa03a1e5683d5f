#include "chat/strings.h"

#include <algorithm>

#include "chat/builtins.h"
#include "chat/value.h"

namespace cairn::chat {

bool IsPyWhitespace(char c) {
  // ASCII part of Python's str.isspace(): \t \n \v \f \r, \x1c-\x1f, space.
  unsigned char u = static_cast<unsigned char>(c);
  return u == ' ' || (u >= 0x09 && u <= 0x0d) || (u >= 0x1c && u <= 0x1f);
}

std::string PyStrip(std::string_view s, const std::string* chars, bool left, bool right) {
  if (chars == nullptr) {
    size_t b = 0, e = s.size();
    if (left) while (b < e && IsPyWhitespace(s[b])) ++b;
    if (right) while (e > b && IsPyWhitespace(s[e - 1])) --e;
    return std::string(s.substr(b, e - b));
  }
  std::vector<uint32_t> cps = DecodeUtf8(s);
  std::vector<uint32_t> set = DecodeUtf8(*chars);
  auto in_set = [&](uint32_t cp) { return std::find(set.begin(), set.end(), cp) != set.end(); };
  size_t b = 0, e = cps.size();
  if (left) while (b < e && in_set(cps[b])) ++b;
  if (right) while (e > b && in_set(cps[e - 1])) --e;
  std::string out;
  for (size_t i = b; i < e; ++i) AppendUtf8(cps[i], &out);
  return out;
}

std::vector<std::string> PySplit(std::string_view s, const std::string* sep, int64_t maxsplit,
                                 bool from_right) {
  std::vector<std::string> parts;
  if (sep == nullptr) {
    // Runs of whitespace; leading/trailing whitespace yields no empty parts.
    if (!from_right) {
      size_t i = 0;
      while (true) {
        while (i < s.size() && IsPyWhitespace(s[i])) ++i;
        if (i >= s.size()) break;
        if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
          size_t e = s.size();
          while (e > i && IsPyWhitespace(s[e - 1])) --e;
          parts.emplace_back(s.substr(i, e - i));
          break;
        }
        size_t j = i;
        while (j < s.size() && !IsPyWhitespace(s[j])) ++j;
        parts.emplace_back(s.substr(i, j - i));
        i = j;
      }
    } else {
      size_t i = s.size();
      while (true) {
        while (i > 0 && IsPyWhitespace(s[i - 1])) --i;
        if (i == 0) break;
        if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
          size_t b = 0;
          while (b < i && IsPyWhitespace(s[b])) ++b;
          parts.emplace_back(s.substr(b, i - b));
          break;
        }
        size_t j = i;
        while (j > 0 && !IsPyWhitespace(s[j - 1])) --j;
        parts.emplace_back(s.substr(j, i - j));
        i = j;
      }
      std::reverse(parts.begin(), parts.end());
    }
    return parts;
  }
  const std::string& d = *sep;
  if (!from_right) {
    size_t start = 0;
    while (true) {
      size_t at = s.find(d, start);
      if (at == std::string_view::npos ||
          (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit)) {
        parts.emplace_back(s.substr(start));
        break;
      }
      parts.emplace_back(s.substr(start, at - start));
      start = at + d.size();
    }
  } else {
    size_t end = s.size();
    while (true) {
      size_t at = end >= d.size() ? s.rfind(d, end - d.size()) : std::string_view::npos;
      if (at == std::string_view::npos ||
          (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit)) {
        parts.emplace_back(s.substr(0, end));
        break;
      }
      parts.emplace_back(s.substr(at + d.size(), end - at - d.size()));
      end = at;
    }
    std::reverse(parts.begin(), parts.end());
  }
  return parts;
}

std::string PyReplace(std::string_view s, std::string_view old, std::string_view replacement,
                      int64_t count) {
  std::string out;
  if (old.empty()) {
    // Python inserts the replacement before every code point and at the end.
    std::vector<uint32_t> cps = DecodeUtf8(s);
    int64_t done = 0;
    for (uint32_t cp : cps) {
      if (count < 0 || done < count) {
        out.append(replacement);
        ++done;
      }
      AppendUtf8(cp, &out);
    }
    if (count < 0 || done < count) out.append(replacement);
    return out;
  }
  size_t start = 0;
  int64_t done = 0;
  while (count < 0 || done < count) {
    size_t at = s.find(old, start);
    if (at == std::string_view::npos) break;
    out.append(s.substr(start, at - start));
    out.append(replacement);
    start = at + old.size();
    ++done;
  }
  out.append(s.substr(start));
  return out;
}

std::vector<std::string> PySplitLines(std::string_view s, bool keepends) {
  std::vector<std::string> lines;
  size_t start = 0, i = 0;
  while (i < s.size()) {
    size_t eol = 0;
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '\r' && i + 1 < s.size() && s[i + 1] == '\n') eol = 2;
    else if (c == '\n' || c == '\r' || c == '\v' || c == '\f' || (c >= 0x1c && c <= 0x1e)) eol = 1;
    if (eol == 0) {
      ++i;
      continue;
    }
    lines.emplace_back(s.substr(start, (keepends ? i + eol : i) - start));
    i += eol;
    start = i;
  }
  if (start < s.size()) lines.emplace_back(s.substr(start));
  return lines;
}

std::string PyUpper(std::string_view s) {
  std::string out(s);
  for (char& c : out) if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
  return out;
}

std::string PyLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  return out;
}

std::string PyCapitalize(std::string_view s) {
  std::string out = PyLower(s);
  if (!out.empty() && out[0] >= 'a' && out[0] <= 'z') out[0] = static_cast<char>(out[0] - 32);
  return out;
}

std::string PyTitle(std::string_view s) {
  std::string out(s);
  bool prev_cased = false;
  for (char& c : out) {
    bool lower = c >= 'a' && c <= 'z';
    bool upper = c >= 'A' && c <= 'Z';
    if (lower && !prev_cased) c = static_cast<char>(c - 32);
    else if (upper && prev_cased) c = static_cast<char>(c + 32);
    prev_cased = lower || upper || static_cast<unsigned char>(c) >= 0x80;
  }
  return out;
}

int64_t CodePointIndex(std::string_view s, size_t byte_offset) {
  int64_t n = 0;
  for (size_t i = 0; i < byte_offset && i < s.size(); ++i) {
    n += (static_cast<unsigned char>(s[i]) & 0xC0) != 0x80;
  }
  return n;
}

}  // namespace cairn::chat
