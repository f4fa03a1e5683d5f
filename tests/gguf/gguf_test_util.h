// Shared helpers for the GGUF tests: deterministic reference files (also the
// fuzz seed corpus, and mirrored by tools/check_gguf_with_gguf_py.py) and a raw
// byte builder for hand-made malformed images.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"

namespace cairn::gguf::testutil {

// Runs `fn`, expecting a cairn::Error whose message contains every fragment.
template <typename Fn>
void ExpectError(Fn&& fn, std::initializer_list<std::string_view> fragments) {
  try {
    fn();
    ADD_FAILURE() << "expected cairn::Error";
  } catch (const Error& e) {
    const std::string message = e.what();
    for (std::string_view f : fragments)
      EXPECT_NE(message.find(f), std::string::npos) << "message: " << message << "\nlacks: " << f;
  }
}

// Tensor data pattern: byte i of the tensor numbered `seed` (mirrored in the Python checker).
inline std::vector<uint8_t> PatternBytes(size_t n, int seed) {
  std::vector<uint8_t> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>((i * 37 + static_cast<size_t>(seed) * 11 + 7) & 0xff);
  return out;
}

inline size_t TensorBytes(const std::vector<int64_t>& shape, DType type) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return RowBytes(type, shape[0]) * static_cast<size_t>(n / shape[0]);
}

struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape;
  DType type;
};

inline void AddPatternTensors(GgufWriter& w, const std::vector<TensorSpec>& specs) {
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorSpec& s = specs[i];
    w.AddTensor(s.name, s.shape, s.type, PatternBytes(TensorBytes(s.shape, s.type), static_cast<int>(i)));
  }
}

// One tensor of every type Cairn knows (supported or not), small shapes.
inline std::vector<TensorSpec> AllTypeTensorSpecs() {
  return {
      {"t.f32", {8, 2}, DType::kF32},     {"t.f32_4d", {2, 2, 2, 2}, DType::kF32},
      {"t.f16", {8, 2}, DType::kF16},     {"t.bf16", {8, 2}, DType::kBF16},
      {"t.q4_0", {32, 2}, DType::kQ4_0},  {"t.q4_1", {32}, DType::kQ4_1},
      {"t.q5_0", {32}, DType::kQ5_0},     {"t.q5_1", {32}, DType::kQ5_1},
      {"t.q8_0", {32, 2}, DType::kQ8_0},  {"t.q8_1", {32}, DType::kQ8_1},
      {"t.q2_K", {256}, DType::kQ2_K},    {"t.q3_K", {256}, DType::kQ3_K},
      {"t.q4_K", {256}, DType::kQ4_K},    {"t.q5_K", {256}, DType::kQ5_K},
      {"t.q6_K", {256}, DType::kQ6_K},    {"t.q8_K", {256}, DType::kQ8_K},
      {"t.i8", {8}, DType::kI8},          {"t.i16", {8}, DType::kI16},
      {"t.i32", {8}, DType::kI32},        {"t.i64", {8}, DType::kI64},
      {"t.f64", {8}, DType::kF64},
  };
}

inline GgufWriter MakeTinyWriter() {
  GgufWriter w;
  w.Set("general.architecture", Value::String("llama"));
  w.Set("general.name", Value::String("tiny"));
  w.Set("llama.block_count", Value::U32(1));
  AddPatternTensors(w, {{"token_embd.weight", {4, 2}, DType::kF32}});
  return w;
}

// Every scalar type, every array element type, nested arrays, unicode.
inline GgufWriter MakeValuesWriter() {
  GgufWriter w;
  w.Set("general.architecture", Value::String("test"));
  w.Set("test.u8", Value::U8(200));
  w.Set("test.i8", Value::I8(-100));
  w.Set("test.u16", Value::U16(60000));
  w.Set("test.i16", Value::I16(-30000));
  w.Set("test.u32", Value::U32(4000000000u));
  w.Set("test.i32", Value::I32(-2000000000));
  w.Set("test.f32", Value::F32(1.5f));
  w.Set("test.bool", Value::Bool(true));
  w.Set("test.string", Value::String("h\xc3\xa9llo w\xc3\xb6rld \xe2\x9c\x93"));
  w.Set("test.u64", Value::U64(9223372036854775813ull));
  w.Set("test.i64", Value::I64(-4611686018427387904ll));
  w.Set("test.f64", Value::F64(3.141592653589793));
  w.Set("test.arr.u8", Value::IntArray(ValueType::kU8, {1, 2, 255}));
  w.Set("test.arr.i8", Value::IntArray(ValueType::kI8, {-128, 0, 127}));
  w.Set("test.arr.u16", Value::IntArray(ValueType::kU16, {0, 65535}));
  w.Set("test.arr.i16", Value::IntArray(ValueType::kI16, {-32768, 32767}));
  w.Set("test.arr.u32", Value::IntArray(ValueType::kU32, {0, 4294967295ll}));
  w.Set("test.arr.i32", Value::I32Array({-1, 0, 1}));
  w.Set("test.arr.u64", Value::IntArray(ValueType::kU64, {0, -1}));  // -1 = UINT64_MAX's bit pattern
  w.Set("test.arr.i64", Value::IntArray(ValueType::kI64, {std::numeric_limits<int64_t>::min(),
                                                           std::numeric_limits<int64_t>::max()}));
  w.Set("test.arr.f32", Value::F32Array({0.5f, -2.25f}));
  w.Set("test.arr.f64", Value::FloatArray(ValueType::kF64, {1e300, -0.0}));
  w.Set("test.arr.bool", Value::BoolArray({true, false, true}));
  w.Set("test.arr.string", Value::StringArray({"a", "", "\xc3\xbcn\xc3\xaf"}));
  w.Set("test.arr.nested", Value::Array(ValueType::kArray, {Value::I32Array({1, 2}), Value::I32Array({3})}));
  w.Set("test.arr.nested_str",
        Value::Array(ValueType::kArray, {Value::StringArray({"x", "y"}), Value::StringArray({"z"})}));
  w.Set("test.arr.nested3",
        Value::Array(ValueType::kArray, {Value::Array(ValueType::kArray, {Value::I32Array({7})})}));
  w.Set("test.empty_string", Value::String(""));
  return w;
}

