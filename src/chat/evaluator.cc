#include "chat/evaluator.h"

#include <cmath>
#include <memory>

#include "chat/percent_format.h"
#include "chat/template.h"
#include "core/error.h"

namespace cairn::chat {
namespace {

// Errors that already carry a template location pass through unchanged.
class LocatedError : public Error {
 public:
  using Error::Error;
};

class MacroValue : public Callable {
 public:
  explicit MacroValue(const Stmt* def) : def_(def) {}
  Value Call(Evaluator& ev, CallArgs& args) const override {
    return ev.InvokeMacro(*def_, args, Value::Undefined("'caller' is undefined"));
  }
  std::string Name() const override { return def_->text; }
  const Stmt* def() const { return def_; }

 private:
  const Stmt* def_;
};

// `caller` inside a macro invoked from {% call %}; only valid while the call
// block runs (its frame lives on the C++ stack).
class CallerValue : public Callable {
 public:
  CallerValue(const Stmt* block, Frame* frame, std::shared_ptr<bool> alive)
      : block_(block), frame_(frame), alive_(std::move(alive)) {}
  Value Call(Evaluator& ev, CallArgs& args) const override {
    if (!*alive_) Fail("'caller' called after its call block ended");
    return ev.InvokeCaller(*block_, frame_, args);
  }
  std::string Name() const override { return "caller"; }

 private:
  const Stmt* block_;
  Frame* frame_;
  std::shared_ptr<bool> alive_;
};

class CycleValue : public Callable {
 public:
  explicit CycleValue(int64_t index) : index_(index) {}
  Value Call(Evaluator&, CallArgs& args) const override {
    if (args.positional.empty()) Fail("no items for cycling given");
    return args.positional[static_cast<size_t>(index_) % args.positional.size()];
  }
  std::string Name() const override { return "loop.cycle"; }

 private:
  int64_t index_;
};

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t FloorMod(int64_t a, int64_t b) {
  int64_t m = a % b;
  if (m != 0 && ((m < 0) != (b < 0))) m += b;
  return m;
}

std::string RepeatString(const std::string& s, int64_t n, const Evaluator& ev) {
  if (n <= 0 || s.empty()) return {};
  ev.CheckSize(s.size() * static_cast<size_t>(n) / static_cast<size_t>(n) == s.size()
                   ? s.size() * static_cast<size_t>(n)
                   : SIZE_MAX);
  std::string out;
  out.reserve(s.size() * static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out += s;
  return out;
}

}  // namespace

Value* Frame::Find(std::string_view name) {
  for (auto& [key, value] : vars) {
    if (key == name) return &value;
  }
  return nullptr;
}

void Frame::Set(std::string_view name, Value value) {
  if (Value* existing = Find(name)) {
    *existing = std::move(value);
  } else {
    vars.emplace_back(std::string(name), std::move(value));
  }
}

List Iterate(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kList: return value.AsList();
    case Value::Kind::kDict: {
      List keys;
      keys.reserve(value.AsDict().size());
      for (const auto& entry : value.AsDict()) keys.push_back(Value::String(entry.first));
      return keys;
    }
    case Value::Kind::kString: {
      List chars;
      std::string ch;
      for (uint32_t cp : DecodeUtf8(value.AsString())) {
        ch.clear();
        AppendUtf8(cp, &ch);
        chars.push_back(Value::String(ch));
      }
      return chars;
    }
    case Value::Kind::kUndefined: return {};
    default: Fail("'{}' object is not iterable", value.TypeName());
  }
}

bool Contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Value::Kind::kString:
      if (!item.is_string()) {
        Fail("'in <string>' requires string as left operand, not {}", item.TypeName());
      }
      return container.AsString().find(item.AsString()) != std::string::npos;
    case Value::Kind::kList:
      for (const Value& v : container.AsList()) {
        if (v.Equals(item)) return true;
      }
      return false;
    case Value::Kind::kDict:
      return item.is_string() && container.AsDict().Find(item.AsString()) != nullptr;
    case Value::Kind::kUndefined: return false;
    default: Fail("argument of type '{}' is not iterable", container.TypeName());
  }
}

