// Python's str.format (`"{}: {:>8.2f}".format(name, x)`), internal to src/chat:
// the `format` method of strings.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chat/value.h"

namespace cairn::chat {

class Evaluator;

// Replacement fields `{}` (automatic numbering), `{0}`, `{name}`, optionally
// with `[index]` / `[key]` / `.attr` lookups, a conversion (`!s`, `!r`) and a
// format spec `[[fill]align][sign][#][0][width][.precision][type]` with the
// types s d x X o b e E f F g G % (and none). `{{` and `}}` are literal braces.
// Nested replacement fields inside a spec are not supported (an error says so).
// Throws cairn::Error with Python's IndexError/KeyError/ValueError wording.
std::string BraceFormat(std::string_view format, const List& positional,
                        const std::vector<std::pair<std::string, Value>>& keyword, Evaluator& ev);

}  // namespace cairn::chat
