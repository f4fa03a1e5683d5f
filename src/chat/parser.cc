#include "chat/parser.h"

#include <charconv>
#include <cstdlib>
#include <initializer_list>

#include "chat/builtins.h"
#include "chat/lexer.h"
#include "core/error.h"

namespace cairn::chat {
namespace {

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  StmtList ParseAll() {
    StmtList body = ParseBody({});
    if (Cur().type != TokenType::kEof) ErrorAt(Cur(), "unexpected token");
    return body;
  }

 private:
  // ---- token helpers ----
  const Token& Cur() const { return tokens_[pos_]; }
  const Token& Peek(size_t ahead = 1) const {
    return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
  }
  const Token& Next() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool IsOp(std::string_view op) const { return Cur().type == TokenType::kOp && Cur().value == op; }
  bool IsName(std::string_view name) const {
    return Cur().type == TokenType::kName && Cur().value == name;
  }
  bool AcceptOp(std::string_view op) {
    if (!IsOp(op)) return false;
    Next();
    return true;
  }
  bool AcceptName(std::string_view name) {
    if (!IsName(name)) return false;
    Next();
    return true;
  }
  static std::string Describe(const Token& t) {
    switch (t.type) {
      case TokenType::kEof: return "end of template";
      case TokenType::kBlockEnd: return "end of statement block";
      case TokenType::kVarEnd: return "end of print statement";
      case TokenType::kText: return "template text";
      case TokenType::kString: return "string literal";
      default: return "'" + t.value + "'";
    }
  }
  void ExpectOp(std::string_view op) {
    if (!AcceptOp(op)) ErrorAt(Cur(), fmt::format("expected '{}', got {}", op, Describe(Cur())));
  }
  std::string ExpectNameToken(std::string_view what) {
    if (Cur().type != TokenType::kName) {
      ErrorAt(Cur(), fmt::format("expected {}, got {}", what, Describe(Cur())));
    }
    return Next().value;
  }
  void ExpectBlockEnd() {
    if (Cur().type != TokenType::kBlockEnd) {
      ErrorAt(Cur(), fmt::format("expected end of statement block, got {}", Describe(Cur())));
    }
    Next();
  }
  [[noreturn]] static void ErrorAt(const Token& t, const std::string& message) {
    Fail("template syntax error at {}:{}: {}", t.line, t.column, message);
  }

  struct DepthGuard {
    DepthGuard(Parser* p, const Token& t) : parser(p) {
      if (++parser->depth_ > kMaxParseDepth) {
        ErrorAt(t, fmt::format("template nests deeper than {} levels", kMaxParseDepth));
      }
    }
    ~DepthGuard() { --parser->depth_; }
    Parser* parser;
  };

  ExprPtr NewExpr(ExprKind kind, const Token& at) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->line = at.line;
    e->column = at.column;
    return e;
  }
  std::unique_ptr<Stmt> NewStmt(StmtKind kind, const Token& at) {
    auto s = std::make_unique<Stmt>();
    s->kind = kind;
    s->line = at.line;
    s->column = at.column;
    return s;
  }

  // ---- statements ----

  // Parses until a block tag whose name is in `end_names` (left current, the
  // "{%" consumed) or end of input (only valid when end_names is empty).
  StmtList ParseBody(std::initializer_list<std::string_view> end_names) {
    StmtList body;
    while (true) {
      const Token& t = Cur();
      if (t.type == TokenType::kEof) {
        if (end_names.size() != 0) {
          std::string names;
          for (auto n : end_names) names += (names.empty() ? "'" : " or '") + std::string(n) + "'";
          ErrorAt(t, fmt::format("unexpected end of template, expected {}", names));
        }
        return body;
      }
      if (t.type == TokenType::kText) {
        auto s = NewStmt(StmtKind::kText, t);
        s->text = t.value;
        Next();
        body.push_back(std::move(s));
      } else if (t.type == TokenType::kVarBegin) {
        Next();
        auto s = NewStmt(StmtKind::kOutput, t);
        s->exprs.push_back(ParseTuple(true));
        if (Cur().type != TokenType::kVarEnd) {
          ErrorAt(Cur(), fmt::format("expected end of print statement, got {}", Describe(Cur())));
        }
        Next();
        body.push_back(std::move(s));
      } else if (t.type == TokenType::kBlockBegin) {
        const Token& name = Peek();
        if (name.type == TokenType::kName) {
          for (auto end : end_names) {
            if (name.value == end) {
              Next();  // "{%"; the caller consumes the name
              return body;
            }
          }
        }
        Next();
        body.push_back(ParseStatement());
      } else {
        ErrorAt(t, "unexpected token " + Describe(t));
      }
    }
  }

