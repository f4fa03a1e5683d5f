// Tokenizer for Jinja2 template source, configured like Hugging Face's
// chat-template environment: trim_blocks=True, lstrip_blocks=True,
// keep_trailing_newline=False, default delimiters.
//
// Whitespace control ({%- -%}, {{- -}}, {#- -#}, {%+ +%}), trim_blocks and
// lstrip_blocks are resolved here, so the parser only sees the final text.
// Comments are dropped. Errors throw cairn::Error with line:column.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cairn::chat {

enum class TokenType : uint8_t {
  kText,        // literal template text (already whitespace-controlled)
  kVarBegin,    // {{
  kVarEnd,      // }}
  kBlockBegin,  // {%
  kBlockEnd,    // %}
  kName,
  kString,      // value is the decoded string
  kInt,
  kFloat,
  kOp,          // operator or punctuation, value is its spelling
  kEof,
};

struct Token {
  TokenType type = TokenType::kEof;
  std::string value;
  int line = 1;
  int column = 1;
};

// Maps a byte offset in the (newline-normalized) source to line:column.
class SourceMap {
 public:
  explicit SourceMap(std::string_view source);
  void Locate(size_t offset, int* line, int* column) const;

 private:
  std::vector<size_t> line_starts_;
};

// Normalizes newlines (\r\n and \r become \n) and removes one trailing newline,
// as Jinja2 does before lexing.
std::string NormalizeTemplateSource(std::string_view source);

// Tokenizes normalized source. Throws cairn::Error on unterminated tags,
// strings or comments, unbalanced brackets and stray characters.
std::vector<Token> Tokenize(std::string_view source);

}  // namespace cairn::chat
