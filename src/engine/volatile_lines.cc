#include "engine/volatile_lines.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

namespace cairn::engine {
namespace {

bool IsWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.';
}
bool IsHex(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0 || (c >= 'a' && c <= 'f'); }
bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// yyyy-mm-dd anywhere in the line.
bool HasDate(std::string_view line) {
  for (size_t i = 0; i + 10 <= line.size(); ++i) {
    if (IsDigit(line[i]) && IsDigit(line[i + 1]) && IsDigit(line[i + 2]) && IsDigit(line[i + 3]) &&
        line[i + 4] == '-' && IsDigit(line[i + 5]) && IsDigit(line[i + 6]) && line[i + 7] == '-' &&
        IsDigit(line[i + 8]) && IsDigit(line[i + 9])) {
      return true;
    }
  }
  return false;
}

// A run of >= 7 lowercase hex characters with a digit and a letter, not part
// of a longer word (a git hash, a content hash).
bool HasHexHash(std::string_view line) {
  size_t i = 0;
  while (i < line.size()) {
    if (!IsHex(line[i]) || (i > 0 && IsWordChar(line[i - 1]) && line[i - 1] != '.')) {
      ++i;
      continue;
    }
    size_t j = i;
    bool digit = false, letter = false;
    while (j < line.size() && IsHex(line[j])) {
      (IsDigit(line[j]) ? digit : letter) = true;
      ++j;
    }
    const bool bounded = j == line.size() || !std::isalnum(static_cast<unsigned char>(line[j]));
    if (j - i >= 7 && digit && letter && bounded) return true;
    i = j + 1;
  }
  return false;
}

// "/a/b" (two path segments after a slash that starts a token) or a relative
// "../a/b", "./a/b".
bool HasPath(std::string_view line) {
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '/') continue;
    const bool absolute = i == 0 || !(IsWordChar(line[i - 1]) || line[i - 1] == '/');
    const bool relative = (i >= 2 && line.substr(i - 2, 2) == ".." && (i == 2 || !IsWordChar(line[i - 3]))) ||
                          (i >= 1 && line[i - 1] == '.' && (i == 1 || !IsWordChar(line[i - 2])));
    if (!absolute && !relative) continue;
    size_t j = i + 1;
    while (j < line.size() && IsWordChar(line[j])) ++j;
    if (j > i + 1 && j + 1 < line.size() && line[j] == '/' && IsWordChar(line[j + 1])) return true;
  }
  return false;
}

int Score(std::string_view line) {
  const std::string lower = Lower(line);
  static constexpr std::array<std::string_view, 8> kHomes = {"/home/", "/users/", "/root/", "/tmp/",
                                                               "/var/folders/", "~/", "c:\\users\\", "/workspace"};
  static constexpr std::array<std::string_view, 10> kKeywords = {
      "working directory", "cwd", "current date", "today's date", "git status", "current branch",
      "is a git repo",     "<env>", "environment_context", "git commit"};
  for (std::string_view k : kHomes) {
    if (lower.find(k) != std::string::npos) return 2;
  }
  for (std::string_view k : kKeywords) {
    if (lower.find(k) != std::string::npos) return 2;
  }
  if (HasDate(line) || HasHexHash(line)) return 2;
  return HasPath(line) ? 1 : 0;
}

}  // namespace

std::vector<VolatileLine> FindVolatileLines(std::string_view text, size_t end) {
  std::vector<VolatileLine> out;
  end = std::min(end, text.size());
  size_t start = 0;
  while (start < end) {
    size_t stop = text.find('\n', start);
    if (stop == std::string_view::npos) stop = text.size();
    // Lines longer than this are prose or data, not an environment entry.
    const std::string_view line = text.substr(start, std::min<size_t>(stop - start, 512));
    if (const int score = Score(line); score > 0) out.push_back({start, score});
    start = stop + 1;
  }
  return out;
}

}  // namespace cairn::engine
