#include "engine/json_rewriter.h"

#include <cstdio>

namespace cairn::engine {
namespace {

constexpr size_t kMaxDepth = 256;   // deeper arguments are not a tool call
constexpr size_t kMaxNumber = 64;   // bytes of one number
constexpr std::string_view kLiterals[] = {"true", "false", "null"};

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsNumberByte(char c) { return IsDigit(c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
bool ValidNumber(std::string_view s) {
  size_t i = 0;
  auto digits = [&] {
    const size_t start = i;
    while (i < s.size() && IsDigit(s[i])) ++i;
    return i - start;
  };
  if (i < s.size() && s[i] == '-') ++i;
  if (i < s.size() && s[i] == '0') {
    ++i;
  } else if (digits() == 0) {
    return false;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

void AppendEscaped(char c, std::string& out) {
  switch (c) {
    case '"': out += "\\\""; return;
    case '\\': out += "\\\\"; return;
    case '\n': out += "\\n"; return;
    case '\t': out += "\\t"; return;
    case '\r': out += "\\r"; return;
    case '\b': out += "\\b"; return;
    case '\f': out += "\\f"; return;
    default: break;
  }
  if (static_cast<unsigned char>(c) < 0x20) {
    char buf[8];
    std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
    out += buf;
    return;
  }
  out += c;
}

void AppendUtf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

bool IsHighSurrogate(uint32_t cp) { return cp >= 0xD800 && cp < 0xDC00; }
bool IsLowSurrogate(uint32_t cp) { return cp >= 0xDC00 && cp < 0xE000; }

}  // namespace

std::string EscapeJsonString(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) AppendEscaped(c, out);
  return out;
}

// --- JsonRewriter -----------------------------------------------------------

JsonRewriter::Step JsonRewriter::Feed(char c, std::string& out) {
  switch (state_) {
    case State::kValue:
      if (IsSpace(c)) return Step::kMore;
      return BeginValue(c, out);
    case State::kArrayItem:
      if (IsSpace(c)) return Step::kMore;
      if (c != ']') return BeginValue(c, out);
      pending_.clear();  // a trailing comma
      stack_.pop_back();
      out += ']';
      return EndScalar();
    case State::kObjectKey:
      if (IsSpace(c)) return Step::kMore;
      if (c == '"') {
        in_key_ = true;
        key_.clear();
        state_ = State::kString;
        return Step::kMore;
      }
      if (c != '}') return Step::kError;
      pending_.clear();  // a trailing comma
      stack_.pop_back();
      out += '}';
      return EndScalar();
    case State::kColon:
      if (IsSpace(c)) return Step::kMore;
      if (c != ':') return Step::kError;
      pending_ += '"';
      pending_ += key_;
      pending_ += "\":";
      state_ = State::kValue;
      return Step::kMore;
    case State::kAfterValue:
      if (IsSpace(c)) return Step::kMore;
      if (c == ',') {
        pending_ = ",";
        state_ = stack_.back() == '{' ? State::kObjectKey : State::kArrayItem;
        return Step::kMore;
      }
      if ((c == '}' && stack_.back() == '{') || (c == ']' && stack_.back() == '[')) {
        stack_.pop_back();
        out += c;
        return EndScalar();
      }
      return Step::kError;
    case State::kString:
      return StringByte(c, out);
    case State::kNumber:
      if (IsNumberByte(c)) {
        token_ += c;
        return token_.size() > kMaxNumber ? Step::kError : Step::kMore;
      }
      if (!ValidNumber(token_)) return Step::kError;
      out += pending_;
      out += token_;
      pending_.clear();
      token_.clear();
      if (stack_.empty()) {
        state_ = State::kDone;
        return Step::kDoneBefore;
      }
      state_ = State::kAfterValue;
      return Feed(c, out);
    case State::kLiteral: {
      token_ += c;
      for (std::string_view literal : kLiterals) {
        if (token_ == literal) {
          out += pending_;
          out += token_;
          pending_.clear();
          token_.clear();
          return EndScalar();
        }
      }
      for (std::string_view literal : kLiterals) {
        if (literal.substr(0, token_.size()) == token_) return Step::kMore;
      }
      return Step::kError;
    }
    case State::kDone:
      return Step::kError;
  }
  return Step::kError;
}

JsonRewriter::Step JsonRewriter::BeginValue(char c, std::string& out) {
  started_ = true;
  if (c == '{' || c == '[') {
    if (stack_.size() >= kMaxDepth) return Step::kError;
    out += pending_;
    out += c;
    pending_.clear();
    stack_.push_back(c);
    state_ = c == '{' ? State::kObjectKey : State::kArrayItem;
    return Step::kMore;
  }
  if (c == '"') {
    out += pending_;
    out += '"';
    pending_.clear();
    in_key_ = false;
    state_ = State::kString;
    return Step::kMore;
  }
  if (c == '-' || IsDigit(c)) {
    token_ = c;
    state_ = State::kNumber;
    return Step::kMore;
  }
  if (c == 't' || c == 'f' || c == 'n') {
    token_ = c;
    state_ = State::kLiteral;
    return Step::kMore;
  }
  return Step::kError;
}

JsonRewriter::Step JsonRewriter::StringByte(char c, std::string& out) {
  std::string& target = in_key_ ? key_ : out;
  if (!token_.empty()) {  // inside \uXXXX
    if (HexValue(c) >= 0) {
      token_ += c;
      if (token_.size() == 6) WriteEscape(target);
      return Step::kMore;
    }
    // Not an escape after all: the backslash was a literal one.
    FlushSurrogate(target);
    target += "\\\\u";
    target += token_.substr(2);
    token_.clear();
  } else if (escape_) {
    escape_ = false;
    if (c == 'u') {
      token_ = "\\u";
      return Step::kMore;
    }
    FlushSurrogate(target);
    switch (c) {
      case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
        target += '\\';
        target += c;
        return Step::kMore;
      case '\'':
        target += '\'';
        return Step::kMore;
      default:
        target += "\\\\";  // unknown escape: keep the backslash; `c` follows as itself
        break;
    }
  }
  if (c == '\\') {
    escape_ = true;
    return Step::kMore;
  }
  FlushSurrogate(target);
  if (c != '"') {
    AppendEscaped(c, target);
    return Step::kMore;
  }
  if (in_key_) {
    in_key_ = false;
    state_ = State::kColon;
    return Step::kMore;
  }
  out += '"';
  return EndScalar();
}

void JsonRewriter::WriteEscape(std::string& target) {
  uint32_t cp = 0;
  for (size_t i = 2; i < token_.size(); ++i) cp = cp * 16 + static_cast<uint32_t>(HexValue(token_[i]));
  if (IsHighSurrogate(cp)) {
    FlushSurrogate(target);
    surrogate_ = token_;
  } else if (IsLowSurrogate(cp)) {
    if (surrogate_.empty()) {
      target += "\\ufffd";
    } else {
      target += surrogate_;
      target += token_;
      surrogate_.clear();
    }
  } else {
    FlushSurrogate(target);
    target += token_;
  }
  token_.clear();
}

void JsonRewriter::FlushSurrogate(std::string& target) {
  if (surrogate_.empty()) return;
  target += "\\ufffd";
  surrogate_.clear();
}

JsonRewriter::Step JsonRewriter::EndScalar() {
  if (stack_.empty()) {
    state_ = State::kDone;
    return Step::kDone;
  }
  state_ = State::kAfterValue;
  return Step::kMore;
}

std::string JsonRewriter::Closer() const {
  std::string closer;
  if (state_ == State::kString && !in_key_) closer += '"';
  for (auto it = stack_.rbegin(); it != stack_.rend(); ++it) closer += *it == '{' ? '}' : ']';
  return closer;
}

// --- JsonStringDecoder --------------------------------------------------------

bool JsonStringDecoder::Feed(char c, std::string& out) {
  if (hex_digits_ >= 0) {
    const int v = HexValue(c);
    if (v >= 0) {
      code_ = code_ * 16 + static_cast<uint32_t>(v);
      if (++hex_digits_ < 4) return false;
      hex_digits_ = -1;
      if (IsHighSurrogate(code_)) {
        Flush(out);
        high_ = code_;
      } else if (IsLowSurrogate(code_)) {
        AppendUtf8(high_ != 0 ? 0x10000 + ((high_ - 0xD800) << 10) + (code_ - 0xDC00) : 0xFFFD, out);
        high_ = 0;
      } else {
        Flush(out);
        AppendUtf8(code_, out);
      }
      return false;
    }
    // Not an escape after all: "\u" and the digits read stay as text.
    Flush(out);
    out += "\\u";
    static constexpr char kHex[] = "0123456789abcdef";
    for (int i = hex_digits_ - 1; i >= 0; --i) out += kHex[(code_ >> (4 * i)) & 0xF];
    hex_digits_ = -1;
  } else if (escape_) {
    escape_ = false;
    if (c == 'u') {
      hex_digits_ = 0;
      code_ = 0;
      return false;
    }
    Flush(out);
    switch (c) {
      case '"': case '\\': case '/': case '\'': out += c; return false;
      case 'b': out += '\b'; return false;
      case 'f': out += '\f'; return false;
      case 'n': out += '\n'; return false;
      case 'r': out += '\r'; return false;
      case 't': out += '\t'; return false;
      default: out += '\\'; break;  // unknown escape: the backslash stays; `c` follows
    }
  }
  if (c == '\\') {
    escape_ = true;
    return false;
  }
  Flush(out);
  if (c == '"') return true;
  out += c;
  return false;
}

void JsonStringDecoder::Flush(std::string& out) {
  if (high_ == 0) return;
  AppendUtf8(0xFFFD, out);
  high_ = 0;
}

}  // namespace cairn::engine
