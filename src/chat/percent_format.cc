#include "chat/percent_format.h"

#include <cmath>
#include <cstdio>

#include "chat/builtins.h"
#include "chat/evaluator.h"
#include "core/error.h"

namespace cairn::chat {
namespace {

struct Spec {
  bool left = false;   // '-'
  bool plus = false;   // '+'
  bool space = false;  // ' '
  bool alt = false;    // '#'
  bool zero = false;   // '0'
  int64_t width = -1;
  int64_t precision = -1;
  char conversion = 0;
};

size_t CodePoints(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// First `n` code points of `s`.
std::string_view PrefixCodePoints(std::string_view s, size_t n) {
  size_t pos = 0;
  for (size_t count = 0; pos < s.size(); ++pos) {
    if ((static_cast<unsigned char>(s[pos]) & 0xC0) != 0x80 && count++ == n) break;
  }
  return s.substr(0, pos);
}

// Pads `body` (its sign/prefix first `lead` bytes) to the width: spaces on
// the left or right, or zeros after the sign/prefix.
void AppendPadded(const Spec& spec, std::string_view body, size_t lead, bool numeric,
                  std::string& out) {
  const size_t len = CodePoints(body);
  const size_t width = spec.width > 0 ? static_cast<size_t>(spec.width) : 0;
  if (len >= width) {
    out.append(body);
  } else if (spec.left) {
    out.append(body);
    out.append(width - len, ' ');
  } else if (spec.zero && numeric) {
    out.append(body.substr(0, lead));
    out.append(width - len, '0');
    out.append(body.substr(lead));
  } else {
    out.append(width - len, ' ');
    out.append(body);
  }
}

std::string Repr(const Value& v) {
  std::string out;
  v.AppendRepr(&out);
  return out;
}

// Sign of a number as Python prints it with the spec's flags.
std::string SignPrefix(const Spec& spec, bool negative) {
  if (negative) return "-";
  if (spec.plus) return "+";
  if (spec.space) return " ";
  return "";
}

void FormatInteger(const Spec& spec, const Value& v, std::string& out) {
  const char c = spec.conversion;
  const bool decimal = c == 'd' || c == 'i' || c == 'u';
  int64_t i = 0;
  if (v.is_int() || v.is_bool()) {
    i = v.AsInt();
  } else if (v.is_float() && decimal) {
    const double d = v.AsDouble();
    if (std::isnan(d)) Fail("cannot convert float NaN to integer");
    if (std::isinf(d)) Fail("cannot convert float infinity to integer");
    i = static_cast<int64_t>(std::trunc(d));
  } else if (decimal) {
    Fail("%{} format: a real number is required, not {}", c, v.TypeName());
  } else {
    Fail("%{} format: an integer is required, not {}", c, v.TypeName());
  }
  const bool negative = i < 0;
  const uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(i) : static_cast<uint64_t>(i);
  char digits[32];
  const char* pattern = decimal ? "%llu" : c == 'o' ? "%llo" : c == 'x' ? "%llx" : "%llX";
  std::snprintf(digits, sizeof(digits), pattern, static_cast<unsigned long long>(magnitude));
  std::string number = digits;
  if (spec.precision > static_cast<int64_t>(number.size())) {
    number.insert(0, static_cast<size_t>(std::min<int64_t>(spec.precision, 4096)) - number.size(), '0');
  }
  std::string body = SignPrefix(spec, negative);
  if (spec.alt && !decimal) body += c == 'o' ? "0o" : c == 'x' ? "0x" : "0X";
  const size_t lead = body.size();
  body += number;
  AppendPadded(spec, body, lead, true, out);
}

void FormatFloat(const Spec& spec, const Value& v, std::string& out) {
  if (!v.is_number()) Fail("must be real number, not {}", v.TypeName());
  const double d = v.AsDouble();
  const bool negative = std::signbit(d) && !std::isnan(d);
  std::string body = SignPrefix(spec, negative);
  const size_t lead = body.size();
  if (std::isinf(d) || std::isnan(d)) {
    const bool upper = spec.conversion == 'E' || spec.conversion == 'F' || spec.conversion == 'G';
    body += std::isnan(d) ? (upper ? "NAN" : "nan") : (upper ? "INF" : "inf");
    Spec no_zero = spec;
    no_zero.zero = false;
    AppendPadded(no_zero, body, lead, true, out);
    return;
  }
  const int precision = static_cast<int>(std::min<int64_t>(spec.precision < 0 ? 6 : spec.precision, 200));
  std::string pattern = spec.alt ? "%#.*" : "%.*";  // '#': keep the point / trailing zeros
  pattern.push_back(spec.conversion);
  char buffer[512];
  std::snprintf(buffer, sizeof(buffer), pattern.c_str(), precision, std::fabs(d));
  body += buffer;
  AppendPadded(spec, body, lead, true, out);
}

void FormatChar(const Spec& spec, const Value& v, std::string& out) {
  std::string body;
  if (v.is_int() || v.is_bool()) {
    const int64_t cp = v.AsInt();
    if (cp < 0 || cp > 0x10FFFF) Fail("%c arg not in range(0x110000)");
    AppendUtf8(static_cast<uint32_t>(cp), &body);
  } else if (v.is_string() && v.Length() == 1) {
    body = v.AsString();
  } else {
    Fail("%c requires an int or a unicode character, not {}", v.TypeName());
  }
  AppendPadded(spec, body, 0, false, out);
}

// Reads digits at fmt[pos] into `value` (capped to keep widths sane).
int64_t ReadNumber(std::string_view fmt, size_t& pos) {
  int64_t value = 0;
  while (pos < fmt.size() && fmt[pos] >= '0' && fmt[pos] <= '9') {
    value = std::min<int64_t>(value * 10 + (fmt[pos++] - '0'), 1 << 24);
  }
  return value;
}

}  // namespace

std::string PercentFormat(std::string_view fmt, const List& args, const Value* mapping,
                          Evaluator& ev) {
  std::string out;
  size_t next_arg = 0;
  const auto take = [&]() -> const Value& {
    if (next_arg >= args.size()) Fail("not enough arguments for format string");
    return args[next_arg++];
  };
  for (size_t pos = 0; pos < fmt.size();) {
    const size_t percent = fmt.find('%', pos);
    if (percent == std::string_view::npos) {
      out.append(fmt.substr(pos));
      break;
    }
    out.append(fmt.substr(pos, percent - pos));
    pos = percent + 1;
    if (pos >= fmt.size()) Fail("incomplete format");
    Spec spec;
    const Value* keyed = nullptr;
    Value keyed_value;
    if (fmt[pos] == '(') {
      if (mapping == nullptr) Fail("format requires a mapping");
      const size_t close = fmt.find(')', pos);
      if (close == std::string_view::npos) Fail("incomplete format key");
      keyed_value = ev.GetItem(*mapping, Value::String(std::string(fmt.substr(pos + 1, close - pos - 1))));
      if (keyed_value.is_undefined()) Fail("'{}'", fmt.substr(pos + 1, close - pos - 1));
      keyed = &keyed_value;
      pos = close + 1;
    }
    for (; pos < fmt.size(); ++pos) {
      const char f = fmt[pos];
      if (f == '-') spec.left = true;
      else if (f == '+') spec.plus = true;
      else if (f == ' ') spec.space = true;
      else if (f == '#') spec.alt = true;
      else if (f == '0') spec.zero = true;
      else break;
    }
    if (pos < fmt.size() && fmt[pos] == '*') {
      const Value& w = take();
      if (!w.is_int() && !w.is_bool()) Fail("* wants int");
      spec.width = w.AsInt();
      if (spec.width < 0) spec.left = true, spec.width = -spec.width;
      ++pos;
    } else {
      spec.width = ReadNumber(fmt, pos);
    }
    ev.CheckSize(out.size() + static_cast<size_t>(spec.width));  // before padding to it
    if (pos < fmt.size() && fmt[pos] == '.') {
      ++pos;
      if (pos < fmt.size() && fmt[pos] == '*') {
        const Value& p = take();
        if (!p.is_int() && !p.is_bool()) Fail("* wants int");
        spec.precision = std::max<int64_t>(p.AsInt(), 0);
        ++pos;
      } else {
        spec.precision = ReadNumber(fmt, pos);
      }
    }
    while (pos < fmt.size() && (fmt[pos] == 'h' || fmt[pos] == 'l' || fmt[pos] == 'L')) ++pos;
    if (pos >= fmt.size()) Fail("incomplete format");
    spec.conversion = fmt[pos++];
    if (spec.conversion == '%') {
      out.push_back('%');
      continue;
    }
    const Value& v = keyed != nullptr ? *keyed : take();
    // Jinja2's Undefined prints as "" but fails any numeric conversion.
    if (v.is_undefined() && spec.conversion != 's') Fail("{}", UndefinedMessage(v));
    switch (spec.conversion) {
      case 's': case 'r': case 'a': {
        std::string text = spec.conversion == 's' ? v.Str() : Repr(v);
        std::string_view body = text;
        if (spec.precision >= 0) body = PrefixCodePoints(body, static_cast<size_t>(spec.precision));
        AppendPadded(spec, body, 0, false, out);
        break;
      }
      case 'd': case 'i': case 'u': case 'o': case 'x': case 'X':
        FormatInteger(spec, v, out);
        break;
      case 'e': case 'E': case 'f': case 'F': case 'g': case 'G':
        FormatFloat(spec, v, out);
        break;
      case 'c':
        FormatChar(spec, v, out);
        break;
      default: {
        const auto c = static_cast<unsigned char>(spec.conversion);
        Fail("unsupported format character '{}' (0x{:x}) at index {}", spec.conversion, c,
             CodePoints(fmt.substr(0, pos - 1)));
      }
    }
    ev.CheckSize(out.size());
  }
  if (next_arg < args.size() && mapping == nullptr) {
    Fail("not all arguments converted during string formatting");
  }
  ev.CheckSize(out.size());
  return out;
}

}  // namespace cairn::chat