  std::unique_ptr<Stmt> ParseStatement() {
    const Token& t = Cur();
    if (t.type != TokenType::kName) ErrorAt(t, "tag name expected");
    DepthGuard guard(this, t);
    const std::string& name = t.value;
    if (name == "if") return ParseIf();
    if (name == "for") return ParseFor();
    if (name == "set") return ParseSet();
    if (name == "macro") return ParseMacro();
    if (name == "call") return ParseCallBlock();
    if (name == "generation") {
      // transformers' AssistantTracker tag: renders its body unchanged.
      auto s = NewStmt(StmtKind::kGeneration, Next());
      ExpectBlockEnd();
      s->bodies.push_back(ParseBody({"endgeneration"}));
      Next();
      ExpectBlockEnd();
      return s;
    }
    if (name == "break" || name == "continue") {
      if (loop_depth_ == 0) ErrorAt(t, fmt::format("'{}' outside of a for loop", name));
      auto s = NewStmt(name == "break" ? StmtKind::kBreak : StmtKind::kContinue, Next());
      ExpectBlockEnd();
      return s;
    }
    static constexpr std::string_view kUnsupported[] = {
        "include", "extends", "block", "import", "from", "raw", "with", "filter",
        "autoescape", "do", "trans", "pluralize"};
    for (auto unsupported : kUnsupported) {
      if (name == unsupported) {
        ErrorAt(t, fmt::format("unsupported template construct '{{% {} %}}'", name));
      }
    }
    ErrorAt(t, fmt::format("unknown tag '{}'", name));
  }

  std::unique_ptr<Stmt> ParseIf() {
    auto s = NewStmt(StmtKind::kIf, Next());
    s->exprs.push_back(ParseTuple(true));
    ExpectBlockEnd();
    while (true) {
      s->bodies.push_back(ParseBody({"elif", "else", "endif"}));
      std::string tag = Next().value;
      if (tag == "elif") {
        s->exprs.push_back(ParseTuple(true));
        ExpectBlockEnd();
      } else if (tag == "else") {
        ExpectBlockEnd();
        s->bodies.push_back(ParseBody({"endif"}));
        Next();
        ExpectBlockEnd();
        return s;
      } else {
        ExpectBlockEnd();
        return s;
      }
    }
  }

  void ParseAssignTargets(Stmt* s) {
    bool paren = AcceptOp("(");
    do {
      s->targets.push_back(ExpectNameToken("a variable name"));
    } while (AcceptOp(","));
    if (paren) ExpectOp(")");
  }

  std::unique_ptr<Stmt> ParseFor() {
    auto s = NewStmt(StmtKind::kFor, Next());
    ParseAssignTargets(s.get());
    if (!AcceptName("in")) ErrorAt(Cur(), "expected 'in' in for loop");
    s->exprs.push_back(ParseTuple(false));
    if (AcceptName("if")) {
      s->exprs.push_back(ParseExpression(true));
    } else {
      s->exprs.push_back(nullptr);
    }
    if (IsName("recursive")) ErrorAt(Cur(), "unsupported template construct 'recursive' for loop");
    ExpectBlockEnd();
    ++loop_depth_;
    s->bodies.push_back(ParseBody({"else", "endfor"}));
    --loop_depth_;
    std::string tag = Next().value;
    ExpectBlockEnd();
    if (tag == "else") {
      s->bodies.push_back(ParseBody({"endfor"}));
      Next();
      ExpectBlockEnd();
    }
    return s;
  }