Evaluator::Evaluator(const Dict& context, const RenderLimits& limits,
                     std::function<std::tm()> clock, std::string* out)
    : context_(context), limits_(limits), clock_(std::move(clock)), out_(out) {}

void Evaluator::RenderRoot(const StmtList& body) { ExecBody(body); }

void Evaluator::Step(int64_t n) {
  steps_ += n;
  if (steps_ > limits_.max_steps) {
    Fail("template exceeded its work limit of {} steps (runaway loop?)", limits_.max_steps);
  }
}

void Evaluator::CheckSize(size_t bytes) const {
  if (bytes > limits_.max_output_bytes) {
    Fail("template output exceeds the limit of {} bytes", limits_.max_output_bytes);
  }
}

void Evaluator::Emit(std::string_view text) {
  CheckSize(out_->size() + text.size());
  out_->append(text);
}

void Evaluator::EmitValue(const Value& value) {
  if (value.is_string()) {
    Emit(value.AsString());
  } else {
    std::string s;
    value.AppendStr(&s);
    Emit(s);
  }
}

void Evaluator::ErrorAt(const Expr& expr, const std::string& message) const {
  throw LocatedError(fmt::format("template error at {}:{}: {}", expr.line, expr.column, message));
}

Evaluator::Flow Evaluator::ExecBody(const StmtList& body) {
  for (const auto& stmt : body) {
    Flow flow = Exec(*stmt);
    if (flow != Flow::kNormal) return flow;
  }
  return Flow::kNormal;
}

Evaluator::Flow Evaluator::Exec(const Stmt& stmt) {
  try {
    switch (stmt.kind) {
      case StmtKind::kText: Emit(stmt.text); return Flow::kNormal;
      case StmtKind::kOutput: EmitValue(Eval(*stmt.exprs[0])); return Flow::kNormal;
      case StmtKind::kIf:
        for (size_t i = 0; i < stmt.exprs.size(); ++i) {
          if (Eval(*stmt.exprs[i]).Truthy()) return ExecBody(stmt.bodies[i]);
        }
        if (stmt.bodies.size() > stmt.exprs.size()) return ExecBody(stmt.bodies.back());
        return Flow::kNormal;
      case StmtKind::kFor: ExecFor(stmt); return Flow::kNormal;
      case StmtKind::kSet: ExecSet(stmt); return Flow::kNormal;
      case StmtKind::kSetBlock: {
        Frame frame(frame_);
        Value body = RenderToString(stmt.bodies[0], &frame);
        if (stmt.exprs[0]) {
          // The filter chain's innermost node is a placeholder for the body.
          frame_->Set("", body);
          Value filtered = Eval(*stmt.exprs[0]);
          frame_->Set(stmt.targets[0], filtered);
        } else {
          frame_->Set(stmt.targets[0], body);
        }
        return Flow::kNormal;
      }
      case StmtKind::kMacro:
        frame_->Set(stmt.text, Value::MakeCallable(std::make_shared<MacroValue>(&stmt)));
        return Flow::kNormal;
      case StmtKind::kCallBlock: {
        const Expr& call = *stmt.exprs[0];
        Value callee = Eval(*call.items[0]);
        CallArgs args;
        EvalArgs(call, 1, &args);
        auto alive = std::make_shared<bool>(true);
        Value caller = Value::MakeCallable(std::make_shared<CallerValue>(&stmt, frame_, alive));
        Value result;
        try {
          if (callee.is_callable()) {
            if (auto* macro = dynamic_cast<const MacroValue*>(&callee.AsCallable())) {
              result = InvokeMacro(*macro->def(), args, caller);
            } else {
              result = CallValue(callee, args, call.items[0]->name);
            }
          } else {
            result = CallValue(callee, args, call.items[0]->name);
          }
        } catch (...) {
          *alive = false;
          throw;
        }
        *alive = false;
        EmitValue(result);
        return Flow::kNormal;
      }
      case StmtKind::kBreak: return Flow::kBreak;
      case StmtKind::kContinue: return Flow::kContinue;
      case StmtKind::kGeneration: {
        Frame frame(frame_);
        Value body = RenderToString(stmt.bodies[0], &frame);
        Emit(body.AsString());
        return Flow::kNormal;
      }
    }
  } catch (const TemplateRaisedError&) {
    throw;
  } catch (const LocatedError&) {
    throw;
  } catch (const Error& e) {
    throw LocatedError(fmt::format("template error at {}:{}: {}", stmt.line, stmt.column, e.what()));
  }
  return Flow::kNormal;
}

