// Python methods of str, dict and list values reachable from templates
// (message.content.split('</think>'), message.get('tool_calls'), ...).
#include <memory>

#include "chat/brace_format.h"
#include "chat/builtins.h"
#include "chat/evaluator.h"
#include "chat/strings.h"
#include "core/error.h"

namespace cairn::chat {
namespace {

using MethodFn = Value (*)(Evaluator& ev, const Value& self, CallArgs& args);

struct MethodEntry {
  std::string_view name;
  MethodFn fn;  // nullptr: exists but mutates, so the immutable sandbox blocks it
};

class BoundMethod : public Callable {
 public:
  BoundMethod(Value self, const MethodEntry* entry) : self_(std::move(self)), entry_(entry) {}
  Value Call(Evaluator& ev, CallArgs& args) const override {
    if (entry_->fn == nullptr) {
      Fail("access to attribute '{}' of '{}' object is unsafe.", entry_->name, self_.TypeName());
    }
    return entry_->fn(ev, self_, args);
  }
  std::string Name() const override { return std::string(entry_->name); }

 private:
  Value self_;
  const MethodEntry* entry_;
};

const std::string* OptionalString(const CallArgs& args, size_t index, std::string_view name,
                                  const char* method) {
  const Value* v = args.Get(index, name);
  if (v == nullptr || v->is_none()) return nullptr;
  if (!v->is_string()) Fail("{}() argument must be str or None, not {}", method, v->TypeName());
  return &v->AsString();
}

const std::string& RequiredString(const CallArgs& args, size_t index, std::string_view name,
                                  const char* method) {
  const Value* v = args.Get(index, name);
  if (v == nullptr) Fail("{}() missing required argument '{}'", method, name);
  if (!v->is_string()) Fail("{}() argument must be str, not {}", method, v->TypeName());
  return v->AsString();
}

int64_t OptionalInt(const CallArgs& args, size_t index, std::string_view name, int64_t fallback) {
  const Value* v = args.Get(index, name);
  if (v == nullptr || v->is_none()) return fallback;
  if (!v->is_int() && !v->is_bool()) Fail("'{}' object cannot be interpreted as an integer", v->TypeName());
  return v->AsInt();
}

Value StringList(std::vector<std::string> parts) {
  List out;
  out.reserve(parts.size());
  for (auto& p : parts) out.push_back(Value::String(std::move(p)));
  return Value::MakeList(std::move(out));
}

// ---- str ----
Value StrFormat(Evaluator& ev, const Value& s, CallArgs& a) {
  return Value::String(BraceFormat(s.AsString(), a.positional, a.keyword, ev));
}
Value StrStrip(Evaluator&, const Value& s, CallArgs& a) {
  return Value::String(PyStrip(s.AsString(), OptionalString(a, 0, "chars", "strip"), true, true));
}
Value StrLstrip(Evaluator&, const Value& s, CallArgs& a) {
  return Value::String(PyStrip(s.AsString(), OptionalString(a, 0, "chars", "lstrip"), true, false));
}
Value StrRstrip(Evaluator&, const Value& s, CallArgs& a) {
  return Value::String(PyStrip(s.AsString(), OptionalString(a, 0, "chars", "rstrip"), false, true));
}
Value SplitImpl(const Value& s, CallArgs& a, bool right) {
  const std::string* sep = OptionalString(a, 0, "sep", right ? "rsplit" : "split");
  if (sep != nullptr && sep->empty()) Fail("empty separator");
  return StringList(PySplit(s.AsString(), sep, OptionalInt(a, 1, "maxsplit", -1), right));
}
Value StrSplit(Evaluator&, const Value& s, CallArgs& a) { return SplitImpl(s, a, false); }
Value StrRsplit(Evaluator&, const Value& s, CallArgs& a) { return SplitImpl(s, a, true); }
Value StrSplitLines(Evaluator&, const Value& s, CallArgs& a) {
  return StringList(PySplitLines(s.AsString(), a.GetOr(0, "keepends", Value::Bool(false)).Truthy()));
}
Value StrUpper(Evaluator&, const Value& s, CallArgs&) { return Value::String(PyUpper(s.AsString())); }
Value StrLower(Evaluator&, const Value& s, CallArgs&) { return Value::String(PyLower(s.AsString())); }
Value StrTitle(Evaluator&, const Value& s, CallArgs&) { return Value::String(PyTitle(s.AsString())); }
Value StrCapitalize(Evaluator&, const Value& s, CallArgs&) {
  return Value::String(PyCapitalize(s.AsString()));
}

// startswith/endswith accept a string or a tuple (list) of strings.
Value AffixImpl(const Value& s, CallArgs& a, bool prefix) {
  const Value* arg = a.Get(0, "prefix");
  if (arg == nullptr) Fail("{}() takes at least 1 argument (0 given)", prefix ? "startswith" : "endswith");
  std::vector<std::uint32_t> cps;
  std::string_view text = s.AsString();
  std::string sliced;
  if (a.positional.size() > 1) {
    cps = DecodeUtf8(text);
    int64_t n = static_cast<int64_t>(cps.size());
    auto norm = [n](int64_t i) { return i < 0 ? std::max<int64_t>(0, i + n) : std::min(i, n); };
    int64_t b = norm(OptionalInt(a, 1, "start", 0));
    int64_t e = norm(OptionalInt(a, 2, "end", n));
    for (int64_t i = b; i < e; ++i) AppendUtf8(cps[static_cast<size_t>(i)], &sliced);
    text = sliced;
  }
  auto match = [&](const Value& v) {
    if (!v.is_string()) Fail("{} first arg must be str or a tuple of str, not {}",
                             prefix ? "startswith" : "endswith", v.TypeName());
    const std::string& x = v.AsString();
    if (x.size() > text.size()) return false;
    return prefix ? text.compare(0, x.size(), x) == 0
                  : text.compare(text.size() - x.size(), x.size(), x) == 0;
  };
  if (arg->is_list()) {
    for (const Value& v : arg->AsList()) {
      if (match(v)) return Value::Bool(true);
    }
    return Value::Bool(false);
  }
  return Value::Bool(match(*arg));
}
Value StrStartswith(Evaluator&, const Value& s, CallArgs& a) { return AffixImpl(s, a, true); }
Value StrEndswith(Evaluator&, const Value& s, CallArgs& a) { return AffixImpl(s, a, false); }

Value StrReplace(Evaluator& ev, const Value& s, CallArgs& a) {
  const std::string& old = RequiredString(a, 0, "old", "replace");
  const std::string& neu = RequiredString(a, 1, "new", "replace");
  std::string out = PyReplace(s.AsString(), old, neu, OptionalInt(a, 2, "count", -1));
  ev.CheckSize(out.size());
  return Value::String(std::move(out));
}

Value FindImpl(const Value& s, CallArgs& a, bool right, bool count) {
  const std::string& sub = RequiredString(a, 0, "sub", count ? "count" : right ? "rfind" : "find");
  const std::string& text = s.AsString();
  if (count) {
    if (sub.empty()) return Value::Int(s.Length() + 1);
    int64_t n = 0;
    for (size_t at = text.find(sub); at != std::string::npos; at = text.find(sub, at + sub.size())) ++n;
    return Value::Int(n);
  }
  size_t at = right ? text.rfind(sub) : text.find(sub);
  return Value::Int(at == std::string::npos ? -1 : CodePointIndex(text, at));
}
Value StrFind(Evaluator&, const Value& s, CallArgs& a) { return FindImpl(s, a, false, false); }
Value StrRfind(Evaluator&, const Value& s, CallArgs& a) { return FindImpl(s, a, true, false); }
Value StrCount(Evaluator&, const Value& s, CallArgs& a) { return FindImpl(s, a, false, true); }

Value StrJoin(Evaluator& ev, const Value& s, CallArgs& a) {
  const Value* items = a.Get(0, "iterable");
  if (items == nullptr) Fail("join() takes exactly one argument (0 given)");
  std::string out;
  size_t i = 0;
  for (const Value& item : Iterate(*items)) {
    if (!item.is_string()) Fail("sequence item {}: expected str instance, {} found", i, item.TypeName());
    if (i++ > 0) out += s.AsString();
    out += item.AsString();
    ev.CheckSize(out.size());
  }
  return Value::String(std::move(out));
}

template <bool (*Pred)(unsigned char)>
Value StrIs(Evaluator&, const Value& s, CallArgs&) {
  const std::string& t = s.AsString();
  if (t.empty()) return Value::Bool(false);
  for (unsigned char c : t) {
    if (!Pred(c)) return Value::Bool(false);
  }
  return Value::Bool(true);
}
bool IsDigitByte(unsigned char c) { return c >= '0' && c <= '9'; }
bool IsAlphaByte(unsigned char c) { return (c | 32) >= 'a' && (c | 32) <= 'z'; }
bool IsAlnumByte(unsigned char c) { return IsDigitByte(c) || IsAlphaByte(c); }
bool IsSpaceByte(unsigned char c) { return IsPyWhitespace(static_cast<char>(c)); }

// ---- dict ----
Value DictGet(Evaluator&, const Value& d, CallArgs& a) {
  const Value* key = a.Get(0, "key");
  if (key == nullptr) Fail("get expected at least 1 argument, got 0");
  if (key->is_string()) {
    if (const Value* v = d.AsDict().Find(key->AsString())) return *v;
  }
  return a.GetOr(1, "default", Value::None());
}
Value DictItems(Evaluator&, const Value& d, CallArgs&) {
  List out;
  for (const auto& [k, v] : d.AsDict()) out.push_back(Value::MakeList({Value::String(k), v}));
  return Value::MakeList(std::move(out));
}
Value DictKeys(Evaluator&, const Value& d, CallArgs&) {
  List out;
  for (const auto& entry : d.AsDict()) out.push_back(Value::String(entry.first));
  return Value::MakeList(std::move(out));
}
Value DictValues(Evaluator&, const Value& d, CallArgs&) {
  List out;
  for (const auto& entry : d.AsDict()) out.push_back(entry.second);
  return Value::MakeList(std::move(out));
}
Value DictCopy(Evaluator&, const Value& d, CallArgs&) { return Value::MakeDict(d.AsDict()); }

// ---- list ----
Value ListCount(Evaluator&, const Value& l, CallArgs& a) {
  const Value* x = a.Get(0, "value");
  if (x == nullptr) Fail("count() takes exactly one argument (0 given)");
  int64_t n = 0;
  for (const Value& v : l.AsList()) n += v.Equals(*x);
  return Value::Int(n);
}
Value ListIndex(Evaluator&, const Value& l, CallArgs& a) {
  const Value* x = a.Get(0, "value");
  if (x == nullptr) Fail("index() takes at least 1 argument (0 given)");
  for (size_t i = 0; i < l.AsList().size(); ++i) {
    if (l.AsList()[i].Equals(*x)) return Value::Int(static_cast<int64_t>(i));
  }
  Fail("value is not in list");
}
Value ListCopy(Evaluator&, const Value& l, CallArgs&) { return Value::MakeList(l.AsList()); }

constexpr MethodEntry kStrMethods[] = {
    {"format", StrFormat}, {"strip", StrStrip}, {"lstrip", StrLstrip}, {"rstrip", StrRstrip},
    {"split", StrSplit}, {"rsplit", StrRsplit}, {"splitlines", StrSplitLines},
    {"upper", StrUpper}, {"lower", StrLower}, {"title", StrTitle},
    {"capitalize", StrCapitalize}, {"startswith", StrStartswith}, {"endswith", StrEndswith},
    {"replace", StrReplace}, {"find", StrFind}, {"rfind", StrRfind}, {"count", StrCount},
    {"join", StrJoin}, {"isdigit", StrIs<IsDigitByte>}, {"isalpha", StrIs<IsAlphaByte>},
    {"isalnum", StrIs<IsAlnumByte>}, {"isspace", StrIs<IsSpaceByte>},
};
constexpr MethodEntry kDictMethods[] = {
    {"get", DictGet}, {"items", DictItems}, {"keys", DictKeys}, {"values", DictValues},
    {"copy", DictCopy}, {"pop", nullptr}, {"popitem", nullptr}, {"update", nullptr},
    {"setdefault", nullptr}, {"clear", nullptr}, {"fromkeys", nullptr},
};
constexpr MethodEntry kListMethods[] = {
    {"count", ListCount}, {"index", ListIndex}, {"copy", ListCopy}, {"append", nullptr},
    {"extend", nullptr}, {"insert", nullptr}, {"pop", nullptr}, {"remove", nullptr},
    {"reverse", nullptr}, {"sort", nullptr}, {"clear", nullptr},
};

template <size_t N>
const MethodEntry* FindIn(const MethodEntry (&table)[N], std::string_view name) {
  for (const auto& entry : table) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

}  // namespace

Value FindMethod(const Value& receiver, std::string_view name) {
  const MethodEntry* entry = nullptr;
  if (receiver.is_string()) entry = FindIn(kStrMethods, name);
  else if (receiver.is_dict()) entry = FindIn(kDictMethods, name);
  else if (receiver.is_list()) entry = FindIn(kListMethods, name);
  if (entry == nullptr) return Value::Undefined();
  return Value::MakeCallable(std::make_shared<BoundMethod>(receiver, entry));
}

}  // namespace cairn::chat
