// Jinja2 builtin filters plus Hugging Face's `tojson`.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "chat/builtins.h"
#include "chat/evaluator.h"
#include "chat/percent_format.h"
#include "chat/strings.h"
#include "core/error.h"

namespace cairn::chat {
namespace {

// Jinja2's soft_str: str(), with undefined as "".
std::string SoftStr(const Value& v) { return v.Str(); }

const std::string* OptStr(const CallArgs& a, size_t i, std::string_view name) {
  const Value* v = a.Get(i, name);
  if (v == nullptr || v->is_none()) return nullptr;
  if (!v->is_string()) Fail("argument '{}' must be a string, not {}", name, v->TypeName());
  return &v->AsString();
}

// Jinja2's make_attrgetter: "a.b.0" walks getitem per dotted part.
Value GetPath(Evaluator& ev, const Value& item, const std::string& path) {
  Value cur = item;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    int64_t index = 0;
    auto res = std::from_chars(part.data(), part.data() + part.size(), index);
    if (!part.empty() && res.ec == std::errc() && res.ptr == part.data() + part.size()) {
      cur = ev.GetItem(cur, Value::Int(index));
    } else {
      cur = ev.GetItem(cur, Value::String(part));
    }
    if (dot == std::string::npos) return cur;
    start = dot + 1;
  }
}

// Sort key with Jinja2's default case-insensitive string comparison.
Value SortKey(const Value& v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return Value::String(PyLower(v.AsString()));
  return v;
}

Value Length(Evaluator&, const Value& v, CallArgs& a) {
  a.Expect("length", 0, {});
  int64_t n = v.Length();
  if (n < 0) Fail("object of type '{}' has no len()", v.TypeName());
  return Value::Int(n);
}

Value First(Evaluator&, const Value& v, CallArgs&) {
  List items = Iterate(v);
  return items.empty() ? Value::Undefined("No first item, sequence was empty.") : items.front();
}

Value Last(Evaluator&, const Value& v, CallArgs&) {
  List items = Iterate(v);
  return items.empty() ? Value::Undefined("No last item, sequence was empty.") : items.back();
}

Value Join(Evaluator& ev, const Value& v, CallArgs& a) {
  a.Expect("join", 2, {"d", "attribute"});
  std::string sep = a.GetOr(0, "d", Value::String("")).Str();
  const std::string* attribute = OptStr(a, 1, "attribute");
  std::string out;
  bool first = true;
  for (const Value& item : Iterate(v)) {
    if (!first) out += sep;
    first = false;
    (attribute ? GetPath(ev, item, *attribute) : item).AppendStr(&out);
    ev.CheckSize(out.size());
  }
  return Value::String(std::move(out));
}

Value Map(Evaluator& ev, const Value& v, CallArgs& a) {
  List out;
  if (!v.Truthy()) return Value::MakeList();
  const Value* attribute = nullptr;
  for (const auto& [k, val] : a.keyword) {
    if (k == "attribute") attribute = &val;
  }
  if (attribute != nullptr) {
    Value fallback = Value::Undefined();
    for (const auto& [k, val] : a.keyword) {
      if (k == "default") fallback = val;
    }
    for (const Value& item : Iterate(v)) {
      ev.Step();
      Value got = GetPath(ev, item, attribute->Str());
      out.push_back(got.is_undefined() && !fallback.is_undefined() ? fallback : got);
    }
    return Value::MakeList(std::move(out));
  }
  if (a.positional.empty()) Fail("map requires a filter argument");
  std::string name = a.positional[0].Str();
  CallArgs rest;
  rest.positional.assign(a.positional.begin() + 1, a.positional.end());
  rest.keyword = a.keyword;
  for (const Value& item : Iterate(v)) {
    ev.Step();
    CallArgs copy = rest;
    out.push_back(ev.ApplyFilter(name, item, copy));
  }
  return Value::MakeList(std::move(out));
}

// select/reject/selectattr/rejectattr share Jinja2's select_or_reject.
Value SelectImpl(Evaluator& ev, const Value& v, CallArgs& a, bool by_attr, bool keep) {
  size_t next = 0;
  std::string attribute;
  if (by_attr) {
    if (a.positional.empty()) Fail("Missing parameter for attribute name");
    attribute = a.positional[0].Str();
    next = 1;
  }
  std::string test;
  CallArgs rest;
  bool has_test = a.positional.size() > next;
  if (has_test) {
    test = a.positional[next].Str();
    rest.positional.assign(a.positional.begin() + static_cast<std::ptrdiff_t>(next) + 1, a.positional.end());
    rest.keyword = a.keyword;
    if (FindTest(test) == nullptr) Fail("No test named '{}'", test);
  }
  List out;
  if (!v.Truthy()) return Value::MakeList();
  for (const Value& item : Iterate(v)) {
    ev.Step();
    Value subject = by_attr ? GetPath(ev, item, attribute) : item;
    bool pass;
    if (has_test) {
      CallArgs copy = rest;
      pass = ev.ApplyTest(test, subject, copy);
    } else {
      pass = subject.Truthy();
    }
    if (pass == keep) out.push_back(item);
  }
  return Value::MakeList(std::move(out));
}
Value Select(Evaluator& ev, const Value& v, CallArgs& a) { return SelectImpl(ev, v, a, false, true); }
Value Reject(Evaluator& ev, const Value& v, CallArgs& a) { return SelectImpl(ev, v, a, false, false); }
Value SelectAttr(Evaluator& ev, const Value& v, CallArgs& a) { return SelectImpl(ev, v, a, true, true); }
Value RejectAttr(Evaluator& ev, const Value& v, CallArgs& a) { return SelectImpl(ev, v, a, true, false); }

Value ToList(Evaluator&, const Value& v, CallArgs&) { return Value::MakeList(Iterate(v)); }
Value ToString(Evaluator&, const Value& v, CallArgs&) { return Value::String(SoftStr(v)); }
Value Safe(Evaluator&, const Value& v, CallArgs&) { return Value::String(SoftStr(v)); }

Value Trim(Evaluator&, const Value& v, CallArgs& a) {
  a.Expect("trim", 1, {"chars"});
  return Value::String(PyStrip(SoftStr(v), OptStr(a, 0, "chars"), true, true));
}
Value Upper(Evaluator&, const Value& v, CallArgs&) { return Value::String(PyUpper(SoftStr(v))); }
Value Lower(Evaluator&, const Value& v, CallArgs&) { return Value::String(PyLower(SoftStr(v))); }
Value Capitalize(Evaluator&, const Value& v, CallArgs&) {
  return Value::String(PyCapitalize(SoftStr(v)));
}

// Jinja2's do_title: capitalize each chunk after runs of [-\s({[<].
Value Title(Evaluator&, const Value& v, CallArgs&) {
  std::string s = SoftStr(v);
  std::string out;
  bool word_start = true;
  for (char c : s) {
    bool boundary = c == '-' || IsPyWhitespace(c) || c == '(' || c == '{' || c == '[' || c == '<';
    if (boundary) {
      out.push_back(c);
      word_start = true;
    } else if (word_start) {
      out += PyUpper(std::string(1, c));
      word_start = false;
    } else {
      out += PyLower(std::string(1, c));
    }
  }
  return Value::String(std::move(out));
}

Value Replace(Evaluator& ev, const Value& v, CallArgs& a) {
  a.Expect("replace", 3, {"old", "new", "count"});
  const Value* old_v = a.Get(0, "old");
  const Value* new_v = a.Get(1, "new");
  if (old_v == nullptr || new_v == nullptr) Fail("replace() needs 'old' and 'new' arguments");
  const Value* count = a.Get(2, "count");
  int64_t n = (count == nullptr || count->is_none()) ? -1 : count->AsInt();
  std::string out = PyReplace(SoftStr(v), old_v->Str(), new_v->Str(), n);
  ev.CheckSize(out.size());
  return Value::String(std::move(out));
}

Value Default(Evaluator&, const Value& v, CallArgs& a) {
  a.Expect("default", 2, {"default_value", "boolean"});
  Value fallback = a.GetOr(0, "default_value", Value::String(""));
  bool boolean = a.GetOr(1, "boolean", Value::Bool(false)).Truthy();
  if (v.is_undefined() || (boolean && !v.Truthy())) return fallback;
  return v;
}

Value ToJson(Evaluator& ev, const Value& v, CallArgs& a) {
  a.Expect("tojson", 4, {"ensure_ascii", "indent", "separators", "sort_keys"});
  // HF signature: tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False).
  JsonDumpOptions options;
  options.ensure_ascii = a.GetOr(0, "ensure_ascii", Value::Bool(false)).Truthy();
  if (const Value* indent = a.Get(1, "indent"); indent != nullptr && !indent->is_none()) {
    if (indent->is_string()) {
      options.indent_str = indent->AsString();
      options.indent = 0;
    } else if (indent->is_int()) {
      options.indent = static_cast<int>(std::clamp<int64_t>(indent->AsInt(), 0, 64));
    } else {
      Fail("tojson: indent must be an integer or string");
    }
  }
  if (const Value* sep = a.Get(2, "separators"); sep != nullptr && !sep->is_none()) {
    if (!sep->is_list() || sep->AsList().size() != 2) Fail("tojson: separators must be a pair");
    options.has_separators = true;
    options.item_separator = sep->AsList()[0].Str();
    options.key_separator = sep->AsList()[1].Str();
  }
  options.sort_keys = a.GetOr(3, "sort_keys", Value::Bool(false)).Truthy();
  std::string out;
  DumpJson(v, options, &out);
  ev.CheckSize(out.size());
  return Value::String(std::move(out));
}

Value Items(Evaluator&, const Value& v, CallArgs&) {
  if (v.is_undefined()) return Value::MakeList();
  if (!v.is_dict()) Fail("Can only get item pairs from a mapping.");
  List out;
  for (const auto& [k, val] : v.AsDict()) out.push_back(Value::MakeList({Value::String(k), val}));
  return Value::MakeList(std::move(out));
}

Value DictSort(Evaluator&, const Value& v, CallArgs& a) {
  a.Expect("dictsort", 3, {"case_sensitive", "by", "reverse"});
  if (!v.is_dict()) Fail("dictsort: expected a mapping, got {}", v.TypeName());
  bool case_sensitive = a.GetOr(0, "case_sensitive", Value::Bool(false)).Truthy();
  std::string by = a.GetOr(1, "by", Value::String("key")).Str();
  bool reverse = a.GetOr(2, "reverse", Value::Bool(false)).Truthy();
  size_t pos = by == "key" ? 0 : by == "value" ? 1 : 2;
  if (pos == 2) Fail("You can only sort by either \"key\" or \"value\"");
  List out;
  for (const auto& [k, val] : v.AsDict()) out.push_back(Value::MakeList({Value::String(k), val}));
  std::stable_sort(out.begin(), out.end(), [&](const Value& x, const Value& y) {
    Value kx = SortKey(x.AsList()[pos], case_sensitive);
    Value ky = SortKey(y.AsList()[pos], case_sensitive);
    return reverse ? PyLess(ky, kx) : PyLess(kx, ky);
  });
  return Value::MakeList(std::move(out));
}

Value Sort(Evaluator& ev, const Value& v, CallArgs& a) {
  a.Expect("sort", 3, {"reverse", "case_sensitive", "attribute"});
  bool reverse = a.GetOr(0, "reverse", Value::Bool(false)).Truthy();
  bool case_sensitive = a.GetOr(1, "case_sensitive", Value::Bool(false)).Truthy();
  const std::string* attribute = OptStr(a, 2, "attribute");
  List items = Iterate(v);
  std::vector<std::pair<Value, Value>> keyed;
  for (Value& item : items) {
    Value key = attribute ? GetPath(ev, item, *attribute) : item;
    keyed.emplace_back(SortKey(key, case_sensitive), std::move(item));
  }
  ev.Step(static_cast<int64_t>(keyed.size()));
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
    return reverse ? PyLess(y.first, x.first) : PyLess(x.first, y.first);
  });
  List out;
  for (auto& entry : keyed) out.push_back(std::move(entry.second));
  return Value::MakeList(std::move(out));
}