Value Evaluator::RenderToString(const StmtList& body, Frame* frame) {
  std::string buffer;
  std::string* saved_out = out_;
  Frame* saved_frame = frame_;
  out_ = &buffer;
  frame_ = frame;
  try {
    ExecBody(body);
  } catch (...) {
    out_ = saved_out;
    frame_ = saved_frame;
    throw;
  }
  out_ = saved_out;
  frame_ = saved_frame;
  CheckSize(out_->size() + buffer.size());
  return Value::String(std::move(buffer));
}

void Evaluator::Assign(const std::vector<std::string>& targets, const Value& value, const Stmt& at) {
  if (targets.size() == 1) {
    frame_->Set(targets[0], value);
    return;
  }
  List items = Iterate(value);
  if (items.size() != targets.size()) {
    Fail("cannot unpack {} values into {} names", items.size(), targets.size());
  }
  for (size_t i = 0; i < targets.size(); ++i) frame_->Set(targets[i], items[i]);
}

void Evaluator::ExecSet(const Stmt& stmt) {
  Value value = Eval(*stmt.exprs[0]);
  if (!stmt.attr.empty()) {
    Value target = Lookup(stmt.targets[0]);
    if (!target.is_namespace()) Fail("cannot assign attribute on non-namespace object");
    target.AsDict().Set(stmt.attr, std::move(value));
    return;
  }
  Assign(stmt.targets, value, stmt);
}

void Evaluator::ExecFor(const Stmt& stmt) {
  Value iterable = Eval(*stmt.exprs[0]);
  if (iterable.is_none()) Fail("'NoneType' object is not iterable");
  List items = Iterate(iterable);
  Frame frame(frame_);
  Frame* saved = frame_;
  frame_ = &frame;
  try {
    if (stmt.exprs[1]) {
      // `for x in xs if cond`: filter first so loop.length counts survivors.
      List kept;
      for (Value& item : items) {
        Step();
        Assign(stmt.targets, item, stmt);
        if (Eval(*stmt.exprs[1]).Truthy()) kept.push_back(std::move(item));
      }
      items = std::move(kept);
    }
    const int64_t n = static_cast<int64_t>(items.size());
    for (int64_t i = 0; i < n; ++i) {
      Step();
      frame.vars.clear();
      Dict loop;
      loop.Set("index0", Value::Int(i));
      loop.Set("index", Value::Int(i + 1));
      loop.Set("revindex0", Value::Int(n - i - 1));
      loop.Set("revindex", Value::Int(n - i));
      loop.Set("first", Value::Bool(i == 0));
      loop.Set("last", Value::Bool(i == n - 1));
      loop.Set("length", Value::Int(n));
      loop.Set("depth", Value::Int(1));
      loop.Set("depth0", Value::Int(0));
      if (i > 0) loop.Set("previtem", items[static_cast<size_t>(i - 1)]);
      if (i + 1 < n) loop.Set("nextitem", items[static_cast<size_t>(i + 1)]);
      loop.Set("cycle", Value::MakeCallable(std::make_shared<CycleValue>(i)));
      frame.Set("loop", Value::MakeNamespace(std::move(loop)));
      Assign(stmt.targets, items[static_cast<size_t>(i)], stmt);
      if (ExecBody(stmt.bodies[0]) == Flow::kBreak) break;
    }
    if (n == 0 && stmt.bodies.size() > 1) {
      frame.vars.clear();
      ExecBody(stmt.bodies[1]);
    }
  } catch (...) {
    frame_ = saved;
    throw;
  }
  frame_ = saved;
}

