#include "chat/brace_format.h"

#include <cctype>
#include <string>

#include "chat/evaluator.h"
#include "chat/percent_format.h"
#include "core/error.h"

namespace cairn::chat {
namespace {

struct Spec {
  char fill = ' ';
  char align = 0;  // '<', '>', '^', '=' or 0 (the type's default)
  std::string sign_alt_zero;  // '+', '-', ' ', '#', '0' flags, as printf takes them
  int64_t width = -1;
  int64_t precision = -1;
  char type = 0;
};

Spec ParseSpec(std::string_view s) {
  Spec spec;
  size_t i = 0;
  auto is_align = [](char c) { return c == '<' || c == '>' || c == '^' || c == '='; };
  if (s.size() >= 2 && is_align(s[1])) {
    spec.fill = s[0];
    spec.align = s[1];
    i = 2;
  } else if (!s.empty() && is_align(s[0])) {
    spec.align = s[0];
    i = 1;
  }
  if (i < s.size() && (s[i] == '+' || s[i] == '-' || s[i] == ' ')) spec.sign_alt_zero += s[i++];
  if (i < s.size() && s[i] == '#') spec.sign_alt_zero += s[i++];
  if (i < s.size() && s[i] == '0') {
    if (spec.align == 0) {
      spec.fill = '0';
      spec.align = '=';
    }
    ++i;
  }
  auto number = [&](int64_t* out) {
    if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    int64_t n = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      n = n * 10 + (s[i++] - '0');
      if (n > 4096) Fail("Too many decimal digits in format string");
    }
    *out = n;
    return true;
  };
  number(&spec.width);
  if (i < s.size() && s[i] == ',') Fail("str.format: the ',' option is not supported");
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!number(&spec.precision)) Fail("Format specifier missing precision");
  }
  if (i < s.size()) spec.type = s[i++];
  if (i != s.size()) Fail("Invalid format specifier '{}'", s);
  return spec;
}

// The value formatted without width/fill (sign and precision applied).
std::string FormatCore(const Value& v, const Spec& spec, Evaluator& ev) {
  char type = spec.type;
  if (type == 0) {
    if (v.is_string() || v.is_none() || v.is_list() || v.is_dict() || v.is_bool()) {
      if (spec.precision >= 0 && v.is_string()) type = 's';
      else return v.Str();
    } else if (v.is_int()) {
      type = 'd';
    } else if (spec.precision >= 0) {
      type = 'g';
    } else {
      return v.Str();  // Python's str() of a float
    }
  }
  if (type == 's' && !v.is_string()) Fail("Unknown format code 's' for object of type '{}'", v.TypeName());
  if (type != 's' && v.is_string()) Fail("Unknown format code '{}' for object of type 'str'", type);
  if (type == 'b') {
    if (!v.is_int()) Fail("Unknown format code 'b' for object of type '{}'", v.TypeName());
    int64_t n = v.AsInt();
    std::string digits;
    uint64_t u = n < 0 ? 0 - static_cast<uint64_t>(n) : static_cast<uint64_t>(n);
    do {
      digits.insert(digits.begin(), static_cast<char>('0' + (u & 1)));
      u >>= 1;
    } while (u != 0);
    return (n < 0 ? "-" : "") + digits;
  }
  if (type == '%') {
    Spec f = spec;
    f.type = 'f';
    Value scaled = Value::Float((v.is_int() ? static_cast<double>(v.AsInt()) : v.AsDouble()) * 100.0);
    return FormatCore(scaled, f, ev) + "%";
  }
  std::string printf_spec = "%" + spec.sign_alt_zero;
  if (spec.precision >= 0) printf_spec += "." + std::to_string(spec.precision);
  printf_spec += type;
  return PercentFormat(printf_spec, List{v}, nullptr, ev);
}

std::string Pad(const std::string& core, const Spec& spec, bool numeric) {
  if (spec.width < 0 || static_cast<int64_t>(core.size()) >= spec.width) return core;
  const size_t pad = static_cast<size_t>(spec.width) - core.size();
  const char align = spec.align != 0 ? spec.align : (numeric ? '>' : '<');
  switch (align) {
    case '<': return core + std::string(pad, spec.fill);
    case '^': return std::string(pad / 2, spec.fill) + core + std::string(pad - pad / 2, spec.fill);
    case '=': {
      size_t sign = !core.empty() && (core[0] == '-' || core[0] == '+' || core[0] == ' ') ? 1 : 0;
      return core.substr(0, sign) + std::string(pad, spec.fill) + core.substr(sign);
    }
    default: return std::string(pad, spec.fill) + core;
  }
}