  std::unique_ptr<Stmt> ParseSet() {
    const Token& at = Next();
    auto s = NewStmt(StmtKind::kSet, at);
    if (Cur().type == TokenType::kName && Peek().type == TokenType::kOp && Peek().value == ".") {
      s->targets.push_back(Next().value);
      Next();
      s->attr = ExpectNameToken("an attribute name");
    } else {
      ParseAssignTargets(s.get());
    }
    if (AcceptOp("=")) {
      s->exprs.push_back(ParseTuple(true));
      ExpectBlockEnd();
      return s;
    }
    // Block set: {% set name [| filters] %}...{% endset %}
    if (s->targets.size() != 1 || !s->attr.empty()) ErrorAt(Cur(), "expected '=' in set");
    s->kind = StmtKind::kSetBlock;
    ExprPtr filtered;
    if (IsOp("|")) {
      // Filters apply to the rendered body, represented as a literal placeholder.
      auto placeholder = NewExpr(ExprKind::kName, Cur());
      placeholder->name = "";  // evaluator substitutes the body text
      filtered = ParseFilterChain(std::move(placeholder));
    }
    s->exprs.push_back(std::move(filtered));
    ExpectBlockEnd();
    s->bodies.push_back(ParseBody({"endset"}));
    Next();
    ExpectBlockEnd();
    return s;
  }

  void ParseParams(Stmt* s) {
    ExpectOp("(");
    while (!IsOp(")")) {
      if (!s->params.empty()) ExpectOp(",");
      if (IsOp(")")) break;
      s->params.push_back(ExpectNameToken("a parameter name"));
      s->defaults.push_back(AcceptOp("=") ? ParseExpression(true) : nullptr);
    }
    ExpectOp(")");
  }

  std::unique_ptr<Stmt> ParseMacro() {
    auto s = NewStmt(StmtKind::kMacro, Next());
    s->text = ExpectNameToken("a macro name");
    ParseParams(s.get());
    ExpectBlockEnd();
    int saved = loop_depth_;
    loop_depth_ = 0;  // loop controls do not cross a macro boundary
    s->bodies.push_back(ParseBody({"endmacro"}));
    loop_depth_ = saved;
    Next();
    if (Cur().type == TokenType::kName) Next();  // optional name after endmacro
    ExpectBlockEnd();
    return s;
  }

  std::unique_ptr<Stmt> ParseCallBlock() {
    auto s = NewStmt(StmtKind::kCallBlock, Next());
    if (IsOp("(")) ParseParams(s.get());
    ExprPtr call = ParseExpression(true);
    if (call->kind != ExprKind::kCall) ErrorAt(Cur(), "expected a call in call block");
    s->exprs.push_back(std::move(call));
    ExpectBlockEnd();
    int saved = loop_depth_;
    loop_depth_ = 0;
    s->bodies.push_back(ParseBody({"endcall"}));
    loop_depth_ = saved;
    Next();
    ExpectBlockEnd();
    return s;
  }

  // ---- expressions ----

  ExprPtr ParseTuple(bool with_condexpr) {
    const Token& at = Cur();
    ExprPtr first = with_condexpr ? ParseExpression(true) : ParseOr();
    if (!IsOp(",")) return first;
    auto tuple = NewExpr(ExprKind::kTuple, at);
    tuple->items.push_back(std::move(first));
    while (AcceptOp(",")) {
      if (Cur().type == TokenType::kBlockEnd || Cur().type == TokenType::kVarEnd || IsOp(")")) break;
      tuple->items.push_back(with_condexpr ? ParseExpression(true) : ParseOr());
    }
    return tuple;
  }

  ExprPtr ParseExpression(bool with_condexpr) {
    DepthGuard guard(this, Cur());
    if (!with_condexpr) return ParseOr();
    ExprPtr expr = ParseOr();
    while (IsName("if")) {
      auto cond = NewExpr(ExprKind::kCondition, Next());
      ExprPtr test = ParseOr();
      ExprPtr otherwise = AcceptName("else") ? ParseExpression(true) : nullptr;
      cond->items.push_back(std::move(test));
      cond->items.push_back(std::move(expr));
      cond->items.push_back(std::move(otherwise));
      expr = std::move(cond);
    }
    return expr;
  }

  ExprPtr ParseOr() {
    ExprPtr left = ParseAnd();
    while (IsName("or")) {
      auto e = NewExpr(ExprKind::kOr, Next());
      e->items.push_back(std::move(left));
      e->items.push_back(ParseAnd());
      left = std::move(e);
    }
    return left;
  }

