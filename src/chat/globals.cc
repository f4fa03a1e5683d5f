// Template globals (range, namespace, dict, raise_exception, strftime_now)
// and CallArgs binding helpers.
#include <ctime>
#include <memory>

#include "chat/builtins.h"
#include "chat/evaluator.h"
#include "chat/template.h"
#include "core/error.h"

namespace cairn::chat {
namespace {

// Jinja2's sandbox caps range() at this many items (MAX_RANGE).
constexpr int64_t kMaxRange = 100000;

using GlobalFn = Value (*)(Evaluator& ev, CallArgs& args);

class GlobalValue : public Callable {
 public:
  GlobalValue(const char* name, GlobalFn fn) : name_(name), fn_(fn) {}
  Value Call(Evaluator& ev, CallArgs& args) const override { return fn_(ev, args); }
  std::string Name() const override { return name_; }

 private:
  const char* name_;
  GlobalFn fn_;
};

int64_t IntArg(const Value& v, const char* function) {
  if (!v.is_int() && !v.is_bool()) {
    Fail("{}(): '{}' object cannot be interpreted as an integer", function, v.TypeName());
  }
  return v.AsInt();
}

Value Range(Evaluator& ev, CallArgs& args) {
  args.Expect("range", 3, {});
  if (args.positional.empty()) Fail("range expected at least 1 argument, got 0");
  int64_t start = 0, stop = 0, step = 1;
  if (args.positional.size() == 1) {
    stop = IntArg(args.positional[0], "range");
  } else {
    start = IntArg(args.positional[0], "range");
    stop = IntArg(args.positional[1], "range");
    if (args.positional.size() == 3) step = IntArg(args.positional[2], "range");
  }
  if (step == 0) Fail("range() arg 3 must not be zero");
  // Length computed in double to avoid overflow on hostile bounds.
  double span = (static_cast<double>(stop) - static_cast<double>(start)) / static_cast<double>(step);
  if (span > static_cast<double>(kMaxRange)) {
    Fail("Range too big. The sandbox blocks ranges larger than MAX_RANGE ({}).", kMaxRange);
  }
  List out;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) out.push_back(Value::Int(i));
  ev.Step(static_cast<int64_t>(out.size()));
  return Value::MakeList(std::move(out));
}

// dict(*args, **kwargs) as Python builds it: a mapping or a list of pairs,
// then keyword arguments.
Dict BuildDict(CallArgs& args, const char* function) {
  if (args.positional.size() > 1) {
    Fail("{} expected at most 1 argument, got {}", function, args.positional.size());
  }
  Dict dict;
  if (!args.positional.empty()) {
    const Value& src = args.positional[0];
    if (src.is_dict() || src.is_namespace()) {
      for (const auto& [k, v] : src.AsDict()) dict.Set(k, v);
    } else if (src.is_list()) {
      for (const Value& pair : src.AsList()) {
        if (!pair.is_list() || pair.AsList().size() != 2 || !pair.AsList()[0].is_string()) {
          Fail("{}: sequence elements must be (string key, value) pairs", function);
        }
        dict.Set(pair.AsList()[0].AsString(), pair.AsList()[1]);
      }
    } else {
      Fail("'{}' object is not iterable", src.TypeName());
    }
  }
  for (auto& [k, v] : args.keyword) dict.Set(k, v);
  return dict;
}

Value MakeNamespace(Evaluator&, CallArgs& args) {
  Dict dict = BuildDict(args, "namespace");
  for (const auto& entry : dict) {
    if (!entry.first.empty() && entry.first[0] == '_') {
      Fail("Chat templates cannot store underscore-prefixed attributes on a namespace, but got '{}'. "
           "Please rename the attribute.", entry.first);
    }
  }
  return Value::MakeNamespace(std::move(dict));
}

Value MakeDictGlobal(Evaluator&, CallArgs& args) { return Value::MakeDict(BuildDict(args, "dict")); }

Value RaiseException(Evaluator&, CallArgs& args) {
  const Value* message = args.Get(0, "message");
  throw TemplateRaisedError(message ? message->Str() : std::string());
}

Value StrftimeNow(Evaluator& ev, CallArgs& args) {
  const Value* format = args.Get(0, "format");
  if (format == nullptr || !format->is_string()) Fail("strftime_now() argument must be a string");
  if (format->AsString().empty()) return Value::String("");
  std::tm tm = ev.Now();
  std::string buffer(format->AsString().size() * 4 + 64, '\0');
  for (int attempt = 0; attempt < 8; ++attempt) {
    size_t n = std::strftime(buffer.data(), buffer.size(), format->AsString().c_str(), &tm);
    if (n > 0) {
      buffer.resize(n);
      return Value::String(std::move(buffer));
    }
    if (buffer.size() > (1u << 20)) break;
    buffer.resize(buffer.size() * 4);
  }
  return Value::String("");
}

}  // namespace

const Value* CallArgs::Get(size_t index, std::string_view name) const {
  if (index < positional.size()) return &positional[index];
  for (const auto& [key, value] : keyword) {
    if (key == name) return &value;
  }
  return nullptr;
}

Value CallArgs::GetOr(size_t index, std::string_view name, Value fallback) const {
  const Value* v = Get(index, name);
  return v ? *v : std::move(fallback);
}

void CallArgs::Expect(std::string_view function, size_t max_positional,
                      std::initializer_list<std::string_view> keywords) const {
  if (positional.size() > max_positional) {
    Fail("{}() takes at most {} argument(s) ({} given)", function, max_positional, positional.size());
  }
  for (const auto& [key, value] : keyword) {
    bool known = false;
    for (auto k : keywords) known = known || k == key;
    if (!known) Fail("{}() got an unexpected keyword argument '{}'", function, key);
  }
}

Value FindGlobal(std::string_view name) {
  static const Value kRange = Value::MakeCallable(std::make_shared<GlobalValue>("range", Range));
  static const Value kNamespace =
      Value::MakeCallable(std::make_shared<GlobalValue>("namespace", MakeNamespace));
  static const Value kDict = Value::MakeCallable(std::make_shared<GlobalValue>("dict", MakeDictGlobal));
  static const Value kRaise =
      Value::MakeCallable(std::make_shared<GlobalValue>("raise_exception", RaiseException));
  static const Value kStrftime =
      Value::MakeCallable(std::make_shared<GlobalValue>("strftime_now", StrftimeNow));
  if (name == "range") return kRange;
  if (name == "namespace") return kNamespace;
  if (name == "dict") return kDict;
  if (name == "raise_exception") return kRaise;
  if (name == "strftime_now") return kStrftime;
  return Value::Undefined();
}

std::string UndefinedMessage(const Value& value) {
  const std::string& hint = value.undefined_hint();
  return hint.empty() ? "undefined value" : hint;
}

}  // namespace cairn::chat
