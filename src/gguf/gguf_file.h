// GGUF v3 reader: memory-mapped, validated, zero-copy tensor access.
//
// File layout (little-endian; see ../shared/reference/llama-cpp-notes.md §4):
//   "GGUF" u32 version(3) i64 n_tensors i64 n_kv, KV pairs, tensor infos,
//   padding to general.alignment (default 32), data blob.
// Open() validates everything up front (sizes, offsets, types, overflow,
// alignment, packing in info order) and throws cairn::Error with a message that
// names the key/tensor and byte offset; after that, accessors never fail.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"

namespace cairn::gguf {

// Metadata value type codes as stored in the file.
enum class ValueType : uint32_t {
  kU8 = 0, kI8 = 1, kU16 = 2, kI16 = 3, kU32 = 4, kI32 = 5, kF32 = 6,
  kBool = 7, kString = 8, kArray = 9, kU64 = 10, kI64 = 11, kF64 = 12,
};

std::string_view ValueTypeName(ValueType type);  // "u8", ..., "string", "array"; "?" if unknown

// Reader limits (the same as llama.cpp's): strings and arrays hold at most 1 Gi
// elements; nested arrays at most kMaxArrayNesting levels deep.
inline constexpr uint64_t kMaxStringOrArrayLength = uint64_t{1} << 30;
inline constexpr int kMaxArrayNesting = 16;
// ggml's tensor name limit (GGML_MAX_NAME = 64, including the terminator).
inline constexpr size_t kMaxTensorNameBytes = 63;
inline constexpr uint32_t kDefaultAlignment = 32;

// One metadata value. Scalars are widened for access; arrays keep their element
// type. Strings are byte strings (GGUF does not promise UTF-8).
class Value {
 public:
  ValueType type() const { return type_; }
  bool is_array() const { return type_ == ValueType::kArray; }
  ValueType array_type() const { return array_type_; }  // element type when is_array()

  // Scalar access; throws cairn::Error naming `key_for_errors` on type mismatch.
  // Integer getters accept any integer type whose value fits.
  uint64_t AsU64() const;
  int64_t AsI64() const;
  double AsF64() const;   // any numeric type
  bool AsBool() const;
  const std::string& AsString() const;

  // Arrays.
  size_t size() const;  // element count (arrays only)
  const std::vector<std::string>& AsStrings() const;   // array of strings
  std::vector<int64_t> AsI64s() const;                  // array of any integer type
  std::vector<float> AsF32s() const;                    // array of f32 (or any numeric)
  std::vector<double> AsF64s() const;                   // array of any numeric type
  std::vector<bool> AsBools() const;                    // array of bool
  const std::vector<Value>& AsArray() const;            // array of arrays (nested)

  // Construction (used by the reader and the writer).
  static Value U8(uint8_t v); static Value I8(int8_t v); static Value U16(uint16_t v);
  static Value I16(int16_t v); static Value U32(uint32_t v); static Value I32(int32_t v);
  static Value F32(float v); static Value Bool(bool v); static Value String(std::string v);
  static Value U64(uint64_t v); static Value I64(int64_t v); static Value F64(double v);
  static Value StringArray(std::vector<std::string> v);
  static Value I32Array(std::vector<int32_t> v);
  static Value F32Array(std::vector<float> v);
  static Value Array(ValueType element_type, std::vector<Value> elements);  // generic
  // Arrays of any integer type (values must fit `element_type`; u64 values above
  // INT64_MAX are passed as their two's-complement bit pattern), any float type, bool.
  static Value IntArray(ValueType element_type, std::vector<int64_t> v);
  static Value FloatArray(ValueType element_type, std::vector<double> v);
  static Value BoolArray(std::vector<bool> v);

  // Same type, element type and contents (floats compared bitwise after widening).
  bool operator==(const Value& other) const;

  // Throws cairn::Error if the storage does not match the type (e.g. an integer
  // array element out of range). The writer calls it on every Set.
  void Validate() const;