inline GgufWriter MakeTensorsWriter() {
  GgufWriter w;
  w.Set("general.architecture", Value::String("test"));
  w.Set("general.name", Value::String("every tensor type"));
  AddPatternTensors(w, AllTypeTensorSpecs());
  return w;
}

inline std::vector<TensorSpec> Align64TensorSpecs() {
  return {{"a", {32}, DType::kQ8_0}, {"b", {3}, DType::kF16}, {"c", {5, 3}, DType::kF32}, {"d", {256}, DType::kQ4_K}};
}

inline GgufWriter MakeAlign64Writer() {
  GgufWriter w;
  w.Set("general.architecture", Value::String("test"));
  w.SetAlignment(64);
  w.Set("general.name", Value::String("align64"));
  AddPatternTensors(w, Align64TensorSpecs());
  return w;
}

inline GgufWriter MakeVocabWriter() {
  GgufWriter w;
  w.Set("general.architecture", Value::String("qwen2"));
  w.Set("tokenizer.ggml.model", Value::String("gpt2"));
  w.Set("tokenizer.ggml.pre", Value::String("qwen2"));
  w.Set("tokenizer.ggml.tokens", Value::StringArray({"a", "b", "ab", "\xc4\xa0", "<|endoftext|>"}));
  w.Set("tokenizer.ggml.token_type", Value::I32Array({1, 1, 1, 1, 3}));
  w.Set("tokenizer.ggml.merges", Value::StringArray({"a b"}));
  w.Set("tokenizer.ggml.bos_token_id", Value::U32(4));
  w.Set("tokenizer.ggml.eos_token_id", Value::U32(4));
  w.Set("tokenizer.ggml.add_bos_token", Value::Bool(false));
  w.Set("tokenizer.chat_template", Value::String("{% for m in messages %}{{ m.content }}\n{% endfor %}"));
  return w;
}

// Things gguf-py's writer cannot produce (empty arrays); alignment 16 set via a
// u8 value (the writer stores it as u32).
inline GgufWriter MakeEdgeWriter() {
  GgufWriter w;
  w.Set("general.architecture", Value::String("test"));
  w.Set("general.alignment", Value::U8(16));
  w.Set("test.empty.u8", Value::IntArray(ValueType::kU8, {}));
  w.Set("test.empty.string", Value::StringArray({}));
  w.Set("test.empty.f32", Value::F32Array({}));
  w.Set("test.empty.nested", Value::Array(ValueType::kArray, {Value::StringArray({})}));
  w.Set("test.empty.arrays", Value::Array(ValueType::kArray, {}));
  w.Set("test.empty_string", Value::String(""));
  AddPatternTensors(w, {{"e", {3}, DType::kF32}, {"f", {1}, DType::kI8}});
  return w;
}

struct NamedImage {
  std::string name;
  std::vector<uint8_t> bytes;
};

// The seed corpus fuzz/corpus/gguf/*.gguf.
inline std::vector<NamedImage> ReferenceImages() {
  return {
      {"tiny.gguf", MakeTinyWriter().ToBytes()},       {"values.gguf", MakeValuesWriter().ToBytes()},
      {"tensors.gguf", MakeTensorsWriter().ToBytes()}, {"align64.gguf", MakeAlign64Writer().ToBytes()},
      {"vocab.gguf", MakeVocabWriter().ToBytes()},     {"edge.gguf", MakeEdgeWriter().ToBytes()},
  };
}

// Little-endian byte builder for hand-made (often malformed) images.
class Raw {
 public:
  Raw& Bytes(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    data.insert(data.end(), b, b + n);
    return *this;
  }
  template <typename T>
  Raw& Put(T v) {
    return Bytes(&v, sizeof(T));
  }
  Raw& U8(uint8_t v) { return Put(v); }
  Raw& U32(uint32_t v) { return Put(v); }
  Raw& U64(uint64_t v) { return Put(v); }
  Raw& I64(int64_t v) { return Put(v); }
  Raw& Str(const std::string& s) {
    U64(s.size());
    return Bytes(s.data(), s.size());
  }
  Raw& Header(int64_t n_tensors, int64_t n_kv, uint32_t version = 3) {
    Bytes("GGUF", 4);
    U32(version);
    I64(n_tensors);
    return I64(n_kv);
  }
  Raw& KvU32(const std::string& key, uint32_t v) {
    Str(key);
    U32(static_cast<uint32_t>(ValueType::kU32));
    return U32(v);
  }
  Raw& KvString(const std::string& key, const std::string& v) {
    Str(key);
    U32(static_cast<uint32_t>(ValueType::kString));
    return Str(v);
  }
  Raw& TensorInfo(const std::string& name, const std::vector<int64_t>& shape, uint32_t type, uint64_t offset) {
    Str(name);
    U32(static_cast<uint32_t>(shape.size()));
    for (int64_t d : shape) I64(d);
    U32(type);
    return U64(offset);
  }
  Raw& PadTo(size_t alignment) {
    while (data.size() % alignment) data.push_back(0);
    return *this;
  }
  Raw& Zeros(size_t n) {
    data.insert(data.end(), n, 0);
    return *this;
  }

  std::vector<uint8_t> data;
};

}  // namespace cairn::gguf::testutil
