// Python's printf-style string formatting, `fmt % args` (internal to src/chat):
// used by the `%` operator on strings and by the `format` filter.
#pragma once

#include <string>
#include <string_view>

#include "chat/value.h"

namespace cairn::chat {

class Evaluator;

// `fmt % args` with CPython's rules: `args` are the tuple items (a non-tuple
// right operand is passed as one item); `mapping`, when not null, serves the
// %(key)s forms. Supports the flags "-+ #0", width and precision (numbers or
// "*"), and the conversions s r a d i u o x X e E f F g G c %. Throws
// cairn::Error with Python's TypeError/ValueError/KeyError wording.
std::string PercentFormat(std::string_view fmt, const List& args, const Value* mapping,
                          Evaluator& ev);

}  // namespace cairn::chat
