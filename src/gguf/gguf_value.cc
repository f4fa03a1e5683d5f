// gguf::Value: construction, typed access and validation.
#include <bit>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_internal.h"

namespace cairn::gguf {

std::string_view ValueTypeName(ValueType type) {
  switch (type) {
    case ValueType::kU8: return "u8";
    case ValueType::kI8: return "i8";
    case ValueType::kU16: return "u16";
    case ValueType::kI16: return "i16";
    case ValueType::kU32: return "u32";
    case ValueType::kI32: return "i32";
    case ValueType::kF32: return "f32";
    case ValueType::kBool: return "bool";
    case ValueType::kString: return "string";
    case ValueType::kArray: return "array";
    case ValueType::kU64: return "u64";
    case ValueType::kI64: return "i64";
    case ValueType::kF64: return "f64";
  }
  return "?";
}

namespace internal {

bool IsKnownValueType(uint32_t raw) { return raw <= static_cast<uint32_t>(ValueType::kF64); }

bool IsUnsignedInt(ValueType t) {
  return t == ValueType::kU8 || t == ValueType::kU16 || t == ValueType::kU32 || t == ValueType::kU64;
}
bool IsSignedInt(ValueType t) {
  return t == ValueType::kI8 || t == ValueType::kI16 || t == ValueType::kI32 || t == ValueType::kI64;
}
bool IsInt(ValueType t) { return IsUnsignedInt(t) || IsSignedInt(t); }
bool IsFloat(ValueType t) { return t == ValueType::kF32 || t == ValueType::kF64; }

size_t ScalarSize(ValueType t) {
  switch (t) {
    case ValueType::kU8: case ValueType::kI8: case ValueType::kBool: return 1;
    case ValueType::kU16: case ValueType::kI16: return 2;
    case ValueType::kU32: case ValueType::kI32: case ValueType::kF32: return 4;
    case ValueType::kU64: case ValueType::kI64: case ValueType::kF64: return 8;
    case ValueType::kString: case ValueType::kArray: return 0;
  }
  return 0;
}

size_t MinEncodedSize(ValueType t) {
  if (t == ValueType::kString) return 8;   // u64 length
  if (t == ValueType::kArray) return 12;   // u32 element type + u64 count
  return ScalarSize(t);
}

bool UnsignedFits(ValueType t, uint64_t v) {
  switch (t) {
    case ValueType::kU8: return v <= std::numeric_limits<uint8_t>::max();
    case ValueType::kU16: return v <= std::numeric_limits<uint16_t>::max();
    case ValueType::kU32: return v <= std::numeric_limits<uint32_t>::max();
    default: return true;
  }
}

bool SignedFits(ValueType t, int64_t v) {
  switch (t) {
    case ValueType::kI8: return v >= INT8_MIN && v <= INT8_MAX;
    case ValueType::kI16: return v >= INT16_MIN && v <= INT16_MAX;
    case ValueType::kI32: return v >= INT32_MIN && v <= INT32_MAX;
    default: return true;
  }
}

std::string Printable(std::string_view s, size_t max_bytes) {
  std::string out;
  const size_t n = std::min(s.size(), max_bytes);
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\'') {
      out += "\\'";
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);  // UTF-8 bytes pass through
    }
  }
  if (n < s.size()) out += fmt::format("...({} bytes)", s.size());
  return out;
}

}  // namespace internal

using namespace internal;

namespace {

std::string Describe(const Value& v) {
  if (v.key_for_errors.empty()) return "metadata value";
  return fmt::format("metadata key '{}'", Printable(v.key_for_errors));
}

std::string TypeDescription(const Value& v) {
  if (v.is_array()) return fmt::format("array of {}", ValueTypeName(v.array_type()));
  return std::string(ValueTypeName(v.type()));
}

[[noreturn]] void Mismatch(const Value& v, std::string_view expected) {
  Fail("{} has type {}, expected {}", Describe(v), TypeDescription(v), expected);
}

void RequireArrayOf(const Value& v, bool ok, std::string_view expected) {
  if (!v.is_array() || !ok) Mismatch(v, expected);
}

void RequireIntInRange(const std::string& name, ValueType t, int64_t stored, size_t index) {
  bool fits = IsUnsignedInt(t) ? UnsignedFits(t, static_cast<uint64_t>(stored)) : SignedFits(t, stored);
  if (!fits) Fail("{}: element {} ({}) does not fit type {}", name, index, stored, ValueTypeName(t));
}

}  // namespace

