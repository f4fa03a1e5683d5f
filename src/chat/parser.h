// Recursive-descent parser: tokens to AST, following Jinja2's grammar and
// operator precedence. Anything the engine does not implement (include,
// extends, blocks, imports, raw, with, filter blocks, unknown filters/tests)
// is rejected here with "line:column" so a bad template fails at model load,
// not on the first request.
#pragma once

#include <string_view>

#include "chat/ast.h"

namespace cairn::chat {

// Nesting deeper than this (expressions or blocks) is rejected as hostile.
inline constexpr int kMaxParseDepth = 128;

// Parses normalized template source (see NormalizeTemplateSource).
StmtList ParseTemplate(std::string_view source);

}  // namespace cairn::chat
