// Python str operations over UTF-8 (internal to src/chat), shared by the
// filters and the string methods so `x|trim` and `x.strip()` agree.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cairn::chat {

// str.strip/lstrip/rstrip; `chars` null means whitespace.
std::string PyStrip(std::string_view s, const std::string* chars, bool left, bool right);
// str.split / str.rsplit; `sep` null means runs of whitespace.
std::vector<std::string> PySplit(std::string_view s, const std::string* sep, int64_t maxsplit,
                                 bool from_right);
// str.replace with Python's empty-`old` behaviour; count < 0 means all.
std::string PyReplace(std::string_view s, std::string_view old, std::string_view replacement,
                      int64_t count);
// str.splitlines(keepends).
std::vector<std::string> PySplitLines(std::string_view s, bool keepends);
// ASCII case mapping (templates only case-map ASCII markers such as types).
std::string PyUpper(std::string_view s);
std::string PyLower(std::string_view s);
std::string PyCapitalize(std::string_view s);
std::string PyTitle(std::string_view s);  // str.title()
// Code-point index of a byte offset.
int64_t CodePointIndex(std::string_view s, size_t byte_offset);

}  // namespace cairn::chat
