#include "chat/lexer.h"

#include <algorithm>

#include "chat/value.h"
#include "core/error.h"

namespace cairn::chat {
namespace {

// Python's str.isspace() over ASCII; templates only use ASCII whitespace.
bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool IsNameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         (static_cast<unsigned char>(c) >= 0x80);
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsNameChar(char c) { return IsNameStart(c) || IsDigit(c); }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Lexer {
 public:
  explicit Lexer(std::string_view source) : src_(source), map_(source) {}

  std::vector<Token> Run() {
    size_t pos = 0;
    bool line_starting = true;  // previous match ended with a newline
    while (pos < src_.size()) {
      size_t tag = FindTagStart(pos);
      std::string_view text = src_.substr(pos, tag - pos);
      if (tag == src_.size()) {
        Emit(TokenType::kText, std::string(text), pos);
        break;
      }
      char kind = src_[tag + 1];  // '{', '%' or '#'
      char sign = tag + 2 < src_.size() ? src_[tag + 2] : '\0';
      if (sign != '-' && sign != '+') sign = '\0';
      if (sign == '-') {
        size_t end = text.size();
        while (end > 0 && IsSpace(text[end - 1])) --end;
        text = text.substr(0, end);
      } else if (sign != '+' && kind != '{') {
        // lstrip_blocks: drop the indentation before a block or comment tag
        // that starts its line.
        size_t nl = text.rfind('\n');
        size_t l_pos = nl == std::string_view::npos ? 0 : nl + 1;
        if ((l_pos > 0 || line_starting) && l_pos < text.size() &&
            std::all_of(text.begin() + static_cast<std::ptrdiff_t>(l_pos), text.end(), IsSpace)) {
          text = text.substr(0, l_pos);
        }
      }
      if (!text.empty()) Emit(TokenType::kText, std::string(text), pos);
      size_t body = tag + 2 + (sign != '\0' ? 1 : 0);
      if (kind == '#') {
        pos = SkipComment(tag, body);
      } else {
        pos = LexTag(tag, body, kind == '%');
      }
      line_starting = pos > 0 && src_[pos - 1] == '\n';
    }
    Token eof;
    eof.type = TokenType::kEof;
    Locate(src_.size(), &eof);
    tokens_.push_back(std::move(eof));
    return std::move(tokens_);
  }

 private:
  size_t FindTagStart(size_t pos) const {
    while (true) {
      size_t at = src_.find('{', pos);
      if (at == std::string_view::npos || at + 1 >= src_.size()) return src_.size();
      char next = src_[at + 1];
      if (next == '{' || next == '%' || next == '#') return at;
      pos = at + 1;
    }
  }

  [[noreturn]] void ErrorAt(size_t offset, const std::string& message) const {
    int line = 0, column = 0;
    map_.Locate(offset, &line, &column);
    Fail("template syntax error at {}:{}: {}", line, column, message);
  }

  void Locate(size_t offset, Token* token) const { map_.Locate(offset, &token->line, &token->column); }

  void Emit(TokenType type, std::string value, size_t offset) {
    Token token;
    token.type = type;
    token.value = std::move(value);
    Locate(offset, &token);
    tokens_.push_back(std::move(token));
  }

  // Returns the position after the comment's end (with trim/strip applied).
  size_t SkipComment(size_t tag, size_t body) {
    size_t end = src_.find("#}", body);
    if (end == std::string_view::npos) ErrorAt(tag, "missing end of comment tag '#}'");
    size_t after = end + 2;
    char sign = end > body ? src_[end - 1] : '\0';
    if (sign == '-') {
      while (after < src_.size() && IsSpace(src_[after])) ++after;
    } else if (sign != '+' && after < src_.size() && src_[after] == '\n') {
      ++after;  // trim_blocks
    }
    return after;
  }

  // Lexes the inside of {{ }} or {% %}; returns the position after the end tag.
  size_t LexTag(size_t tag, size_t pos, bool block) {
    Emit(block ? TokenType::kBlockBegin : TokenType::kVarBegin, block ? "{%" : "{{", tag);
    std::vector<char> balance;
    const char close = block ? '%' : '}';
    while (true) {
      while (pos < src_.size() && IsSpace(src_[pos])) ++pos;
      if (pos >= src_.size()) {
        ErrorAt(tag, block ? "unexpected end of template, expected end of block tag '%}'"
                           : "unexpected end of template, expected end of print tag '}}'");
      }
      // End tag, only when no bracket is open (a dict literal may end in "}}").
      if (balance.empty()) {
        size_t end = pos;
        char sign = '\0';
        if ((src_[end] == '-' || (block && src_[end] == '+')) && end + 2 < src_.size() + 0 &&
            src_[end + 1] == close && src_[end + 2] == '}') {
          sign = src_[end];
          ++end;
        }
        if (end + 1 < src_.size() && src_[end] == close && src_[end + 1] == '}') {
          Emit(block ? TokenType::kBlockEnd : TokenType::kVarEnd, block ? "%}" : "}}", pos);
          size_t after = end + 2;
          if (sign == '-') {
            while (after < src_.size() && IsSpace(src_[after])) ++after;
          } else if (block && sign != '+' && after < src_.size() && src_[after] == '\n') {
            ++after;  // trim_blocks
          }
          return after;
        }
      }
      char c = src_[pos];
      if (IsNameStart(c)) {
        size_t start = pos;
        while (pos < src_.size() && IsNameChar(src_[pos])) ++pos;
        Emit(TokenType::kName, std::string(src_.substr(start, pos - start)), start);
      } else if (IsDigit(c)) {
        pos = LexNumber(pos);
      } else if (c == '\'' || c == '"') {
        pos = LexString(pos);
      } else {
        pos = LexOperator(pos, &balance);
      }
    }
  }

  size_t LexNumber(size_t start) {
    size_t pos = start;
    auto digits = [&] {
      while (pos < src_.size() && (IsDigit(src_[pos]) || (src_[pos] == '_' && pos + 1 < src_.size() &&
                                                           IsDigit(src_[pos + 1])))) {
        ++pos;
      }
    };
    digits();
    bool is_float = false;
    if (pos + 1 < src_.size() && src_[pos] == '.' && IsDigit(src_[pos + 1])) {
      is_float = true;
      ++pos;
      digits();
    }
    if (pos < src_.size() && (src_[pos] == 'e' || src_[pos] == 'E')) {
      size_t save = pos;
      ++pos;
      if (pos < src_.size() && (src_[pos] == '+' || src_[pos] == '-')) ++pos;
      if (pos < src_.size() && IsDigit(src_[pos])) {
        is_float = true;
        digits();
      } else {
        pos = save;
      }
    }
    std::string text;
    for (size_t i = start; i < pos; ++i) {
      if (src_[i] != '_') text.push_back(src_[i]);
    }
    Emit(is_float ? TokenType::kFloat : TokenType::kInt, std::move(text), start);
    return pos;
  }

  // Decodes a quoted literal with Python's unicode-escape rules.
  size_t LexString(size_t start) {
    char quote = src_[start];
    size_t pos = start + 1;
    std::string out;
    while (true) {
      if (pos >= src_.size()) ErrorAt(start, "unterminated string literal");
      char c = src_[pos];
      if (c == quote) break;
      if (c != '\\') {
        out.push_back(c);
        ++pos;
        continue;
      }
      if (pos + 1 >= src_.size()) ErrorAt(start, "unterminated string literal");
      char e = src_[pos + 1];
      pos += 2;
      switch (e) {
        case '\n': break;  // line continuation
        case '\\': out.push_back('\\'); break;
        case '\'': out.push_back('\''); break;
        case '"': out.push_back('"'); break;
        case 'a': out.push_back('\a'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'v': out.push_back('\v'); break;
        case 'x': case 'u': case 'U': {
          int width = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          uint32_t cp = 0;
          for (int i = 0; i < width; ++i) {
            int h = pos + i < src_.size() ? HexValue(src_[pos + i]) : -1;
            if (h < 0) ErrorAt(pos - 2, "truncated \\" + std::string(1, e) + " escape in string literal");
            cp = cp * 16 + static_cast<uint32_t>(h);
          }
          if (cp > 0x10FFFF) ErrorAt(pos - 2, "invalid unicode escape in string literal");
          pos += static_cast<size_t>(width);
          AppendUtf8(cp, &out);
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            uint32_t cp = static_cast<uint32_t>(e - '0');
            for (int i = 0; i < 2 && pos < src_.size() && src_[pos] >= '0' && src_[pos] <= '7'; ++i) {
              cp = cp * 8 + static_cast<uint32_t>(src_[pos++] - '0');
            }
            AppendUtf8(cp, &out);
          } else {
            // Python keeps unknown escapes verbatim.
            out.push_back('\\');
            out.push_back(e);
          }
      }
    }
    Emit(TokenType::kString, std::move(out), start);
    return pos + 1;
  }

  size_t LexOperator(size_t pos, std::vector<char>* balance) {
    static constexpr std::string_view kTwo[] = {"//", "**", "==", "!=", "<=", ">="};
    for (std::string_view op : kTwo) {
      if (src_.substr(pos, 2) == op) {
        Emit(TokenType::kOp, std::string(op), pos);
        return pos + 2;
      }
    }
    char c = src_[pos];
    static constexpr std::string_view kOne = "+-/*%~[](){}<>=.:|,;";
    if (kOne.find(c) == std::string_view::npos) {
      ErrorAt(pos, fmt::format("unexpected character '{}'", c));
    }
    if (c == '(' || c == '[' || c == '{') {
      balance->push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
    } else if (c == ')' || c == ']' || c == '}') {
      if (balance->empty()) ErrorAt(pos, fmt::format("unexpected '{}'", c));
      if (balance->back() != c) {
        ErrorAt(pos, fmt::format("unexpected '{}', expected '{}'", c, balance->back()));
      }
      balance->pop_back();
    }
    Emit(TokenType::kOp, std::string(1, c), pos);
    return pos + 1;
  }

  std::string_view src_;
  SourceMap map_;
  std::vector<Token> tokens_;
};

}  // namespace

SourceMap::SourceMap(std::string_view source) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\n') line_starts_.push_back(i + 1);
  }
}

void SourceMap::Locate(size_t offset, int* line, int* column) const {
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  size_t index = static_cast<size_t>(it - line_starts_.begin()) - 1;
  *line = static_cast<int>(index + 1);
  *column = static_cast<int>(offset - line_starts_[index] + 1);
}

std::string NormalizeTemplateSource(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out.push_back('\n');
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out.push_back(source[i]);
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::vector<Token> Tokenize(std::string_view source) { return Lexer(source).Run(); }

}  // namespace cairn::chat