const Value* Keyword(const std::vector<std::pair<std::string, Value>>& keyword, std::string_view name) {
  for (const auto& [key, value] : keyword) {
    if (key == name) return &value;
  }
  return nullptr;
}

// Follows `.attr` and `[key]` lookups after the field's first name.
Value Lookup(Value v, std::string_view rest) {
  size_t i = 0;
  while (i < rest.size()) {
    if (rest[i] == '.') {
      size_t end = rest.find_first_of(".[", i + 1);
      std::string name(rest.substr(i + 1, end == std::string_view::npos ? std::string_view::npos : end - i - 1));
      const Value* found = v.is_dict() ? v.AsDict().Find(name) : nullptr;
      if (found == nullptr) Fail("'{}' object has no attribute '{}'", v.TypeName(), name);
      v = *found;
      i = end == std::string_view::npos ? rest.size() : end;
    } else if (rest[i] == '[') {
      size_t end = rest.find(']', i);
      if (end == std::string_view::npos) Fail("Missing ']' in format string");
      std::string key(rest.substr(i + 1, end - i - 1));
      const bool digits = !key.empty() && key.find_first_not_of("0123456789") == std::string::npos;
      if (v.is_list() && digits) {
        const size_t index = std::stoul(key);
        if (index >= v.AsList().size()) Fail("list index out of range");
        v = v.AsList()[index];
      } else if (v.is_dict()) {
        const Value* found = v.AsDict().Find(key);
        if (found == nullptr) Fail("KeyError: '{}'", key);
        v = *found;
      } else {
        Fail("'{}' object is not subscriptable", v.TypeName());
      }
      i = end + 1;
    } else {
      Fail("Only '.' or '[' may follow ']' in format field specifier");
    }
  }
  return v;
}

}  // namespace

std::string BraceFormat(std::string_view format, const List& positional,
                        const std::vector<std::pair<std::string, Value>>& keyword, Evaluator& ev) {
  std::string out;
  size_t auto_index = 0;
  bool manual = false, automatic = false;
  for (size_t i = 0; i < format.size(); ++i) {
    const char c = format[i];
    if (c == '}') {
      if (i + 1 < format.size() && format[i + 1] == '}') {
        out += '}';
        ++i;
        continue;
      }
      Fail("Single '}}' encountered in format string");
    }
    if (c != '{') {
      out += c;
      continue;
    }
    if (i + 1 < format.size() && format[i + 1] == '{') {
      out += '{';
      ++i;
      continue;
    }
    const size_t end = format.find('}', i + 1);
    if (end == std::string_view::npos) Fail("Single '{{' encountered in format string");
    std::string_view field = format.substr(i + 1, end - i - 1);
    if (field.find('{') != std::string_view::npos) Fail("str.format: nested replacement fields are not supported");
    i = end;
    std::string_view spec_text, conversion;
    if (size_t colon = field.find(':'); colon != std::string_view::npos) {
      spec_text = field.substr(colon + 1);
      field = field.substr(0, colon);
    }
    if (size_t bang = field.find('!'); bang != std::string_view::npos) {
      conversion = field.substr(bang + 1);
      field = field.substr(0, bang);
      if (conversion != "s" && conversion != "r" && conversion != "a") Fail("Unknown conversion specifier {}", conversion);
    }
    const size_t name_end = field.find_first_of(".[");
    std::string_view name = field.substr(0, name_end);
    Value v;
    if (name.empty()) {
      if (manual) Fail("cannot switch from manual field specification to automatic field numbering");
      automatic = true;
      if (auto_index >= positional.size()) Fail("Replacement index {} out of range for positional args tuple", auto_index);
      v = positional[auto_index++];
    } else if (name.find_first_not_of("0123456789") == std::string_view::npos) {
      if (automatic) Fail("cannot switch from automatic field numbering to manual field specification");
      manual = true;
      const size_t index = std::stoul(std::string(name));
      if (index >= positional.size()) Fail("Replacement index {} out of range for positional args tuple", index);
      v = positional[index];
    } else {
      const Value* found = Keyword(keyword, name);
      if (found == nullptr) Fail("KeyError: '{}'", name);
      v = *found;
    }
    if (name_end != std::string_view::npos) v = Lookup(v, field.substr(name_end));
    if (!conversion.empty()) {
      std::string text;
      if (conversion == "s") v.AppendStr(&text);
      else v.AppendRepr(&text);
      v = Value::String(std::move(text));
    }
    const Spec spec = ParseSpec(spec_text);
    out += Pad(FormatCore(v, spec, ev), spec, !v.is_string() && (v.is_int() || v.is_float()));
    ev.CheckSize(out.size());
  }
  return out;
}

}  // namespace cairn::chat