uint64_t Value::AsU64() const {
  if (IsUnsignedInt(type_)) return u64_;
  if (IsSignedInt(type_)) {
    if (i64_ < 0) Fail("{} is negative ({}), expected an unsigned integer", Describe(*this), i64_);
    return static_cast<uint64_t>(i64_);
  }
  Mismatch(*this, "an integer");
}

int64_t Value::AsI64() const {
  if (IsSignedInt(type_)) return i64_;
  if (IsUnsignedInt(type_)) {
    if (u64_ > static_cast<uint64_t>(INT64_MAX))
      Fail("{} ({}) does not fit a signed 64-bit integer", Describe(*this), u64_);
    return static_cast<int64_t>(u64_);
  }
  Mismatch(*this, "an integer");
}

double Value::AsF64() const {
  if (IsFloat(type_)) return f64_;
  if (IsUnsignedInt(type_)) return static_cast<double>(u64_);
  if (IsSignedInt(type_)) return static_cast<double>(i64_);
  Mismatch(*this, "a number");
}

bool Value::AsBool() const {
  if (type_ != ValueType::kBool) Mismatch(*this, "bool");
  return u64_ != 0;
}

const std::string& Value::AsString() const {
  if (type_ != ValueType::kString) Mismatch(*this, "string");
  return str_;
}

size_t Value::size() const {
  if (!is_array()) Mismatch(*this, "an array");
  if (IsInt(array_type_)) return ints_.size();
  if (IsFloat(array_type_)) return floats_.size();
  switch (array_type_) {
    case ValueType::kBool: return bools_.size();
    case ValueType::kString: return strings_.size();
    case ValueType::kArray: return arrays_.size();
    default: return 0;
  }
}

const std::vector<std::string>& Value::AsStrings() const {
  RequireArrayOf(*this, array_type_ == ValueType::kString, "array of string");
  return strings_;
}

std::vector<int64_t> Value::AsI64s() const {
  RequireArrayOf(*this, IsInt(array_type_), "array of integers");
  if (array_type_ == ValueType::kU64) {
    for (size_t i = 0; i < ints_.size(); ++i) {
      if (ints_[i] < 0)
        Fail("{}: element {} ({}) does not fit a signed 64-bit integer", Describe(*this), i,
             static_cast<uint64_t>(ints_[i]));
    }
  }
  return ints_;
}

std::vector<double> Value::AsF64s() const {
  RequireArrayOf(*this, IsInt(array_type_) || IsFloat(array_type_), "array of numbers");
  if (IsFloat(array_type_)) return floats_;
  std::vector<double> out(ints_.size());
  const bool u64 = array_type_ == ValueType::kU64;
  for (size_t i = 0; i < ints_.size(); ++i)
    out[i] = u64 ? static_cast<double>(static_cast<uint64_t>(ints_[i])) : static_cast<double>(ints_[i]);
  return out;
}

std::vector<float> Value::AsF32s() const {
  RequireArrayOf(*this, IsInt(array_type_) || IsFloat(array_type_), "array of numbers");
  std::vector<double> wide = AsF64s();
  return std::vector<float>(wide.begin(), wide.end());
}

std::vector<bool> Value::AsBools() const {
  RequireArrayOf(*this, array_type_ == ValueType::kBool, "array of bool");
  return std::vector<bool>(bools_.begin(), bools_.end());
}

const std::vector<Value>& Value::AsArray() const {
  RequireArrayOf(*this, array_type_ == ValueType::kArray, "array of arrays");
  return arrays_;
}