Value Unique(Evaluator& ev, const Value& v, CallArgs& a) {
  a.Expect("unique", 2, {"case_sensitive", "attribute"});
  bool case_sensitive = a.GetOr(0, "case_sensitive", Value::Bool(false)).Truthy();
  const std::string* attribute = OptStr(a, 1, "attribute");
  List out;
  List seen;
  for (const Value& item : Iterate(v)) {
    ev.Step(static_cast<int64_t>(seen.size()) + 1);
    Value key = SortKey(attribute ? GetPath(ev, item, *attribute) : item, case_sensitive);
    bool dup = false;
    for (const Value& s : seen) dup = dup || s.Equals(key);
    if (!dup) {
      seen.push_back(key);
      out.push_back(item);
    }
  }
  return Value::MakeList(std::move(out));
}

Value MinMax(Evaluator& ev, const Value& v, CallArgs& a, bool want_max) {
  a.Expect(want_max ? "max" : "min", 2, {"case_sensitive", "attribute"});
  bool case_sensitive = a.GetOr(0, "case_sensitive", Value::Bool(false)).Truthy();
  const std::string* attribute = OptStr(a, 1, "attribute");
  List items = Iterate(v);
  if (items.empty()) return Value::Undefined("No aggregated item, sequence was empty.");
  size_t best = 0;
  Value best_key;
  for (size_t i = 0; i < items.size(); ++i) {
    Value key = SortKey(attribute ? GetPath(ev, items[i], *attribute) : items[i], case_sensitive);
    if (i == 0 || (want_max ? PyLess(best_key, key) : PyLess(key, best_key))) {
      best = i;
      best_key = key;
    }
  }
  return items[best];
}
Value Min(Evaluator& ev, const Value& v, CallArgs& a) { return MinMax(ev, v, a, false); }
Value Max(Evaluator& ev, const Value& v, CallArgs& a) { return MinMax(ev, v, a, true); }

