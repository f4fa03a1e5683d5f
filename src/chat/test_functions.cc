// Jinja2 tests (`x is defined`, `x is string`, `x is divisibleby 3`, ...).
#include <cmath>

#include "chat/builtins.h"
#include "chat/evaluator.h"
#include "core/error.h"

namespace cairn::chat {
namespace {

const Value& Arg(const CallArgs& args, const char* test) {
  if (args.positional.empty()) Fail("test '{}' needs an argument", test);
  return args.positional[0];
}

bool Defined(Evaluator&, const Value& v, CallArgs&) { return !v.is_undefined(); }
bool UndefinedTest(Evaluator&, const Value& v, CallArgs&) { return v.is_undefined(); }
bool NoneTest(Evaluator&, const Value& v, CallArgs&) { return v.is_none(); }
bool StringTest(Evaluator&, const Value& v, CallArgs&) { return v.is_string(); }
bool NumberTest(Evaluator&, const Value& v, CallArgs&) { return v.is_number(); }
bool IntegerTest(Evaluator&, const Value& v, CallArgs&) { return v.is_int(); }
bool FloatTest(Evaluator&, const Value& v, CallArgs&) { return v.is_float(); }
bool BooleanTest(Evaluator&, const Value& v, CallArgs&) { return v.is_bool(); }
bool TrueTest(Evaluator&, const Value& v, CallArgs&) { return v.is_bool() && v.AsBool(); }
bool FalseTest(Evaluator&, const Value& v, CallArgs&) { return v.is_bool() && !v.AsBool(); }
bool MappingTest(Evaluator&, const Value& v, CallArgs&) { return v.is_dict(); }
// Undefined is iterable (empty) in Jinja2 but not a sequence.
bool IterableTest(Evaluator&, const Value& v, CallArgs&) {
  return v.is_string() || v.is_list() || v.is_dict() || v.is_undefined();
}
bool SequenceTest(Evaluator&, const Value& v, CallArgs&) {
  return v.is_string() || v.is_list() || v.is_dict();
}
bool CallableTest(Evaluator&, const Value& v, CallArgs&) { return v.is_callable(); }
bool EqualTo(Evaluator&, const Value& v, CallArgs& a) { return v.Equals(Arg(a, "equalto")); }
bool NotEqual(Evaluator&, const Value& v, CallArgs& a) { return !v.Equals(Arg(a, "ne")); }
bool LessThan(Evaluator&, const Value& v, CallArgs& a) { return PyLess(v, Arg(a, "lt")); }
bool LessEqual(Evaluator&, const Value& v, CallArgs& a) { return !PyLess(Arg(a, "le"), v); }
bool GreaterThan(Evaluator&, const Value& v, CallArgs& a) { return PyLess(Arg(a, "gt"), v); }
bool GreaterEqual(Evaluator&, const Value& v, CallArgs& a) { return !PyLess(v, Arg(a, "ge")); }
bool InTest(Evaluator&, const Value& v, CallArgs& a) { return Contains(Arg(a, "in"), v); }
bool SameAs(Evaluator&, const Value& v, CallArgs& a) { return v.SameAs(Arg(a, "sameas")); }

int64_t IntOf(const Value& v, const char* test) {
  if (v.is_int() || v.is_bool()) return v.AsInt();
  if (v.is_float() && std::floor(v.AsDouble()) == v.AsDouble()) return static_cast<int64_t>(v.AsDouble());
  if (v.is_undefined()) Fail("{}", UndefinedMessage(v));
  Fail("test '{}' needs a number, got '{}'", test, v.TypeName());
}
bool Odd(Evaluator&, const Value& v, CallArgs&) { return IntOf(v, "odd") % 2 != 0; }
bool Even(Evaluator&, const Value& v, CallArgs&) { return IntOf(v, "even") % 2 == 0; }
bool DivisibleBy(Evaluator&, const Value& v, CallArgs& a) {
  int64_t d = IntOf(Arg(a, "divisibleby"), "divisibleby");
  if (d == 0) Fail("integer division or modulo by zero");
  return d == -1 || IntOf(v, "divisibleby") % d == 0;
}
bool LowerTest(Evaluator&, const Value& v, CallArgs&) {
  if (!v.is_string()) return false;
  bool cased = false;
  for (char c : v.AsString()) {
    if (c >= 'A' && c <= 'Z') return false;
    cased = cased || (c >= 'a' && c <= 'z');
  }
  return cased;
}
bool UpperTest(Evaluator&, const Value& v, CallArgs&) {
  if (!v.is_string()) return false;
  bool cased = false;
  for (char c : v.AsString()) {
    if (c >= 'a' && c <= 'z') return false;
    cased = cased || (c >= 'A' && c <= 'Z');
  }
  return cased;
}
bool EscapedTest(Evaluator&, const Value&, CallArgs&) { return false; }
bool FilterTest(Evaluator&, const Value& v, CallArgs&) {
  return v.is_string() && FindFilter(v.AsString()) != nullptr;
}
bool TestTest(Evaluator&, const Value& v, CallArgs&) {
  return v.is_string() && FindTest(v.AsString()) != nullptr;
}

struct TestEntry {
  std::string_view name;
  TestFn fn;
};

constexpr TestEntry kTests[] = {
    {"defined", Defined}, {"undefined", UndefinedTest}, {"none", NoneTest},
    {"string", StringTest}, {"number", NumberTest}, {"integer", IntegerTest},
    {"float", FloatTest}, {"boolean", BooleanTest}, {"true", TrueTest}, {"false", FalseTest},
    {"mapping", MappingTest}, {"iterable", IterableTest}, {"sequence", SequenceTest},
    {"callable", CallableTest}, {"equalto", EqualTo}, {"eq", EqualTo}, {"==", EqualTo},
    {"ne", NotEqual}, {"!=", NotEqual}, {"lt", LessThan}, {"lessthan", LessThan},
    {"<", LessThan}, {"le", LessEqual}, {"<=", LessEqual}, {"gt", GreaterThan},
    {"greaterthan", GreaterThan}, {">", GreaterThan}, {"ge", GreaterEqual},
    {">=", GreaterEqual}, {"in", InTest}, {"sameas", SameAs}, {"odd", Odd}, {"even", Even},
    {"divisibleby", DivisibleBy}, {"lower", LowerTest}, {"upper", UpperTest},
    {"escaped", EscapedTest}, {"filter", FilterTest}, {"test", TestTest},
};

}  // namespace

TestFn FindTest(std::string_view name) {
  for (const auto& entry : kTests) {
    if (entry.name == name) return entry.fn;
  }
  return nullptr;
}

}  // namespace cairn::chat