  ExprPtr ParseAnd() {
    ExprPtr left = ParseNot();
    while (IsName("and")) {
      auto e = NewExpr(ExprKind::kAnd, Next());
      e->items.push_back(std::move(left));
      e->items.push_back(ParseNot());
      left = std::move(e);
    }
    return left;
  }

  ExprPtr ParseNot() {
    if (IsName("not")) {
      DepthGuard guard(this, Cur());
      auto e = NewExpr(ExprKind::kUnary, Next());
      e->name = "not";
      e->items.push_back(ParseNot());
      return e;
    }
    return ParseCompare();
  }

  ExprPtr ParseCompare() {
    const Token& at = Cur();
    ExprPtr left = ParseMath1();
    ExprPtr result;
    while (true) {
      std::string op;
      if (Cur().type == TokenType::kOp &&
          (Cur().value == "==" || Cur().value == "!=" || Cur().value == "<" || Cur().value == "<=" ||
           Cur().value == ">" || Cur().value == ">=")) {
        op = Next().value;
      } else if (IsName("in")) {
        Next();
        op = "in";
      } else if (IsName("not") && Peek().type == TokenType::kName && Peek().value == "in") {
        Next();
        Next();
        op = "not in";
      } else {
        break;
      }
      // Chained comparisons (a < b < c) become (a < b) and (b < c); the middle
      // operand is re-evaluated, which is harmless for side-effect-free
      // expressions.
      auto cmp = NewExpr(ExprKind::kBinary, at);
      cmp->name = op;
      ExprPtr right = ParseMath1();
      cmp->items.push_back(std::move(left));
      cmp->items.push_back(std::move(right));
      ExprPtr next_left = CloneExpr(*cmp->items[1]);
      if (result) {
        auto both = NewExpr(ExprKind::kAnd, at);
        both->items.push_back(std::move(result));
        both->items.push_back(std::move(cmp));
        result = std::move(both);
      } else {
        result = std::move(cmp);
      }
      left = std::move(next_left);
    }
    return result ? std::move(result) : std::move(left);
  }

  static ExprPtr CloneExpr(const Expr& e) {
    auto c = std::make_unique<Expr>();
    c->kind = e.kind;
    c->line = e.line;
    c->column = e.column;
    c->name = e.name;
    c->literal = e.literal;
    c->negate = e.negate;
    c->filter = e.filter;
    c->test = e.test;
    for (const auto& item : e.items) c->items.push_back(item ? CloneExpr(*item) : nullptr);
    for (const auto& [k, v] : e.kwargs) c->kwargs.emplace_back(k, CloneExpr(*v));
    return c;
  }

  ExprPtr ParseBinaryLevel(ExprPtr (Parser::*next)(), std::initializer_list<std::string_view> ops) {
    ExprPtr left = (this->*next)();
    while (Cur().type == TokenType::kOp) {
      bool match = false;
      for (auto op : ops) match = match || Cur().value == op;
      if (!match) break;
      auto e = NewExpr(ExprKind::kBinary, Cur());
      e->name = Next().value;
      e->items.push_back(std::move(left));
      e->items.push_back((this->*next)());
      left = std::move(e);
    }
    return left;
  }

  ExprPtr ParseMath1() { return ParseBinaryLevel(&Parser::ParseConcat, {"+", "-"}); }
  ExprPtr ParseConcat() { return ParseBinaryLevel(&Parser::ParseMath2, {"~"}); }
  ExprPtr ParseMath2() { return ParseBinaryLevel(&Parser::ParsePow, {"*", "/", "//", "%"}); }
  ExprPtr ParsePow() { return ParseBinaryLevel(&Parser::ParseUnaryWithFilter, {"**"}); }
  ExprPtr ParseUnaryWithFilter() { return ParseUnary(true); }

  ExprPtr ParseUnary(bool with_filter) {
    DepthGuard guard(this, Cur());
    ExprPtr node;
    if (IsOp("-") || IsOp("+")) {
      node = NewExpr(ExprKind::kUnary, Cur());
      node->name = Next().value;
      node->items.push_back(ParseUnary(false));
    } else {
      node = ParsePostfix(ParsePrimary());
    }
    if (with_filter) node = ParseFilterChain(std::move(node));
    return node;
  }