Value Sum(Evaluator& ev, const Value& v, CallArgs& a) {
  a.Expect("sum", 2, {"attribute", "start"});
  const std::string* attribute = OptStr(a, 0, "attribute");
  Value total = a.GetOr(1, "start", Value::Int(0));
  for (const Value& item : Iterate(v)) {
    Value x = attribute ? GetPath(ev, item, *attribute) : item;
    if (!x.is_number() || !total.is_number()) Fail("unsupported operand type(s) for +: '{}' and '{}'", total.TypeName(), x.TypeName());
    if (total.is_float() || x.is_float()) total = Value::Float(total.AsDouble() + x.AsDouble());
    else total = Value::Int(total.AsInt() + x.AsInt());
  }
  return total;
}

Value Reverse(Evaluator&, const Value& v, CallArgs&) {
  if (v.is_string()) {
    std::vector<uint32_t> cps = DecodeUtf8(v.AsString());
    std::string out;
    for (auto it = cps.rbegin(); it != cps.rend(); ++it) AppendUtf8(*it, &out);
    return Value::String(std::move(out));
  }
  List items = Iterate(v);
  std::reverse(items.begin(), items.end());
  return Value::MakeList(std::move(items));
}

Value Abs(Evaluator&, const Value& v, CallArgs&) {
  if (v.is_float()) return Value::Float(std::fabs(v.AsDouble()));
  if (v.is_int() || v.is_bool()) {
    int64_t i = v.AsInt();
    return i == INT64_MIN ? Value::Float(-static_cast<double>(i)) : Value::Int(i < 0 ? -i : i);
  }
  Fail("bad operand type for abs(): '{}'", v.TypeName());
}