Value Evaluator::InvokeMacro(const Stmt& macro, CallArgs& args, const Value& caller) {
  if (++call_depth_ > limits_.max_call_depth) {
    --call_depth_;
    Fail("macro '{}' nested deeper than {} calls (runaway recursion?)", macro.text,
         limits_.max_call_depth);
  }
  Step();
  Frame frame(&root_);
  Frame* saved = frame_;
  frame_ = &frame;
  try {
    if (args.positional.size() > macro.params.size()) {
      Fail("macro '{}' takes not more than {} argument(s)", macro.text, macro.params.size());
    }
    for (const auto& [key, value] : args.keyword) {
      bool known = false;
      for (const auto& p : macro.params) known = known || p == key;
      if (!known) Fail("macro '{}' takes no keyword argument '{}'", macro.text, key);
    }
    for (size_t i = 0; i < macro.params.size(); ++i) {
      const std::string& name = macro.params[i];
      const Value* given = args.Get(i, name);
      if (given != nullptr) {
        frame.Set(name, *given);
      } else if (macro.defaults[i]) {
        frame.Set(name, Eval(*macro.defaults[i]));
      } else {
        frame.Set(name, Value::Undefined(fmt::format("parameter '{}' was not provided", name)));
      }
    }
    frame.Set("caller", caller);
  } catch (...) {
    frame_ = saved;
    --call_depth_;
    throw;
  }
  frame_ = saved;
  Value result;
  try {
    result = RenderToString(macro.bodies[0], &frame);
  } catch (...) {
    --call_depth_;
    throw;
  }
  --call_depth_;
  return result;
}

Value Evaluator::InvokeCaller(const Stmt& call_block, Frame* parent, CallArgs& args) {
  if (++call_depth_ > limits_.max_call_depth) {
    --call_depth_;
    Fail("caller nested deeper than {} calls", limits_.max_call_depth);
  }
  Frame frame(parent);
  for (size_t i = 0; i < call_block.params.size(); ++i) {
    const Value* given = args.Get(i, call_block.params[i]);
    frame.Set(call_block.params[i], given ? *given : Value::Undefined());
  }
  Value result;
  try {
    result = RenderToString(call_block.bodies[0], &frame);
  } catch (...) {
    --call_depth_;
    throw;
  }
  --call_depth_;
  return result;
}

Value Evaluator::Lookup(const std::string& name) {
  for (Frame* f = frame_; f != nullptr; f = f->parent) {
    if (Value* v = f->Find(name)) return *v;
  }
  if (const Value* v = context_.Find(name)) return *v;
  Value global = FindGlobal(name);
  if (!global.is_undefined()) return global;
  return Value::Undefined(fmt::format("'{}' is undefined", name));
}

Value Evaluator::GetAttr(const Value& obj, const std::string& name) {
  switch (obj.kind()) {
    case Value::Kind::kUndefined: Fail("{}", UndefinedMessage(obj));
    case Value::Kind::kNamespace: {
      if (const Value* v = obj.AsDict().Find(name)) return *v;
      return Value::Undefined(fmt::format("'Namespace object' has no attribute '{}'", name));
    }
    case Value::Kind::kDict: {
      // Jinja2 tries Python attributes (dict methods) before keys.
      Value method = FindMethod(obj, name);
      if (!method.is_undefined()) return method;
      if (const Value* v = obj.AsDict().Find(name)) return *v;
      return Value::Undefined(fmt::format("'dict object' has no attribute '{}'", name));
    }
    case Value::Kind::kNone:
      return Value::Undefined(fmt::format("'None' has no attribute '{}'", name));
    default: {
      Value method = FindMethod(obj, name);
      if (!method.is_undefined()) return method;
      return Value::Undefined(fmt::format("'{} object' has no attribute '{}'", obj.TypeName(), name));
    }
  }
}