  ExprPtr ParsePrimary() {
    const Token& t = Cur();
    switch (t.type) {
      case TokenType::kName: {
        Next();
        auto e = NewExpr(ExprKind::kLiteral, t);
        if (t.value == "true" || t.value == "True") e->literal = Value::Bool(true);
        else if (t.value == "false" || t.value == "False") e->literal = Value::Bool(false);
        else if (t.value == "none" || t.value == "None") e->literal = Value::None();
        else {
          e->kind = ExprKind::kName;
          e->name = t.value;
        }
        return e;
      }
      case TokenType::kString: {
        std::string s = Next().value;
        while (Cur().type == TokenType::kString) s += Next().value;  // implicit concatenation
        auto e = NewExpr(ExprKind::kLiteral, t);
        e->literal = Value::String(std::move(s));
        return e;
      }
      case TokenType::kInt: {
        Next();
        auto e = NewExpr(ExprKind::kLiteral, t);
        int64_t v = 0;
        auto res = std::from_chars(t.value.data(), t.value.data() + t.value.size(), v);
        if (res.ec != std::errc()) {
          e->literal = Value::Float(std::strtod(t.value.c_str(), nullptr));  // beyond int64
        } else {
          e->literal = Value::Int(v);
        }
        return e;
      }
      case TokenType::kFloat: {
        Next();
        auto e = NewExpr(ExprKind::kLiteral, t);
        e->literal = Value::Float(std::strtod(t.value.c_str(), nullptr));
        return e;
      }
      case TokenType::kOp:
        if (t.value == "(") {
          Next();
          if (AcceptOp(")")) return NewExpr(ExprKind::kTuple, t);
          ExprPtr inner = ParseTuple(true);
          if (IsOp(",")) Next();
          ExpectOp(")");
          return inner;
        }
        if (t.value == "[") {
          Next();
          auto e = NewExpr(ExprKind::kList, t);
          while (!IsOp("]")) {
            if (!e->items.empty()) ExpectOp(",");
            if (IsOp("]")) break;
            e->items.push_back(ParseExpression(true));
          }
          ExpectOp("]");
          return e;
        }
        if (t.value == "{") {
          Next();
          auto e = NewExpr(ExprKind::kDict, t);
          while (!IsOp("}")) {
            if (!e->items.empty()) ExpectOp(",");
            if (IsOp("}")) break;
            e->items.push_back(ParseExpression(true));
            ExpectOp(":");
            e->items.push_back(ParseExpression(true));
          }
          ExpectOp("}");
          return e;
        }
        break;
      default: break;
    }
    ErrorAt(t, "unexpected " + Describe(t));
  }

  ExprPtr ParsePostfix(ExprPtr node) {
    while (true) {
      const Token& t = Cur();
      if (IsOp(".")) {
        Next();
        const Token& attr = Cur();
        if (attr.type == TokenType::kName) {
          auto e = NewExpr(ExprKind::kGetAttr, t);
          e->name = Next().value;
          e->items.push_back(std::move(node));
          node = std::move(e);
        } else if (attr.type == TokenType::kInt) {
          auto e = NewExpr(ExprKind::kGetItem, t);
          auto index = NewExpr(ExprKind::kLiteral, attr);
          index->literal = Value::Int(std::strtoll(Next().value.c_str(), nullptr, 10));
          e->items.push_back(std::move(node));
          e->items.push_back(std::move(index));
          node = std::move(e);
        } else {
          ErrorAt(attr, "expected attribute name after '.'");
        }
      } else if (IsOp("[")) {
        Next();
        node = ParseSubscript(std::move(node), t);
        ExpectOp("]");
      } else if (IsOp("(")) {
        node = ParseCall(std::move(node));
      } else {
        return node;
      }
    }
  }