// Python's int(str): optional sign and surrounding whitespace, underscores
// between digits, the given base.
bool ParsePyInt(std::string s, int base, int64_t* out) {
  s = PyStrip(s, nullptr, true, true);
  std::string digits;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_' && i > 0 && i + 1 < s.size() && s[i - 1] != '_') continue;
    digits.push_back(s[i]);
  }
  if (digits.empty()) return false;
  const char* b = digits.data();
  const char* e = b + digits.size();
  bool neg = false;
  if (*b == '+' || *b == '-') {
    neg = *b == '-';
    ++b;
  }
  uint64_t mag = 0;
  auto res = std::from_chars(b, e, mag, base);
  if (res.ec != std::errc() || res.ptr != e || b == e) return false;
  if (mag > static_cast<uint64_t>(INT64_MAX)) return false;
  *out = neg ? -static_cast<int64_t>(mag) : static_cast<int64_t>(mag);
  return true;
}

bool ParsePyFloat(const std::string& s, double* out) {
  std::string t = PyStrip(s, nullptr, true, true);
  if (t.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(t.c_str(), &end);
  return end == t.c_str() + t.size();
}

Value Int(Evaluator&, const Value& v, CallArgs& a) {
  a.Expect("int", 2, {"default", "base"});
  Value fallback = a.GetOr(0, "default", Value::Int(0));
  int base = static_cast<int>(a.GetOr(1, "base", Value::Int(10)).AsInt());
  if (v.is_int() || v.is_bool()) return Value::Int(v.AsInt());
  if (v.is_float()) {
    double d = v.AsDouble();
    if (!std::isfinite(d) || std::fabs(d) >= 9.2e18) return fallback;
    return Value::Int(static_cast<int64_t>(d));
  }
  if (v.is_string()) {
    int64_t i = 0;
    if (base >= 2 && base <= 36 && ParsePyInt(v.AsString(), base, &i)) return Value::Int(i);
    double d = 0;
    if (ParsePyFloat(v.AsString(), &d) && std::isfinite(d) && std::fabs(d) < 9.2e18) {
      return Value::Int(static_cast<int64_t>(d));
    }
  }
  return fallback;
}

Value Float(Evaluator&, const Value& v, CallArgs& a) {
  a.Expect("float", 1, {"default"});
  Value fallback = a.GetOr(0, "default", Value::Float(0.0));
  if (v.is_number()) return Value::Float(v.AsDouble());
  double d = 0;
  if (v.is_string() && ParsePyFloat(v.AsString(), &d)) return Value::Float(d);
  return fallback;
}

Value Round(Evaluator&, const Value& v, CallArgs& a) {
  a.Expect("round", 2, {"precision", "method"});
  int64_t precision = a.GetOr(0, "precision", Value::Int(0)).AsInt();
  std::string method = a.GetOr(1, "method", Value::String("common")).Str();
  if (!v.is_number()) Fail("round: expected a number, got {}", v.TypeName());
  double scale = std::pow(10.0, static_cast<double>(precision));
  double x = v.AsDouble() * scale;
  double r;
  if (method == "common") {
    r = std::nearbyint(x);  // Python's round(): half to even
  } else if (method == "ceil") {
    r = std::ceil(x);
  } else if (method == "floor") {
    r = std::floor(x);
  } else {
    Fail("method must be common, ceil or floor");
  }
  if (method == "common" && !v.is_float()) return Value::Int(v.AsInt());
  return Value::Float(r / scale);
}

Value Indent(Evaluator& ev, const Value& v, CallArgs& a) {
  a.Expect("indent", 3, {"width", "first", "blank"});
  Value width = a.GetOr(0, "width", Value::Int(4));
  bool first = a.GetOr(1, "first", Value::Bool(false)).Truthy();
  bool blank = a.GetOr(2, "blank", Value::Bool(false)).Truthy();
  std::string indention = width.is_string() ? width.AsString()
                                            : std::string(static_cast<size_t>(std::clamp<int64_t>(width.AsInt(), 0, 256)), ' ');
  std::string s = SoftStr(v) + "\n";  // Jinja2's splitlines quirk
  std::vector<std::string> lines = PySplitLines(s, false);
  std::string out;
  if (blank) {
    for (size_t i = 0; i < lines.size(); ++i) {
      if (i > 0) out += "\n" + indention;
      out += lines[i];
    }
  } else {
    if (!lines.empty()) out = lines[0];
    for (size_t i = 1; i < lines.size(); ++i) {
      out += "\n";
      if (!lines[i].empty()) out += indention;
      out += lines[i];
    }
  }
  if (first) out = indention + out;
  ev.CheckSize(out.size());
  return Value::String(std::move(out));
}

Value WordCount(Evaluator&, const Value& v, CallArgs&) {
  std::string s = SoftStr(v);
  int64_t n = 0;
  bool in_word = false;
  for (unsigned char c : s) {
    bool word = (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z') || c == '_' || c >= 0x80;
    if (word && !in_word) ++n;
    in_word = word;
  }
  return Value::Int(n);
}

Value Escape(Evaluator&, const Value& v, CallArgs&) {
  std::string out;
  for (char c : SoftStr(v)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out.push_back(c);
    }
  }
  return Value::String(std::move(out));
}

// Jinja2's do_format: `value % (kwargs or args)`; not both at once.
Value Format(Evaluator& ev, const Value& v, CallArgs& a) {
  if (!a.positional.empty() && !a.keyword.empty()) {
    Fail("can't handle positional and keyword arguments at the same time");
  }
  if (a.keyword.empty()) return Value::String(PercentFormat(SoftStr(v), a.positional, nullptr, ev));
  Dict kwargs;
  for (const auto& [key, value] : a.keyword) kwargs.Set(key, value);
  const Value mapping = Value::MakeDict(std::move(kwargs));
  return Value::String(PercentFormat(SoftStr(v), List{mapping}, &mapping, ev));
}

// `from_json` (alias `fromjson`): parses a JSON text into values, as
// templates that receive tool arguments or schemas as strings expect.
Value FromJson(Evaluator& ev, const Value& v, CallArgs& a) {
  a.Expect("from_json", 0, {});
  if (!v.is_string()) Fail("from_json: expected a string, got {}", v.TypeName());
  nlohmann::ordered_json json = nlohmann::ordered_json::parse(v.AsString(), nullptr, false);
  if (json.is_discarded()) Fail("from_json: the string is not valid JSON");
  return Value::FromJson(json);
}

// Jinja2's do_truncate with the default policy truncate.leeway = 5; lengths
// count code points.
Value Truncate(Evaluator& ev, const Value& v, CallArgs& a) {
  a.Expect("truncate", 4, {"length", "killwords", "end", "leeway"});
  const int64_t length = a.GetOr(0, "length", Value::Int(255)).AsInt();
  const bool killwords = a.GetOr(1, "killwords", Value::Bool(false)).Truthy();
  const std::string end = a.GetOr(2, "end", Value::String("...")).Str();
  const Value leeway_v = a.GetOr(3, "leeway", Value::None());
  const int64_t leeway = leeway_v.is_none() ? 5 : leeway_v.AsInt();
  const std::vector<uint32_t> end_cps = DecodeUtf8(end);
  const auto end_len = static_cast<int64_t>(end_cps.size());
  if (length < end_len) Fail("expected length >= {}, got {}", end_len, length);
  if (leeway < 0) Fail("expected leeway >= 0, got {}", leeway);
  const std::string s = SoftStr(v);
  const std::vector<uint32_t> cps = DecodeUtf8(s);
  if (static_cast<int64_t>(cps.size()) <= length + leeway) return Value::String(s);
  std::string head;
  for (int64_t i = 0; i < length - end_len; ++i) AppendUtf8(cps[static_cast<size_t>(i)], &head);
  if (!killwords) {
    const size_t space = head.rfind(' ');
    if (space != std::string::npos) head.resize(space);
  }
  head += end;
  ev.CheckSize(head.size());
  return Value::String(std::move(head));
}

// Jinja2's do_batch: lists of `linecount` items, the last padded with
// fill_with when given (a generator there; a list here, same when iterated).
Value Batch(Evaluator& ev, const Value& v, CallArgs& a) {
  a.Expect("batch", 2, {"linecount", "fill_with"});
  const Value* count_v = a.Get(0, "linecount");
  if (count_v == nullptr) Fail("do_batch() missing 1 required positional argument: 'linecount'");
  const int64_t count = count_v->AsInt();
  if (count <= 0) Fail("batch size must be positive, got {}", count);
  const Value fill = a.GetOr(1, "fill_with", Value::None());
  List out, row;
  for (Value& item : Iterate(v)) {
    ev.Step();
    if (static_cast<int64_t>(row.size()) == count) out.push_back(Value::MakeList(std::move(row))), row = {};
    row.push_back(std::move(item));
  }
  if (!row.empty()) {
    while (!fill.is_none() && static_cast<int64_t>(row.size()) < count) row.push_back(fill);
    out.push_back(Value::MakeList(std::move(row)));
  }
  return Value::MakeList(std::move(out));
}

// Jinja2's do_slice: `slices` columns, the first (len % slices) one longer;
// shorter ones padded with fill_with when given.
Value SliceFilter(Evaluator& ev, const Value& v, CallArgs& a) {
  a.Expect("slice", 2, {"slices", "fill_with"});
  const Value* slices_v = a.Get(0, "slices");
  if (slices_v == nullptr) Fail("do_slice() missing 1 required positional argument: 'slices'");
  const int64_t slices = slices_v->AsInt();
  if (slices == 0) Fail("integer division or modulo by zero");
  if (slices < 0 || slices > 100000) Fail("slice count {} is out of range", slices);
  const Value fill = a.GetOr(1, "fill_with", Value::None());
  const List seq = Iterate(v);
  const auto length = static_cast<int64_t>(seq.size());
  const int64_t per_slice = length / slices;
  const int64_t with_extra = length % slices;
  int64_t offset = 0;
  List out;
  for (int64_t k = 0; k < slices; ++k) {
    ev.Step();
    const int64_t start = offset + k * per_slice;
    if (k < with_extra) ++offset;
    const int64_t end = offset + (k + 1) * per_slice;
    List part(seq.begin() + start, seq.begin() + end);
    if (!fill.is_none() && k >= with_extra) part.push_back(fill);
    out.push_back(Value::MakeList(std::move(part)));
  }
  return Value::MakeList(std::move(out));
}

// str.center(width): Python puts the odd padding space on the right unless
// both the padding and the width are odd.
Value Center(Evaluator& ev, const Value& v, CallArgs& a) {
  a.Expect("center", 1, {"width"});
  const std::string s = SoftStr(v);
  const int64_t width = std::min<int64_t>(a.GetOr(0, "width", Value::Int(80)).AsInt(), 1 << 20);
  const auto len = static_cast<int64_t>(DecodeUtf8(s).size());
  if (width <= len) return Value::String(s);
  const int64_t margin = width - len;
  const int64_t left = margin / 2 + (margin & width & 1);
  std::string out(static_cast<size_t>(left), ' ');
  out += s;
  out.append(static_cast<size_t>(margin - left), ' ');
  ev.CheckSize(out.size());
  return Value::String(std::move(out));
}

// Jinja2's do_attr: getattr() only (no item fallback), so a dict key is
// undefined while dict methods are found.
Value Attr(Evaluator& ev, const Value& v, CallArgs& a) {
  a.Expect("attr", 1, {"name"});
  const Value* name = a.Get(0, "name");
  if (name == nullptr) Fail("do_attr() missing 1 required positional argument: 'name'");
  const std::string key = name->Str();
  if (v.is_dict()) {
    Value method = FindMethod(v, key);
    return method.is_undefined()
               ? Value::Undefined(fmt::format("'dict object' has no attribute '{}'", key))
               : method;
  }
  return ev.GetAttr(v, key);
}

struct FilterEntry {
  std::string_view name;
  FilterFn fn;
};

constexpr FilterEntry kFilters[] = {
    {"length", Length}, {"count", Length}, {"first", First}, {"last", Last}, {"join", Join},
    {"map", Map}, {"select", Select}, {"reject", Reject}, {"selectattr", SelectAttr},
    {"rejectattr", RejectAttr}, {"list", ToList}, {"string", ToString}, {"trim", Trim},
    {"upper", Upper}, {"lower", Lower}, {"capitalize", Capitalize}, {"title", Title},
    {"replace", Replace}, {"default", Default}, {"d", Default}, {"tojson", ToJson}, {"from_json", FromJson}, {"fromjson", FromJson},
    {"items", Items}, {"dictsort", DictSort}, {"safe", Safe}, {"int", Int}, {"float", Float},
    {"abs", Abs}, {"round", Round}, {"unique", Unique}, {"sort", Sort}, {"reverse", Reverse},
    {"indent", Indent}, {"wordcount", WordCount}, {"e", Escape}, {"escape", Escape},
    {"min", Min}, {"max", Max}, {"sum", Sum}, {"format", Format}, {"truncate", Truncate},
    {"batch", Batch}, {"slice", SliceFilter}, {"center", Center}, {"attr", Attr},
};

}  // namespace

FilterFn FindFilter(std::string_view name) {
  for (const auto& entry : kFilters) {
    if (entry.name == name) return entry.fn;
  }
  return nullptr;
}

}  // namespace cairn::chat