Value Value::U8(uint8_t v) { Value r; r.type_ = ValueType::kU8; r.u64_ = v; return r; }
Value Value::I8(int8_t v) { Value r; r.type_ = ValueType::kI8; r.i64_ = v; return r; }
Value Value::U16(uint16_t v) { Value r; r.type_ = ValueType::kU16; r.u64_ = v; return r; }
Value Value::I16(int16_t v) { Value r; r.type_ = ValueType::kI16; r.i64_ = v; return r; }
Value Value::U32(uint32_t v) { Value r; r.type_ = ValueType::kU32; r.u64_ = v; return r; }
Value Value::I32(int32_t v) { Value r; r.type_ = ValueType::kI32; r.i64_ = v; return r; }
Value Value::F32(float v) { Value r; r.type_ = ValueType::kF32; r.f64_ = v; return r; }
Value Value::Bool(bool v) { Value r; r.type_ = ValueType::kBool; r.u64_ = v ? 1 : 0; return r; }
Value Value::String(std::string v) { Value r; r.type_ = ValueType::kString; r.str_ = std::move(v); return r; }
Value Value::U64(uint64_t v) { Value r; r.type_ = ValueType::kU64; r.u64_ = v; return r; }
Value Value::I64(int64_t v) { Value r; r.type_ = ValueType::kI64; r.i64_ = v; return r; }
Value Value::F64(double v) { Value r; r.type_ = ValueType::kF64; r.f64_ = v; return r; }

Value Value::StringArray(std::vector<std::string> v) {
  Value r;
  r.type_ = ValueType::kArray;
  r.array_type_ = ValueType::kString;
  r.strings_ = std::move(v);
  return r;
}

Value Value::I32Array(std::vector<int32_t> v) {
  Value r;
  r.type_ = ValueType::kArray;
  r.array_type_ = ValueType::kI32;
  r.ints_.assign(v.begin(), v.end());
  return r;
}

Value Value::F32Array(std::vector<float> v) {
  Value r;
  r.type_ = ValueType::kArray;
  r.array_type_ = ValueType::kF32;
  r.floats_.assign(v.begin(), v.end());
  return r;
}

Value Value::IntArray(ValueType element_type, std::vector<int64_t> v) {
  if (!IsInt(element_type)) Fail("Value::IntArray: {} is not an integer type", ValueTypeName(element_type));
  Value r;
  r.type_ = ValueType::kArray;
  r.array_type_ = element_type;
  r.ints_ = std::move(v);
  r.Validate();
  return r;
}

Value Value::FloatArray(ValueType element_type, std::vector<double> v) {
  if (!IsFloat(element_type)) Fail("Value::FloatArray: {} is not a float type", ValueTypeName(element_type));
  Value r;
  r.type_ = ValueType::kArray;
  r.array_type_ = element_type;
  r.floats_ = std::move(v);
  return r;
}

Value Value::BoolArray(std::vector<bool> v) {
  Value r;
  r.type_ = ValueType::kArray;
  r.array_type_ = ValueType::kBool;
  r.bools_.assign(v.begin(), v.end());
  return r;
}

Value Value::Array(ValueType element_type, std::vector<Value> elements) {
  if (!IsKnownValueType(static_cast<uint32_t>(element_type)))
    Fail("Value::Array: unknown element type {}", static_cast<uint32_t>(element_type));
  Value r;
  r.type_ = ValueType::kArray;
  r.array_type_ = element_type;
  for (size_t i = 0; i < elements.size(); ++i) {
    Value& e = elements[i];
    if (e.type_ != element_type)
      Fail("Value::Array: element {} has type {}, expected {}", i, ValueTypeName(e.type_),
           ValueTypeName(element_type));
    e.Validate();
    if (IsUnsignedInt(element_type)) {
      r.ints_.push_back(static_cast<int64_t>(e.u64_));
    } else if (IsSignedInt(element_type)) {
      r.ints_.push_back(e.i64_);
    } else if (IsFloat(element_type)) {
      r.floats_.push_back(e.f64_);
    } else if (element_type == ValueType::kBool) {
      r.bools_.push_back(e.u64_ != 0);
    } else if (element_type == ValueType::kString) {
      r.strings_.push_back(std::move(e.str_));
    } else {
      e.key_for_errors.clear();
      r.arrays_.push_back(std::move(e));
    }
  }
  r.Validate();
  return r;
}

