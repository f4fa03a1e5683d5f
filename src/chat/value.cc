#include "chat/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "core/error.h"

namespace cairn::chat {
namespace {

// Deeper JSON than this is hostile input, not a chat.
constexpr int kMaxJsonDepth = 256;

const std::string& EmptyString() {
  static const std::string empty;
  return empty;
}

Value FromJsonAt(const nlohmann::ordered_json& json, int depth) {
  if (depth > kMaxJsonDepth) Fail("template context nests deeper than {} levels", kMaxJsonDepth);
  switch (json.type()) {
    case nlohmann::ordered_json::value_t::null: return Value::None();
    case nlohmann::ordered_json::value_t::boolean: return Value::Bool(json.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return Value::Int(json.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      uint64_t u = json.get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX)) return Value::Float(static_cast<double>(u));
      return Value::Int(static_cast<int64_t>(u));
    }
    case nlohmann::ordered_json::value_t::number_float: return Value::Float(json.get<double>());
    case nlohmann::ordered_json::value_t::string: return Value::String(json.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      List items;
      items.reserve(json.size());
      for (const auto& item : json) items.push_back(FromJsonAt(item, depth + 1));
      return Value::MakeList(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      Dict dict;
      for (const auto& [key, item] : json.items()) dict.Set(key, FromJsonAt(item, depth + 1));
      return Value::MakeDict(std::move(dict));
    }
    default: return Value::None();  // binary/discarded: not produced by JSON text
  }
}

void AppendReprString(std::string_view s, std::string* out) {
  // Python picks single quotes unless the text has ' and no ".
  bool has_single = s.find('\'') != std::string_view::npos;
  bool has_double = s.find('"') != std::string_view::npos;
  char quote = (has_single && !has_double) ? '"' : '\'';
  out->push_back(quote);
  for (unsigned char c : s) {
    if (c == quote || c == '\\') {
      out->push_back('\\');
      out->push_back(static_cast<char>(c));
    } else if (c == '\n') {
      out->append("\\n");
    } else if (c == '\r') {
      out->append("\\r");
    } else if (c == '\t') {
      out->append("\\t");
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out->append(buf);
    } else {
      out->push_back(static_cast<char>(c));
    }
  }
  out->push_back(quote);
}

void AppendJsonByte(unsigned char c, std::string* out) {
  switch (c) {
    case '"': out->append("\\\""); break;
    case '\\': out->append("\\\\"); break;
    case '\n': out->append("\\n"); break;
    case '\r': out->append("\\r"); break;
    case '\t': out->append("\\t"); break;
    case '\b': out->append("\\b"); break;
    case '\f': out->append("\\f"); break;
    default:
      if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\u%04x", c);
        out->append(buf);
      } else {
        out->push_back(static_cast<char>(c));
      }
  }
}

// Python json string encoding; ensure_ascii escapes non-ASCII as \uXXXX.
void AppendJsonString(std::string_view s, std::string* out, bool ensure_ascii = false) {
  out->push_back('"');
  if (!ensure_ascii) {
    for (unsigned char c : s) AppendJsonByte(c, out);
  } else {
    char buf[16];
    for (uint32_t cp : DecodeUtf8(s)) {
      if (cp < 0x80) {
        AppendJsonByte(static_cast<unsigned char>(cp), out);
      } else if (cp < 0x10000) {
        std::snprintf(buf, sizeof(buf), "\\u%04x", cp);
        out->append(buf);
      } else {
        uint32_t v = cp - 0x10000;
        std::snprintf(buf, sizeof(buf), "\\u%04x\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
        out->append(buf);
      }
    }
  }
  out->push_back('"');
}

void DumpJsonAt(const Value& v, const JsonDumpOptions& o, const std::string& indent, int level,
                std::string* out) {
  if (level > kMaxJsonDepth) Fail("tojson: value nests deeper than {} levels", kMaxJsonDepth);
  switch (v.kind()) {
    case Value::Kind::kNone: out->append("null"); return;
    case Value::Kind::kBool: out->append(v.AsBool() ? "true" : "false"); return;
    case Value::Kind::kInt: out->append(std::to_string(v.AsInt())); return;
    case Value::Kind::kFloat: {
      double d = v.AsDouble();
      if (std::isnan(d)) out->append("NaN");
      else if (std::isinf(d)) out->append(d > 0 ? "Infinity" : "-Infinity");
      else out->append(FormatPyFloat(d));
      return;
    }
    case Value::Kind::kString: AppendJsonString(v.AsString(), out, o.ensure_ascii); return;
    case Value::Kind::kList:
    case Value::Kind::kDict: {
      bool is_list = v.is_list();
      size_t n = is_list ? v.AsList().size() : v.AsDict().size();
      out->push_back(is_list ? '[' : '{');
      if (n == 0) {
        out->push_back(is_list ? ']' : '}');
        return;
      }
      bool pretty = o.indent >= 0 || !o.indent_str.empty();
      // Python: with an indent the default item separator loses its space.
      std::string item_sep = o.has_separators ? o.item_separator : (pretty ? "," : ", ");
      std::string newline_indent;
      if (pretty) {
        newline_indent = "\n";
        for (int i = 0; i <= level; ++i) newline_indent += indent;
        item_sep += newline_indent;
        out->append(newline_indent);
      }
      if (is_list) {
        bool first = true;
        for (const Value& item : v.AsList()) {
          if (!first) out->append(item_sep);
          first = false;
          DumpJsonAt(item, o, indent, level + 1, out);
        }
      } else {
        std::vector<const std::pair<std::string, Value>*> entries;
        for (const auto& entry : v.AsDict()) entries.push_back(&entry);
        if (o.sort_keys) {
          std::stable_sort(entries.begin(), entries.end(),
                           [](const auto* a, const auto* b) { return a->first < b->first; });
        }
        bool first = true;
        for (const auto* entry : entries) {
          if (!first) out->append(item_sep);
          first = false;
          AppendJsonString(entry->first, out, o.ensure_ascii);
          out->append(o.key_separator);
          DumpJsonAt(entry->second, o, indent, level + 1, out);
        }
      }
      if (pretty) {
        out->push_back('\n');
        for (int i = 0; i < level; ++i) out->append(indent);
      }
      out->push_back(is_list ? ']' : '}');
      return;
    }
    case Value::Kind::kUndefined: Fail("Object of type Undefined is not JSON serializable");
    case Value::Kind::kNamespace: Fail("Object of type Namespace is not JSON serializable");
    case Value::Kind::kCallable: Fail("Object of type function is not JSON serializable");
  }
}

}  // namespace

const Value* Dict::Find(std::string_view key) const {
  for (const auto& entry : entries_) {
    if (entry.first == key) return &entry.second;
  }
  return nullptr;
}

Value* Dict::Find(std::string_view key) {
  for (auto& entry : entries_) {
    if (entry.first == key) return &entry.second;
  }
  return nullptr;
}

void Dict::Set(std::string key, Value value) {
  if (Value* existing = Find(key)) {
    *existing = std::move(value);
  } else {
    entries_.emplace_back(std::move(key), std::move(value));
  }
}

Value Value::Undefined(std::string hint) {
  Value v;
  if (!hint.empty()) v.str_ = std::make_shared<const std::string>(std::move(hint));
  return v;
}
Value Value::None() { Value v; v.kind_ = Kind::kNone; return v; }
Value Value::Bool(bool b) { Value v; v.kind_ = Kind::kBool; v.scalar_.b = b; return v; }
Value Value::Int(int64_t i) { Value v; v.kind_ = Kind::kInt; v.scalar_.i = i; return v; }
Value Value::Float(double d) { Value v; v.kind_ = Kind::kFloat; v.scalar_.d = d; return v; }
Value Value::String(std::string s) {
  return String(std::make_shared<const std::string>(std::move(s)));
}
Value Value::String(std::shared_ptr<const std::string> s) {
  Value v;
  v.kind_ = Kind::kString;
  v.str_ = std::move(s);
  return v;
}
Value Value::MakeList(List items) {
  Value v;
  v.kind_ = Kind::kList;
  v.list_ = std::make_shared<List>(std::move(items));
  return v;
}
Value Value::MakeDict(Dict dict) {
  Value v;
  v.kind_ = Kind::kDict;
  v.dict_ = std::make_shared<Dict>(std::move(dict));
  return v;
}
Value Value::MakeNamespace(Dict dict) {
  Value v = MakeDict(std::move(dict));
  v.kind_ = Kind::kNamespace;
  return v;
}
Value Value::MakeCallable(std::shared_ptr<const Callable> callable) {
  Value v;
  v.kind_ = Kind::kCallable;
  v.callable_ = std::move(callable);
  return v;
}
Value Value::FromJson(const nlohmann::ordered_json& json) { return FromJsonAt(json, 0); }

double Value::AsDouble() const {
  switch (kind_) {
    case Kind::kFloat: return scalar_.d;
    case Kind::kInt: return static_cast<double>(scalar_.i);
    case Kind::kBool: return scalar_.b ? 1.0 : 0.0;
    default: return 0.0;
  }
}

const std::string& Value::undefined_hint() const { return str_ ? *str_ : EmptyString(); }

bool Value::Truthy() const {
  switch (kind_) {
    case Kind::kUndefined:
    case Kind::kNone: return false;
    case Kind::kBool: return scalar_.b;
    case Kind::kInt: return scalar_.i != 0;
    case Kind::kFloat: return scalar_.d != 0.0;
    case Kind::kString: return !str_->empty();
    case Kind::kList: return !list_->empty();
    case Kind::kDict: return !dict_->empty();
    case Kind::kCallable:
    case Kind::kNamespace: return true;
  }
  return false;
}

std::string Value::Str() const {
  if (kind_ == Kind::kString) return *str_;
  std::string out;
  AppendStr(&out);
  return out;
}

void Value::AppendStr(std::string* out) const {
  switch (kind_) {
    case Kind::kUndefined: return;
    case Kind::kString: out->append(*str_); return;
    case Kind::kInt: {
      char buf[24];
      auto res = std::to_chars(buf, buf + sizeof(buf), scalar_.i);
      out->append(buf, res.ptr);
      return;
    }
    default: AppendRepr(out); return;
  }
}

void Value::AppendRepr(std::string* out) const {
  switch (kind_) {
    case Kind::kUndefined: out->append("Undefined"); return;
    case Kind::kNone: out->append("None"); return;
    case Kind::kBool: out->append(scalar_.b ? "True" : "False"); return;
    case Kind::kInt: AppendStr(out); return;
    case Kind::kFloat: out->append(FormatPyFloat(scalar_.d)); return;
    case Kind::kString: AppendReprString(*str_, out); return;
    case Kind::kList: {
      out->push_back('[');
      bool first = true;
      for (const Value& item : *list_) {
        if (!first) out->append(", ");
        first = false;
        item.AppendRepr(out);
      }
      out->push_back(']');
      return;
    }
    case Kind::kDict:
    case Kind::kNamespace: {
      if (kind_ == Kind::kNamespace) out->append("<Namespace ");
      out->push_back('{');
      bool first = true;
      for (const auto& [key, item] : *dict_) {
        if (!first) out->append(", ");
        first = false;
        AppendReprString(key, out);
        out->append(": ");
        item.AppendRepr(out);
      }
      out->push_back('}');
      if (kind_ == Kind::kNamespace) out->push_back('>');
      return;
    }
    case Kind::kCallable: out->append("<function " + callable_->Name() + ">"); return;
  }
}

std::string Value::TypeName() const {
  switch (kind_) {
    case Kind::kUndefined: return "Undefined";
    case Kind::kNone: return "NoneType";
    case Kind::kBool: return "bool";
    case Kind::kInt: return "int";
    case Kind::kFloat: return "float";
    case Kind::kString: return "str";
    case Kind::kList: return "list";
    case Kind::kDict: return "dict";
    case Kind::kCallable: return "function";
    case Kind::kNamespace: return "Namespace";
  }
  return "object";
}

bool Value::Equals(const Value& other) const {
  if (is_number() && other.is_number()) {
    if (kind_ == Kind::kFloat || other.kind_ == Kind::kFloat) return AsDouble() == other.AsDouble();
    return AsInt() == other.AsInt();
  }
  if (kind_ != other.kind_) return false;
  switch (kind_) {
    case Kind::kUndefined:
    case Kind::kNone: return true;
    case Kind::kString: return str_ == other.str_ || *str_ == *other.str_;
    case Kind::kList: {
      if (list_ == other.list_) return true;
      if (list_->size() != other.list_->size()) return false;
      for (size_t i = 0; i < list_->size(); ++i) {
        if (!(*list_)[i].Equals((*other.list_)[i])) return false;
      }
      return true;
    }
    case Kind::kDict: {
      if (dict_ == other.dict_) return true;
      if (dict_->size() != other.dict_->size()) return false;
      for (const auto& [key, item] : *dict_) {
        const Value* theirs = other.dict_->Find(key);
        if (theirs == nullptr || !item.Equals(*theirs)) return false;
      }
      return true;
    }
    case Kind::kNamespace: return dict_ == other.dict_;
    case Kind::kCallable: return callable_ == other.callable_;
    default: return false;
  }
}

bool Value::SameAs(const Value& other) const {
  if (kind_ != other.kind_) return false;
  switch (kind_) {
    case Kind::kList: return list_ == other.list_;
    case Kind::kDict:
    case Kind::kNamespace: return dict_ == other.dict_;
    case Kind::kCallable: return callable_ == other.callable_;
    default: return Equals(other);
  }
}

int64_t Value::Length() const {
  switch (kind_) {
    case Kind::kString: {
      int64_t n = 0;
      for (unsigned char c : *str_) n += (c & 0xC0) != 0x80;
      return n;
    }
    case Kind::kList: return static_cast<int64_t>(list_->size());
    case Kind::kDict:
    case Kind::kNamespace: return static_cast<int64_t>(dict_->size());
    case Kind::kUndefined: return 0;
    default: return -1;
  }
}

bool PyLess(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.AsDouble() < b.AsDouble();
    return a.AsInt() < b.AsInt();
  }
  // UTF-8 byte order equals code point order.
  if (a.is_string() && b.is_string()) return a.AsString() < b.AsString();
  if (a.is_list() && b.is_list()) {
    const List& x = a.AsList();
    const List& y = b.AsList();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (!x[i].Equals(y[i])) return PyLess(x[i], y[i]);
    }
    return x.size() < y.size();
  }
  Fail("'<' not supported between instances of '{}' and '{}'", a.TypeName(), b.TypeName());
}

