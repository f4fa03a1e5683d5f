// Builtin filters, tests, globals and methods of the template language
// (internal to src/chat). Implementations live in filters.cc, tests.cc,
// globals.cc and methods.cc.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chat/ast.h"
#include "chat/value.h"

namespace cairn::chat {

// Arguments of one call: positional values, then keyword values.
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;

  // Python-style binding: the argument at `index` or named `name`, or null.
  const Value* Get(size_t index, std::string_view name) const;
  Value GetOr(size_t index, std::string_view name, Value fallback) const;
  // Throws when more positional arguments than `max` or unknown keywords
  // (other than those listed) were passed.
  void Expect(std::string_view function, size_t max_positional,
              std::initializer_list<std::string_view> keywords) const;
};

// nullptr when there is no such filter / test.
FilterFn FindFilter(std::string_view name);
TestFn FindTest(std::string_view name);

// Names of the template globals (range, namespace, dict, raise_exception,
// strftime_now, ...); Value::Undefined() when `name` is not one.
Value FindGlobal(std::string_view name);

// Attribute lookup of Python methods on str/dict/list receivers, like
// Jinja2's sandboxed getattr: returns a bound method, or undefined when the
// type has no such attribute. Mutating methods (list.append, dict.update...)
// exist but fail when called, as in ImmutableSandboxedEnvironment.
Value FindMethod(const Value& receiver, std::string_view name);

// Jinja2's Undefined error message for `value` ("'x' is undefined").
std::string UndefinedMessage(const Value& value);

// Python's str.split(None)/strip() whitespace test for one ASCII byte.
bool IsPyWhitespace(char c);

}  // namespace cairn::chat
