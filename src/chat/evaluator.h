// Tree-walking interpreter for one render (internal to src/chat).
//
// An Evaluator lives for exactly one Template::Render call: it owns the output
// buffer, the variable frames and the resource counters, so concurrent renders
// of one Template share nothing mutable.
#pragma once

#include <ctime>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chat/ast.h"
#include "chat/builtins.h"
#include "chat/value.h"

namespace cairn::chat {

struct RenderLimits {
  size_t max_output_bytes = 0;
  int64_t max_steps = 0;  // loop iterations + macro calls + filter element visits
  int max_call_depth = 0;
};

// One variable scope. Frames are stack-allocated by the statement that opens
// them; lookups walk the parent chain.
struct Frame {
  explicit Frame(Frame* parent_frame) : parent(parent_frame) {}
  Frame* parent;
  std::vector<std::pair<std::string, Value>> vars;

  Value* Find(std::string_view name);
  void Set(std::string_view name, Value value);
};

class Evaluator {
 public:
  Evaluator(const Dict& context, const RenderLimits& limits, std::function<std::tm()> clock,
            std::string* out);

  // Renders a whole template body into the output buffer.
  void RenderRoot(const StmtList& body);

  Value Eval(const Expr& expr);
  // Invokes any callable value; `what` names the callee for error messages.
  Value CallValue(const Value& callee, CallArgs& args, std::string_view what);
  // Runtime filter/test dispatch by name (map('upper'), select('odd')...).
  Value ApplyFilter(std::string_view name, const Value& input, CallArgs& args);
  bool ApplyTest(std::string_view name, const Value& input, CallArgs& args);

  // Counts one unit of work against the step budget.
  void Step(int64_t n = 1);
  // Throws when a string about to be produced exceeds the output budget.
  void CheckSize(size_t bytes) const;
  std::tm Now() const { return clock_(); }

  // Jinja2's sandboxed getattr (obj.name) and getitem (obj[key]): attributes
  // fall back to items and vice versa; missing ones are undefined, and any
  // access on undefined throws like Jinja2's UndefinedError.
  Value GetAttr(const Value& obj, const std::string& name);
  Value GetItem(const Value& obj, const Value& key);

  // Renders a macro body with bound parameters (used by MacroValue).
  Value InvokeMacro(const Stmt& macro, CallArgs& args, const Value& caller);
  // Renders a call block's caller body in `frame`.
  Value InvokeCaller(const Stmt& call_block, Frame* frame, CallArgs& args);

 private:
  enum class Flow { kNormal, kBreak, kContinue };

  Flow ExecBody(const StmtList& body);
  Flow Exec(const Stmt& stmt);
  void ExecFor(const Stmt& stmt);
  void ExecSet(const Stmt& stmt);
  Value RenderToString(const StmtList& body, Frame* frame);
  void Emit(std::string_view text);
  void EmitValue(const Value& value);
  void Assign(const std::vector<std::string>& targets, const Value& value, const Stmt& at);

  Value Lookup(const std::string& name);
  Value Slice(const Value& obj, const Value& start, const Value& stop, const Value& step);
  Value Binary(const std::string& op, const Value& a, const Value& b);
  void EvalArgs(const Expr& expr, size_t first, CallArgs* args);
  [[noreturn]] void ErrorAt(const Expr& expr, const std::string& message) const;

  const Dict& context_;
  RenderLimits limits_;
  std::function<std::tm()> clock_;
  std::string* out_;
  Frame root_{nullptr};
  Frame* frame_ = &root_;
  int64_t steps_ = 0;
  int call_depth_ = 0;
};

// Python sequence iteration: list items, dict keys, string characters;
// undefined iterates as empty. Throws for non-iterables.
List Iterate(const Value& value);

// Python `item in container`.
bool Contains(const Value& container, const Value& item);

}  // namespace cairn::chat