std::string FormatPyFloat(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  if (d == 0) return std::signbit(d) ? "-0.0" : "0.0";
  // Shortest round-trip digits, then Python's repr layout: fixed notation for
  // decimal exponents in [-4, 16), scientific otherwise.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  size_t e_pos = sci.find('e');
  std::string mantissa = sci.substr(0, e_pos);
  int exponent = std::stoi(sci.substr(e_pos + 1));
  bool negative = mantissa[0] == '-';
  std::string digits;
  for (char c : mantissa) {
    if (c >= '0' && c <= '9') digits.push_back(c);
  }
  std::string out = negative ? "-" : "";
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      out += "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    } else if (static_cast<size_t>(exponent) + 1 >= digits.size()) {
      out += digits + std::string(static_cast<size_t>(exponent) + 1 - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, exponent + 1) + "." + digits.substr(exponent + 1);
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  char exp_buf[16];
  std::snprintf(exp_buf, sizeof(exp_buf), "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
  return out + exp_buf;
}

void DumpJson(const Value& value, const JsonDumpOptions& options, std::string* out) {
  std::string indent = options.indent_str;
  if (indent.empty() && options.indent > 0) indent = std::string(static_cast<size_t>(options.indent), ' ');
  DumpJsonAt(value, options, indent, 0, out);
}

std::vector<uint32_t> DecodeUtf8(std::string_view s) {
  std::vector<uint32_t> out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    int extra = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : -1;
    if (extra < 0 || i + static_cast<size_t>(extra) >= s.size() + (extra == 0 ? 1 : 0)) {
      // Invalid or truncated byte: keep it as a lone code point (U+DCxx like
      // Python's surrogateescape) so the bytes survive a round trip.
      out.push_back(0xDC00 + c);
      ++i;
      continue;
    }
    uint32_t cp = extra == 0 ? c : (c & (0x3F >> extra));
    bool ok = true;
    for (int k = 1; k <= extra; ++k) {
      unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) { ok = false; break; }
      cp = (cp << 6) | (cc & 0x3F);
    }
    if (!ok) {
      out.push_back(0xDC00 + c);
      ++i;
      continue;
    }
    out.push_back(cp);
    i += static_cast<size_t>(extra) + 1;
  }
  return out;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp >= 0xDC80 && cp <= 0xDCFF) {  // escaped raw byte (see DecodeUtf8)
    out->push_back(static_cast<char>(cp - 0xDC00));
  } else if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace cairn::chat