  ExprPtr ParseSubscript(ExprPtr node, const Token& at) {
    ExprPtr parts[3];
    bool is_slice = false;
    if (!IsOp(":")) parts[0] = ParseExpression(true);
    if (AcceptOp(":")) {
      is_slice = true;
      if (!IsOp("]") && !IsOp(":")) parts[1] = ParseExpression(true);
      if (AcceptOp(":")) {
        if (!IsOp("]")) parts[2] = ParseExpression(true);
      }
    }
    if (!is_slice) {
      if (IsOp(",")) ErrorAt(Cur(), "unsupported template construct: tuple subscript");
      auto e = NewExpr(ExprKind::kGetItem, at);
      e->items.push_back(std::move(node));
      e->items.push_back(std::move(parts[0]));
      return e;
    }
    auto e = NewExpr(ExprKind::kSlice, at);
    e->items.push_back(std::move(node));
    for (auto& p : parts) e->items.push_back(std::move(p));
    return e;
  }

  void ParseArgs(Expr* e) {
    ExpectOp("(");
    while (!IsOp(")")) {
      if (!e->items.empty() || !e->kwargs.empty()) {
        ExpectOp(",");
        if (IsOp(")")) break;
      }
      if (IsOp("*") || IsOp("**")) ErrorAt(Cur(), "unsupported template construct: *args/**kwargs in call");
      if (Cur().type == TokenType::kName && Peek().type == TokenType::kOp && Peek().value == "=") {
        std::string key = Next().value;
        Next();
        e->kwargs.emplace_back(std::move(key), ParseExpression(true));
      } else {
        if (!e->kwargs.empty()) ErrorAt(Cur(), "positional argument follows keyword argument");
        e->items.push_back(ParseExpression(true));
      }
    }
    ExpectOp(")");
  }

  // Call arguments are appended after items[0] (the callee / filter input).
  ExprPtr ParseCall(ExprPtr callee) {
    auto e = NewExpr(ExprKind::kCall, Cur());
    e->items.push_back(std::move(callee));
    // ParseArgs treats a non-empty items list as "needs a comma"; parse into a
    // scratch node so the callee does not count as an argument.
    Expr scratch;
    scratch.kind = ExprKind::kCall;
    ParseArgs(&scratch);
    for (auto& item : scratch.items) e->items.push_back(std::move(item));
    e->kwargs = std::move(scratch.kwargs);
    return e;
  }

  ExprPtr ParseFilterChain(ExprPtr node) {
    while (true) {
      if (IsOp("|")) {
        Next();
        const Token& name_tok = Cur();
        std::string name = ExpectNameToken("a filter name");
        auto e = NewExpr(ExprKind::kFilter, name_tok);
        e->name = name;
        e->filter = FindFilter(name);
        if (e->filter == nullptr) {
          ErrorAt(name_tok, fmt::format("unsupported template construct: no filter named '{}'", name));
        }
        e->items.push_back(std::move(node));
        if (IsOp("(")) AppendArgs(e.get());
        node = std::move(e);
      } else if (IsName("is")) {
        Next();
        bool negate = AcceptName("not");
        const Token& name_tok = Cur();
        std::string name = ExpectNameToken("a test name");
        // `is none` / `is true` etc. arrive as literal keywords.
        auto e = NewExpr(ExprKind::kTest, name_tok);
        e->name = name;
        e->negate = negate;
        e->test = FindTest(name);
        if (e->test == nullptr) {
          ErrorAt(name_tok, fmt::format("unsupported template construct: no test named '{}'", name));
        }
        e->items.push_back(std::move(node));
        if (IsOp("(")) {
          AppendArgs(e.get());
        } else if ((Cur().type == TokenType::kName || Cur().type == TokenType::kString ||
                    Cur().type == TokenType::kInt || Cur().type == TokenType::kFloat ||
                    IsOp("[") || IsOp("{")) &&
                   !IsName("else") && !IsName("or") && !IsName("and")) {
          // One argument without parentheses: `x is divisibleby 3`.
          e->items.push_back(ParsePostfix(ParsePrimary()));
        }
        node = std::move(e);
      } else if (IsOp("(")) {
        node = ParseCall(std::move(node));
      } else {
        return node;
      }
    }
  }

  void AppendArgs(Expr* e) {
    Expr scratch;
    ParseArgs(&scratch);
    for (auto& item : scratch.items) e->items.push_back(std::move(item));
    e->kwargs = std::move(scratch.kwargs);
  }

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;
};

}  // namespace

StmtList ParseTemplate(std::string_view source) { return Parser(Tokenize(source)).ParseAll(); }

}  // namespace cairn::chat
