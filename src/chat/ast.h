// Abstract syntax tree of a parsed template.
//
// Nodes are immutable after parsing; rendering only reads them, which is what
// makes Template::Render const and thread-safe. One "fat" node type per family
// (expressions, statements) keeps the evaluator a plain switch.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chat/value.h"

namespace cairn::chat {

struct CallArgs;
struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtList = std::vector<std::unique_ptr<Stmt>>;

// Builtin filter / test implementations, resolved at parse time so unknown
// names fail when the template is loaded.
using FilterFn = Value (*)(Evaluator& ev, const Value& input, CallArgs& args);
using TestFn = bool (*)(Evaluator& ev, const Value& input, CallArgs& args);

enum class ExprKind : uint8_t {
  kLiteral,    // literal
  kName,       // name
  kList,       // items
  kTuple,      // items (evaluates to a list)
  kDict,       // items as key, value pairs
  kGetAttr,    // items[0].name
  kGetItem,    // items[0][items[1]]
  kSlice,      // items[0][items[1]:items[2]:items[3]] (null slots allowed)
  kCall,       // items[0](items[1..], kwargs)
  kFilter,     // items[0] | name(items[1..], kwargs)
  kTest,       // items[0] is [not] name(items[1..]); negate
  kUnary,      // op items[0]: "not", "-", "+"
  kBinary,     // items[0] op items[1]: arithmetic, comparison, "in", "~"
  kAnd,
  kOr,
  kCondition,  // items[1] if items[0] else items[2] (items[2] may be null)
};

struct Expr {
  ExprKind kind = ExprKind::kLiteral;
  int line = 0;
  int column = 0;
  std::string name;  // identifier, attribute, filter/test name or operator
  Value literal;
  bool negate = false;
  std::vector<ExprPtr> items;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  FilterFn filter = nullptr;
  TestFn test = nullptr;
};

enum class StmtKind : uint8_t {
  kText,        // text
  kOutput,      // {{ expr }}
  kIf,          // exprs = conditions, bodies = branches (one more body when there is an else)
  kFor,         // targets, exprs[0] = iterable, exprs[1] = optional filter, bodies[0], bodies[1] = else
  kSet,         // targets (or attr target), exprs[0]
  kSetBlock,    // targets[0], bodies[0], exprs[0] = optional filter chain applied to the body
  kMacro,       // name, params, defaults, bodies[0]
  kCallBlock,   // exprs[0] = call, params = caller params, bodies[0] = caller body
  kBreak,
  kContinue,
  kGeneration,  // bodies[0]
};

struct Stmt {
  StmtKind kind = StmtKind::kText;
  int line = 0;
  int column = 0;
  std::string text;                  // kText; macro name
  std::vector<std::string> targets;  // assignment / loop targets
  std::string attr;                  // namespace attribute for `set ns.attr = ...`
  std::vector<ExprPtr> exprs;
  std::vector<StmtList> bodies;
  std::vector<std::string> params;   // macro / caller parameters
  std::vector<ExprPtr> defaults;     // per param, null when none
};

}  // namespace cairn::chat