Value Evaluator::GetItem(const Value& obj, const Value& key) {
  switch (obj.kind()) {
    case Value::Kind::kUndefined: Fail("{}", UndefinedMessage(obj));
    case Value::Kind::kDict:
    case Value::Kind::kNamespace:
      if (key.is_string()) {
        if (const Value* v = obj.AsDict().Find(key.AsString())) return *v;
        if (obj.is_dict()) {
          Value method = FindMethod(obj, key.AsString());
          if (!method.is_undefined()) return method;
        }
      } else if (key.is_int() || key.is_bool() || key.is_none() || key.is_float()) {
        // Scalar keys of dict literals are stored as their str() (see kDict).
        if (const Value* v = obj.AsDict().Find(key.Str())) return *v;
      }
      break;
    case Value::Kind::kList:
    case Value::Kind::kString:
      if (key.is_int() || key.is_bool()) {
        int64_t n = obj.is_list() ? static_cast<int64_t>(obj.AsList().size()) : obj.Length();
        int64_t i = key.AsInt();
        if (i < 0) i += n;
        if (i >= 0 && i < n) {
          if (obj.is_list()) return obj.AsList()[static_cast<size_t>(i)];
          std::vector<uint32_t> cps = DecodeUtf8(obj.AsString());
          std::string ch;
          AppendUtf8(cps[static_cast<size_t>(i)], &ch);
          return Value::String(std::move(ch));
        }
      } else if (key.is_string()) {
        Value method = FindMethod(obj, key.AsString());
        if (!method.is_undefined()) return method;
      }
      break;
    default: break;
  }
  std::string shown;
  key.AppendRepr(&shown);
  return Value::Undefined(obj.is_none() ? fmt::format("'None' has no attribute {}", shown)
                                        : fmt::format("'{} object' has no attribute {}",
                                                      obj.TypeName(), shown));
}

Value Evaluator::Slice(const Value& obj, const Value& start_v, const Value& stop_v,
                       const Value& step_v) {
  if (obj.is_undefined()) Fail("{}", UndefinedMessage(obj));
  auto as_index = [](const Value& v, const char* what) -> std::optional<int64_t> {
    if (v.is_undefined() || v.is_none()) return std::nullopt;
    if (!v.is_int() && !v.is_bool()) Fail("slice {} must be an integer or None", what);
    return v.AsInt();
  };
  std::optional<int64_t> start = as_index(start_v, "start");
  std::optional<int64_t> stop = as_index(stop_v, "stop");
  int64_t step = as_index(step_v, "step").value_or(1);
  if (step == 0) Fail("slice step cannot be zero");
  std::vector<uint32_t> cps;
  int64_t n = 0;
  if (obj.is_list()) {
    n = static_cast<int64_t>(obj.AsList().size());
  } else if (obj.is_string()) {
    cps = DecodeUtf8(obj.AsString());
    n = static_cast<int64_t>(cps.size());
  } else {
    Fail("'{}' object is not subscriptable", obj.TypeName());
  }
  // Python's slice.indices().
  auto clamp = [&](std::optional<int64_t> v, int64_t fallback) {
    if (!v) return fallback;
    int64_t x = *v;
    if (x < 0) {
      x += n;
      if (x < 0) x = step < 0 ? -1 : 0;
    } else if (x >= n) {
      x = step < 0 ? n - 1 : n;
    }
    return x;
  };
  int64_t lo = clamp(start, step < 0 ? n - 1 : 0);
  int64_t hi = clamp(stop, step < 0 ? -1 : n);
  std::vector<int64_t> picks;
  for (int64_t i = lo; step > 0 ? i < hi : i > hi; i += step) picks.push_back(i);
  if (obj.is_list()) {
    List out;
    out.reserve(picks.size());
    for (int64_t i : picks) out.push_back(obj.AsList()[static_cast<size_t>(i)]);
    return Value::MakeList(std::move(out));
  }
  std::string out;
  for (int64_t i : picks) AppendUtf8(cps[static_cast<size_t>(i)], &out);
  return Value::String(std::move(out));
}

