// Byte-at-a-time JSON pieces for streaming tool calls (tool_call_stream.h).
//
// JsonRewriter re-serializes one JSON value while it is generated: it checks
// the grammar and writes the value compactly, so a model's
//   {"path": "a.py",
//    "code": "x = 1<raw newline>"}
// streams out as {"path":"a.py","code":"x = 1\n"} in as many pieces as it
// was fed in. Output only ever stops at a point that Closer() can close into
// valid JSON: a key is written with the start of its value, a comma with the
// element after it, a number or literal once it is complete, an escape once
// all of it arrived. So a value that turns malformed (or is cut off) leaves
// text that `written + Closer()` makes whole.
//
// Lenient where models slip, strict elsewhere:
//   - a raw control character inside a string (newline, tab) is written as
//     its escape; other bytes pass through unchanged (input is UTF-8);
//   - an unknown escape keeps its backslash as a literal one ("\x" -> "\\x"),
//     except \' which becomes ' (Python habits);
//   - a lone UTF-16 surrogate escape becomes \ufffd (so the text stays
//     parseable);
//   - a trailing comma before } or ] is dropped.
// NaN, Infinity, single quotes, comments and unquoted keys are errors.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cairn::engine {

class JsonRewriter {
 public:
  enum class Step {
    kMore,        // byte consumed; the value goes on
    kDone,        // byte consumed; it completed the value
    kDoneBefore,  // the value (a top-level number) ended before this byte, which is not consumed
    kError,       // not JSON at this byte (not consumed); do not feed again
  };

  // Feeds one byte; appends what can be written now to `out`.
  Step Feed(char c, std::string& out);
  // Closes what was written so far ("\"}]"); "" when nothing is open.
  std::string Closer() const;
  // A non-whitespace byte was consumed (the value has begun).
  bool started() const { return started_; }

 private:
  enum class State { kValue, kObjectKey, kColon, kArrayItem, kAfterValue, kString, kNumber, kLiteral, kDone };

  Step BeginValue(char c, std::string& out);
  Step StringByte(char c, std::string& out);
  Step EndScalar();  // a string, number, literal or container ended
  void WriteEscape(std::string& target);
  void FlushSurrogate(std::string& target);

  State state_ = State::kValue;
  bool started_ = false;
  std::vector<char> stack_;  // open containers, '{' or '['
  std::string pending_;      // ",", "\"key\":" ...: written with the next value's first bytes
  std::string key_;          // the current key, escaped, until its value starts
  std::string token_;        // a number or literal being read, or a \u escape ("\\u12")
  bool in_key_ = false;      // the string being read is a key
  bool escape_ = false;      // after a backslash
  std::string surrogate_;    // a high-surrogate escape waiting for its low half
};

// Decodes the body of a JSON string (the bytes after its opening quote) byte
// by byte into UTF-8, with the same leniency as JsonRewriter (raw control
// characters kept, unknown escapes kept as the escaped character, lone
// surrogates as U+FFFD).
class JsonStringDecoder {
 public:
  // True when `c` was the closing quote.
  bool Feed(char c, std::string& out);

 private:
  void Flush(std::string& out);  // a held high surrogate with no low half

  bool escape_ = false;
  int hex_digits_ = -1;  // >= 0 while reading \uXXXX
  uint32_t code_ = 0;
  uint32_t high_ = 0;    // pending high surrogate
};

// `text` as the inside of a JSON string literal: ", \ and control characters
// escaped, every other byte unchanged (so pieces escape to the same bytes as
// the whole).
std::string EscapeJsonString(std::string_view text);

}  // namespace cairn::engine