namespace {

std::string NameFor(const std::string& key) {
  return key.empty() ? std::string("metadata value") : fmt::format("metadata key '{}'", Printable(key));
}

// `key` names the value in messages (nested elements as key[i]).
void ValidateImpl(const Value& v, int depth, const std::string& key) {
  const std::string name = NameFor(key);
  if (!IsKnownValueType(static_cast<uint32_t>(v.type_)))
    Fail("{}: unknown value type {}", name, static_cast<uint32_t>(v.type_));
  if (IsUnsignedInt(v.type_) || v.type_ == ValueType::kBool) {
    const bool fits = v.type_ == ValueType::kBool ? v.u64_ <= 1 : UnsignedFits(v.type_, v.u64_);
    if (!fits) Fail("{}: value {} does not fit type {}", name, v.u64_, ValueTypeName(v.type_));
    return;
  }
  if (IsSignedInt(v.type_)) {
    if (!SignedFits(v.type_, v.i64_))
      Fail("{}: value {} does not fit type {}", name, v.i64_, ValueTypeName(v.type_));
    return;
  }
  if (v.type_ == ValueType::kString) {
    if (v.str_.size() > kMaxStringOrArrayLength)
      Fail("{}: string of {} bytes exceeds the limit of {}", name, v.str_.size(), kMaxStringOrArrayLength);
    return;
  }
  if (!v.is_array()) return;  // floats
  if (depth > kMaxArrayNesting)
    Fail("{}: arrays nested deeper than {} levels", name, kMaxArrayNesting);
  const ValueType et = v.array_type_;
  if (!IsKnownValueType(static_cast<uint32_t>(et)))
    Fail("{}: unknown array element type {}", name, static_cast<uint32_t>(et));
  if (v.size() > kMaxStringOrArrayLength)
    Fail("{}: array of {} elements exceeds the limit of {}", name, v.size(), kMaxStringOrArrayLength);
  if (IsInt(et)) {
    for (size_t i = 0; i < v.ints_.size(); ++i) RequireIntInRange(name, et, v.ints_[i], i);
  } else if (et == ValueType::kBool) {
    for (size_t i = 0; i < v.bools_.size(); ++i)
      if (v.bools_[i] > 1) Fail("{}: element {} is not a valid bool ({})", name, i, v.bools_[i]);
  } else if (et == ValueType::kString) {
    for (size_t i = 0; i < v.strings_.size(); ++i)
      if (v.strings_[i].size() > kMaxStringOrArrayLength)
        Fail("{}: element {} is a string of {} bytes, over the limit of {}", name, i,
             v.strings_[i].size(), kMaxStringOrArrayLength);
  } else if (et == ValueType::kArray) {
    for (size_t i = 0; i < v.arrays_.size(); ++i) {
      const Value& e = v.arrays_[i];
      if (!e.is_array())
        Fail("{}: element {} has type {}, expected array", name, i, ValueTypeName(e.type_));
      ValidateImpl(e, depth + 1, fmt::format("{}[{}]", key, i));
    }
  }
}

bool SameBits(double a, double b) { return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b); }

}  // namespace

void Value::Validate() const { ValidateImpl(*this, 1, key_for_errors); }

bool Value::operator==(const Value& o) const {
  if (type_ != o.type_) return false;
  if (IsUnsignedInt(type_) || type_ == ValueType::kBool) return u64_ == o.u64_;
  if (IsSignedInt(type_)) return i64_ == o.i64_;
  if (IsFloat(type_)) return SameBits(f64_, o.f64_);
  if (type_ == ValueType::kString) return str_ == o.str_;
  if (array_type_ != o.array_type_) return false;
  if (IsInt(array_type_)) return ints_ == o.ints_;
  if (IsFloat(array_type_)) {
    if (floats_.size() != o.floats_.size()) return false;
    for (size_t i = 0; i < floats_.size(); ++i)
      if (!SameBits(floats_[i], o.floats_[i])) return false;
    return true;
  }
  if (array_type_ == ValueType::kBool) return bools_ == o.bools_;
  if (array_type_ == ValueType::kString) return strings_ == o.strings_;
  return arrays_ == o.arrays_;
}

}  // namespace cairn::gguf