void Evaluator::EvalArgs(const Expr& expr, size_t first, CallArgs* args) {
  for (size_t i = first; i < expr.items.size(); ++i) args->positional.push_back(Eval(*expr.items[i]));
  for (const auto& [key, value] : expr.kwargs) args->keyword.emplace_back(key, Eval(*value));
}

Value Evaluator::CallValue(const Value& callee, CallArgs& args, std::string_view what) {
  if (callee.is_undefined()) Fail("{}", UndefinedMessage(callee));
  if (!callee.is_callable()) Fail("'{}' object is not callable", callee.TypeName());
  return callee.AsCallable().Call(*this, args);
}

Value Evaluator::ApplyFilter(std::string_view name, const Value& input, CallArgs& args) {
  FilterFn fn = FindFilter(name);
  if (fn == nullptr) Fail("no filter named '{}'", name);
  return fn(*this, input, args);
}

bool Evaluator::ApplyTest(std::string_view name, const Value& input, CallArgs& args) {
  TestFn fn = FindTest(name);
  if (fn == nullptr) Fail("no test named '{}'", name);
  return fn(*this, input, args);
}

Value Evaluator::Eval(const Expr& e) {
  switch (e.kind) {
    case ExprKind::kLiteral: return e.literal;
    case ExprKind::kName:
      if (e.name.empty()) {  // block-set placeholder, see kSetBlock
        if (Value* v = frame_->Find("")) return *v;
        return Value::String("");
      }
      return Lookup(e.name);
    case ExprKind::kList:
    case ExprKind::kTuple: {
      List items;
      items.reserve(e.items.size());
      for (const auto& item : e.items) items.push_back(Eval(*item));
      return Value::MakeList(std::move(items));
    }
    case ExprKind::kDict: {
      // Dicts are string-keyed: a scalar key (int, bool, None, float) is
      // stored under its Python str() ({1: 'a'} holds key "1"), and GetItem
      // looks scalar keys up the same way, so d[1] finds it. The known
      // difference from Python: keys() yields "1", not 1.
      Dict dict;
      for (size_t i = 0; i + 1 < e.items.size(); i += 2) {
        Value key = Eval(*e.items[i]);
        if (!key.is_string() && !key.is_int() && !key.is_bool() && !key.is_none() && !key.is_float()) {
          ErrorAt(e, "unhashable dict key of type '" + key.TypeName() + "'");
        }
        dict.Set(key.is_string() ? key.AsString() : key.Str(), Eval(*e.items[i + 1]));
      }
      return Value::MakeDict(std::move(dict));
    }
    case ExprKind::kGetAttr: return GetAttr(Eval(*e.items[0]), e.name);
    case ExprKind::kGetItem: {
      Value obj = Eval(*e.items[0]);
      return GetItem(obj, Eval(*e.items[1]));
    }
    case ExprKind::kSlice: {
      Value obj = Eval(*e.items[0]);
      Value parts[3];
      for (int i = 0; i < 3; ++i) {
        if (e.items[static_cast<size_t>(i) + 1]) parts[i] = Eval(*e.items[static_cast<size_t>(i) + 1]);
      }
      return Slice(obj, parts[0], parts[1], parts[2]);
    }
    case ExprKind::kCall: {
      Value callee = Eval(*e.items[0]);
      CallArgs args;
      EvalArgs(e, 1, &args);
      return CallValue(callee, args, e.items[0]->name);
    }
    case ExprKind::kFilter: {
      Value input = Eval(*e.items[0]);
      CallArgs args;
      EvalArgs(e, 1, &args);
      return e.filter(*this, input, args);
    }
    case ExprKind::kTest: {
      Value input = Eval(*e.items[0]);
      CallArgs args;
      EvalArgs(e, 1, &args);
      return Value::Bool(e.test(*this, input, args) != e.negate);
    }
    case ExprKind::kUnary: {
      Value v = Eval(*e.items[0]);
      if (e.name == "not") return Value::Bool(!v.Truthy());
      if (v.is_undefined()) Fail("{}", UndefinedMessage(v));
      if (!v.is_number()) Fail("bad operand type for unary {}: '{}'", e.name, v.TypeName());
      if (e.name == "+") return v.is_float() ? v : Value::Int(v.AsInt());
      return v.is_float() ? Value::Float(-v.AsDouble()) : Value::Int(-v.AsInt());
    }
    case ExprKind::kBinary: {
      Value a = Eval(*e.items[0]);
      Value b = Eval(*e.items[1]);
      if (e.name == "%" && a.is_string()) {
        // Python unpacks a tuple operand; a tuple literal is the only way to
        // know (tuples evaluate to lists, and a list is one argument).
        const bool unpack = e.items[1]->kind == ExprKind::kTuple;
        const List args = unpack ? b.AsList() : List{b};
        return Value::String(PercentFormat(a.AsString(), args, b.is_dict() ? &b : nullptr, *this));
      }
      return Binary(e.name, a, b);
    }
    case ExprKind::kAnd: {
      Value a = Eval(*e.items[0]);
      return a.Truthy() ? Eval(*e.items[1]) : a;
    }
    case ExprKind::kOr: {
      Value a = Eval(*e.items[0]);
      return a.Truthy() ? a : Eval(*e.items[1]);
    }
    case ExprKind::kCondition:
      if (Eval(*e.items[0]).Truthy()) return Eval(*e.items[1]);
      if (e.items[2]) return Eval(*e.items[2]);
      return Value::Undefined("the inline if-expression evaluated to false and no else section was defined");
  }
  return Value::Undefined();
}

