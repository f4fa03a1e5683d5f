// Dynamic value type of the chat-template engine.
//
// Mirrors the Python objects a Jinja2 template sees when Hugging Face renders a
// chat template: None, bool, int, float, str, list, dict (insertion ordered),
// callables (macros, bound methods, globals) and `namespace` objects, plus
// Jinja2's Undefined. Lists, dicts and namespaces have reference semantics like
// Python (a namespace attribute set is visible through every copy); strings are
// shared immutable buffers so copying a Value never copies text.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cairn::chat {

class Value;
class Evaluator;
struct CallArgs;

using List = std::vector<Value>;

// Insertion-ordered string-keyed map. Chat contexts have small dicts (messages,
// JSON schema nodes), so a linear scan beats hashing here.
class Dict {
 public:
  const Value* Find(std::string_view key) const;
  Value* Find(std::string_view key);
  void Set(std::string key, Value value);  // replaces in place or appends
  using Entries = std::vector<std::pair<std::string, Value>>;
  // Defined after Value (below): std::pair needs the complete type, and
  // clang instantiates these eagerly.
  size_t size() const;
  bool empty() const;
  Entries::const_iterator begin() const;
  Entries::const_iterator end() const;
  const Entries& entries() const { return entries_; }

 private:
  Entries entries_;
};

// Anything invocable from a template: macros, builtin globals, bound methods.
class Callable {
 public:
  virtual ~Callable() = default;
  virtual Value Call(Evaluator& evaluator, CallArgs& args) const = 0;
  virtual std::string Name() const = 0;
};

class Value {
 public:
  enum class Kind : uint8_t {
    kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kDict, kCallable, kNamespace
  };

  Value() = default;  // undefined
  static Value Undefined(std::string hint = {});  // hint: the missing name, for errors
  static Value None();
  static Value Bool(bool b);
  static Value Int(int64_t i);
  static Value Float(double d);
  static Value String(std::string s);
  static Value String(std::shared_ptr<const std::string> s);
  static Value MakeList(List items = {});
  static Value MakeDict(Dict dict = {});
  static Value MakeNamespace(Dict dict = {});
  static Value MakeCallable(std::shared_ptr<const Callable> callable);
  // Converts JSON (objects keep their key order). Throws cairn::Error when
  // nesting exceeds a sane depth.
  static Value FromJson(const nlohmann::ordered_json& json);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::kUndefined; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_int() const { return kind_ == Kind::kInt; }
  bool is_float() const { return kind_ == Kind::kFloat; }
  // Python treats bool as a number (True + 1 == 2).
  bool is_number() const { return kind_ == Kind::kInt || kind_ == Kind::kFloat || kind_ == Kind::kBool; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_list() const { return kind_ == Kind::kList; }
  bool is_dict() const { return kind_ == Kind::kDict; }
  bool is_namespace() const { return kind_ == Kind::kNamespace; }
  bool is_callable() const { return kind_ == Kind::kCallable; }

  bool AsBool() const { return scalar_.b; }
  int64_t AsInt() const { return kind_ == Kind::kBool ? (scalar_.b ? 1 : 0) : scalar_.i; }
  double AsDouble() const;  // any number
  const std::string& AsString() const { return *str_; }  // strings and undefined hint
  const std::shared_ptr<const std::string>& string_ptr() const { return str_; }
  List& AsList() const { return *list_; }
  Dict& AsDict() const { return *dict_; }  // dicts and namespaces
  const Callable& AsCallable() const { return *callable_; }
  const std::string& undefined_hint() const;

  // Python truthiness (undefined is false).
  bool Truthy() const;
  // Python str(): what {{ value }} prints.
  std::string Str() const;
  void AppendStr(std::string* out) const;
  // Python repr().
  void AppendRepr(std::string* out) const;
  // Python type name, for error messages ("str", "int", "dict", ...).
  std::string TypeName() const;
  // Deep equality with Python semantics (1 == 1.0, True == 1, undefined == undefined).
  bool Equals(const Value& other) const;
  // Identity for lists/dicts, equality for scalars (Jinja2's `sameas`).
  bool SameAs(const Value& other) const;
  // Sequence length of strings (code points), lists, dicts; -1 when not sized.
  int64_t Length() const;

 private:
  Kind kind_ = Kind::kUndefined;
  union Scalar { bool b; int64_t i; double d; } scalar_{};
  std::shared_ptr<const std::string> str_;
  std::shared_ptr<List> list_;
  std::shared_ptr<Dict> dict_;
  std::shared_ptr<const Callable> callable_;
};

// Python ordering (<) for numbers, strings (by code point) and lists; throws
// cairn::Error like Python's TypeError for other combinations.
bool PyLess(const Value& a, const Value& b);

// Python repr() of a float ("1.0", "1e+16", "inf").
std::string FormatPyFloat(double d);

// json.dumps(value, ensure_ascii=False, indent=..., separators=..., sort_keys=...)
// as Hugging Face's `tojson` filter calls it. indent < 0 means None; a string
// indent is used verbatim.
struct JsonDumpOptions {
  int indent = -1;
  std::string indent_str;  // used when non-empty (indent given as a string)
  bool has_separators = false;
  std::string item_separator = ", ";
  std::string key_separator = ": ";
  bool sort_keys = false;
  bool ensure_ascii = false;  // escape non-ASCII as \uXXXX (surrogate pairs)
};
void DumpJson(const Value& value, const JsonDumpOptions& options, std::string* out);

// UTF-8 helpers (templates index and slice strings by code point like Python).
std::vector<uint32_t> DecodeUtf8(std::string_view s);
void AppendUtf8(uint32_t cp, std::string* out);

inline size_t Dict::size() const { return entries_.size(); }
inline bool Dict::empty() const { return entries_.empty(); }
inline Dict::Entries::const_iterator Dict::begin() const { return entries_.begin(); }
inline Dict::Entries::const_iterator Dict::end() const { return entries_.end(); }

}  // namespace cairn::chat