  std::string key_for_errors;  // set by the reader so errors can name the key

  // Storage (public for the reader/writer; prefer the accessors).
  ValueType type_ = ValueType::kU8;
  ValueType array_type_ = ValueType::kU8;
  uint64_t u64_ = 0;      // unsigned ints, bool
  int64_t i64_ = 0;       // signed ints
  double f64_ = 0;        // f32/f64
  std::string str_;
  std::vector<std::string> strings_;   // array of strings
  std::vector<int64_t> ints_;          // array of integers (any width, widened; u64 as bit pattern)
  std::vector<double> floats_;         // array of f32/f64
  std::vector<uint8_t> bools_;         // array of bool
  std::vector<Value> arrays_;          // array of arrays
};

struct TensorInfo {
  std::string name;
  std::vector<int64_t> shape;  // ggml "ne": innermost (contiguous) dimension first, 1..4 dims
  DType type = DType::kF32;
  uint64_t offset = 0;         // relative to the data blob
  size_t bytes = 0;            // exact data size (rows * RowBytes(type, shape[0]))
  const uint8_t* data = nullptr;  // points into the mapping (valid while the file lives)

  int64_t elements() const;
  int64_t rows() const { return shape.empty() ? 0 : elements() / shape[0]; }
};

class GgufFile {
 public:
  // Maps and validates a file. Throws cairn::Error on any problem.
  static std::unique_ptr<GgufFile> Open(const std::string& path);
  // Validates an in-memory image (copied); used by tests and the fuzzer.
  static std::unique_ptr<GgufFile> FromBytes(std::span<const uint8_t> bytes);

  ~GgufFile();
  GgufFile(const GgufFile&) = delete;
  GgufFile& operator=(const GgufFile&) = delete;

  uint32_t version() const { return version_; }
  uint32_t alignment() const { return alignment_; }
  size_t file_size() const { return size_; }
  // Whether the bytes are a read-only file mapping (pages can be dropped and re-read).
  bool mapped() const { return mapped_; }
  // Start of the data blob: the end of the tensor infos rounded up to alignment().
  // Files without tensors may end before it (llama.cpp omits that padding then).
  size_t data_offset() const { return data_offset_; }
  const std::string& path() const { return path_; }

  // Metadata, in file order.
  const std::vector<std::pair<std::string, Value>>& metadata() const { return metadata_; }
  const Value* Find(std::string_view key) const;  // nullptr if absent
  const Value& Get(std::string_view key) const;   // throws "missing metadata key 'k'"

  // Typed conveniences; throw cairn::Error naming the key if absent or mistyped.
  std::string GetString(std::string_view key) const;
  uint64_t GetU64(std::string_view key) const;
  double GetF64(std::string_view key) const;
  // Same, with a default when the key is absent (still throws when mistyped).
  std::string GetString(std::string_view key, std::string_view fallback) const;
  uint64_t GetU64(std::string_view key, uint64_t fallback) const;
  double GetF64(std::string_view key, double fallback) const;
  bool GetBool(std::string_view key, bool fallback) const;

  // "general.architecture" or "" when absent.
  std::string architecture() const;

  // Tensors, in info order.
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* FindTensor(std::string_view name) const;  // nullptr if absent

 private:
  friend class GgufParser;  // gguf_file.cc
  GgufFile() = default;
  void Parse(std::string_view origin);  // origin names the file in error messages

  std::string path_;
  const uint8_t* base_ = nullptr;  // mapping or owned copy
  size_t size_ = 0;
  bool mapped_ = false;
  struct FreeDeleter {
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t, FreeDeleter> owned_;  // FromBytes copy (page-aligned)
  uint32_t version_ = 0;
  uint32_t alignment_ = 32;
  size_t data_offset_ = 0;
  std::vector<std::pair<std::string, Value>> metadata_;
  std::vector<TensorInfo> tensors_;
  // Index for Find/FindTensor (implementation detail).
  struct Index;
  std::unique_ptr<Index> index_;
};

}  // namespace cairn::gguf