Value Evaluator::Binary(const std::string& op, const Value& a, const Value& b) {
  if (op == "==") return Value::Bool(a.Equals(b));
  if (op == "!=") return Value::Bool(!a.Equals(b));
  if (op == "in") return Value::Bool(Contains(b, a));
  if (op == "not in") return Value::Bool(!Contains(b, a));
  if (op == "~") {
    std::string s = a.Str();
    b.AppendStr(&s);
    CheckSize(s.size());
    return Value::String(std::move(s));
  }
  if (a.is_undefined()) Fail("{}", UndefinedMessage(a));
  if (b.is_undefined()) Fail("{}", UndefinedMessage(b));
  if (op == "<") return Value::Bool(PyLess(a, b));
  if (op == ">") return Value::Bool(PyLess(b, a));
  if (op == "<=") return Value::Bool(!PyLess(b, a));
  if (op == ">=") return Value::Bool(!PyLess(a, b));
  const bool numbers = a.is_number() && b.is_number();
  const bool ints = numbers && !a.is_float() && !b.is_float();
  if (op == "+") {
    if (ints) {
      int64_t r;
      if (!__builtin_add_overflow(a.AsInt(), b.AsInt(), &r)) return Value::Int(r);
      return Value::Float(a.AsDouble() + b.AsDouble());
    }
    if (numbers) return Value::Float(a.AsDouble() + b.AsDouble());
    if (a.is_string() && b.is_string()) {
      CheckSize(a.AsString().size() + b.AsString().size());
      return Value::String(a.AsString() + b.AsString());
    }
    if (a.is_list() && b.is_list()) {
      List out = a.AsList();
      out.insert(out.end(), b.AsList().begin(), b.AsList().end());
      return Value::MakeList(std::move(out));
    }
    if (a.is_string()) Fail("can only concatenate str (not \"{}\") to str", b.TypeName());
    if (a.is_list()) Fail("can only concatenate list (not \"{}\") to list", b.TypeName());
  } else if (op == "-") {
    if (ints) {
      int64_t r;
      if (!__builtin_sub_overflow(a.AsInt(), b.AsInt(), &r)) return Value::Int(r);
    }
    if (numbers) return Value::Float(a.AsDouble() - b.AsDouble());
  } else if (op == "*") {
    if (ints) {
      int64_t r;
      if (!__builtin_mul_overflow(a.AsInt(), b.AsInt(), &r)) return Value::Int(r);
    }
    if (numbers) return Value::Float(a.AsDouble() * b.AsDouble());
    if (a.is_string() && (b.is_int() || b.is_bool())) return Value::String(RepeatString(a.AsString(), b.AsInt(), *this));
    if (b.is_string() && (a.is_int() || a.is_bool())) return Value::String(RepeatString(b.AsString(), a.AsInt(), *this));
    if ((a.is_list() && (b.is_int() || b.is_bool())) || (b.is_list() && (a.is_int() || a.is_bool()))) {
      const List& src = a.is_list() ? a.AsList() : b.AsList();
      int64_t n = a.is_list() ? b.AsInt() : a.AsInt();
      List out;
      if (n > 0 && !src.empty()) {
        Step(n * static_cast<int64_t>(src.size()) / static_cast<int64_t>(src.size()) == n
                 ? n * static_cast<int64_t>(src.size())
                 : INT64_MAX / 2);
        for (int64_t i = 0; i < n; ++i) out.insert(out.end(), src.begin(), src.end());
      }
      return Value::MakeList(std::move(out));
    }
  } else if (op == "/") {
    if (numbers) {
      if (b.AsDouble() == 0) Fail("division by zero");
      return Value::Float(a.AsDouble() / b.AsDouble());
    }
  } else if (op == "//") {
    if (numbers) {
      if (b.AsDouble() == 0) Fail("integer division or modulo by zero");
      if (ints) {
        if (a.AsInt() == INT64_MIN && b.AsInt() == -1) return Value::Float(-static_cast<double>(INT64_MIN));
        return Value::Int(FloorDiv(a.AsInt(), b.AsInt()));
      }
      return Value::Float(std::floor(a.AsDouble() / b.AsDouble()));
    }
  } else if (op == "%") {
    if (numbers) {
      if (b.AsDouble() == 0) Fail("integer division or modulo by zero");
      if (ints) {
        if (b.AsInt() == -1) return Value::Int(0);
        return Value::Int(FloorMod(a.AsInt(), b.AsInt()));
      }
      double m = std::fmod(a.AsDouble(), b.AsDouble());
      if (m != 0 && ((m < 0) != (b.AsDouble() < 0))) m += b.AsDouble();
      return Value::Float(m);
    }
    if (a.is_string()) {
      return Value::String(PercentFormat(a.AsString(), List{b}, b.is_dict() ? &b : nullptr, *this));
    }
  } else if (op == "**") {
    if (ints && b.AsInt() >= 0) {
      int64_t result = 1, base = a.AsInt();
      bool overflow = false;
      for (int64_t e = b.AsInt(); e > 0 && !overflow; --e) {
        overflow = __builtin_mul_overflow(result, base, &result);
        if (result == 0 || result == 1) break;
      }
      if (!overflow) return Value::Int(result);
    }
    if (numbers) return Value::Float(std::pow(a.AsDouble(), b.AsDouble()));
  }
  Fail("unsupported operand type(s) for {}: '{}' and '{}'", op, a.TypeName(), b.TypeName());
}

}  // namespace cairn::chat
