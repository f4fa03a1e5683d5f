// Writer -> reader round trips: every value type, arrays, tensors of every
// dtype, alignment, insertion order, atomic file writes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>

#include "core/error.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_test_util.h"
#include "gguf/gguf_writer.h"

namespace cairn::gguf {
namespace {

using testutil::ExpectError;
using testutil::MakeAlign64Writer;
using testutil::MakeEdgeWriter;
using testutil::MakeTensorsWriter;
using testutil::MakeValuesWriter;
using testutil::PatternBytes;

std::unique_ptr<GgufFile> RoundTrip(const GgufWriter& w) { return GgufFile::FromBytes(w.ToBytes()); }

TEST(GgufRoundTrip, EveryScalarType) {
  auto f = RoundTrip(MakeValuesWriter());
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->alignment(), 32u);
  EXPECT_EQ(f->architecture(), "test");
  EXPECT_EQ(f->Get("test.u8").type(), ValueType::kU8);
  EXPECT_EQ(f->GetU64("test.u8"), 200u);
  EXPECT_EQ(f->Get("test.i8").type(), ValueType::kI8);
  EXPECT_EQ(f->Get("test.i8").AsI64(), -100);
  EXPECT_EQ(f->Get("test.u16").type(), ValueType::kU16);
  EXPECT_EQ(f->GetU64("test.u16"), 60000u);
  EXPECT_EQ(f->Get("test.i16").AsI64(), -30000);
  EXPECT_EQ(f->Get("test.u32").type(), ValueType::kU32);
  EXPECT_EQ(f->GetU64("test.u32"), 4000000000u);
  EXPECT_EQ(f->Get("test.i32").AsI64(), -2000000000);
  EXPECT_EQ(f->Get("test.f32").type(), ValueType::kF32);
  EXPECT_EQ(f->GetF64("test.f32"), 1.5);
  EXPECT_TRUE(f->GetBool("test.bool", false));
  EXPECT_EQ(f->GetString("test.string"), "h\xc3\xa9llo w\xc3\xb6rld \xe2\x9c\x93");
  EXPECT_EQ(f->GetU64("test.u64"), 9223372036854775813ull);
  EXPECT_EQ(f->Get("test.i64").AsI64(), -4611686018427387904ll);
  EXPECT_EQ(f->Get("test.f64").type(), ValueType::kF64);
  EXPECT_EQ(f->GetF64("test.f64"), 3.141592653589793);
  EXPECT_EQ(f->GetString("test.empty_string"), "");
  // Integer getters accept any integer type whose value fits.
  EXPECT_EQ(f->Get("test.u8").AsI64(), 200);
  EXPECT_EQ(f->Get("test.i64").AsF64(), -4611686018427387904.0);
  EXPECT_EQ(f->GetF64("test.u32"), 4e9);
}

TEST(GgufRoundTrip, EveryArrayType) {
  auto f = RoundTrip(MakeValuesWriter());
  auto ints = [&](const char* key, ValueType et) {
    const Value& v = f->Get(key);
    EXPECT_TRUE(v.is_array()) << key;
    EXPECT_EQ(v.array_type(), et) << key;
    return v.AsI64s();
  };
  EXPECT_EQ(ints("test.arr.u8", ValueType::kU8), (std::vector<int64_t>{1, 2, 255}));
  EXPECT_EQ(ints("test.arr.i8", ValueType::kI8), (std::vector<int64_t>{-128, 0, 127}));
  EXPECT_EQ(ints("test.arr.u16", ValueType::kU16), (std::vector<int64_t>{0, 65535}));
  EXPECT_EQ(ints("test.arr.i16", ValueType::kI16), (std::vector<int64_t>{-32768, 32767}));
  EXPECT_EQ(ints("test.arr.u32", ValueType::kU32), (std::vector<int64_t>{0, 4294967295ll}));
  EXPECT_EQ(ints("test.arr.i32", ValueType::kI32), (std::vector<int64_t>{-1, 0, 1}));
  EXPECT_EQ(ints("test.arr.i64", ValueType::kI64),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()}));
  const Value& u64 = f->Get("test.arr.u64");
  EXPECT_EQ(u64.array_type(), ValueType::kU64);
  EXPECT_EQ(u64.size(), 2u);
  EXPECT_EQ(u64.ints_[1], -1);  // UINT64_MAX, stored as its bit pattern
  ExpectError([&] { u64.AsI64s(); }, {"test.arr.u64", "element 1", "18446744073709551615"});
  EXPECT_EQ(u64.AsF64s()[1], 18446744073709551615.0);

  EXPECT_EQ(f->Get("test.arr.f32").array_type(), ValueType::kF32);
  EXPECT_EQ(f->Get("test.arr.f32").AsF32s(), (std::vector<float>{0.5f, -2.25f}));
  const std::vector<double> f64 = f->Get("test.arr.f64").AsF64s();
  ASSERT_EQ(f64.size(), 2u);
  EXPECT_EQ(f64[0], 1e300);
  EXPECT_TRUE(std::signbit(f64[1]));
  EXPECT_EQ(f->Get("test.arr.i32").AsF32s(), (std::vector<float>{-1, 0, 1}));
  EXPECT_EQ(f->Get("test.arr.bool").AsBools(), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(f->Get("test.arr.string").AsStrings(),
            (std::vector<std::string>{"a", "", "\xc3\xbcn\xc3\xaf"}));

  const Value& nested = f->Get("test.arr.nested");
  EXPECT_EQ(nested.array_type(), ValueType::kArray);
  ASSERT_EQ(nested.size(), 2u);
  EXPECT_EQ(nested.AsArray()[0].AsI64s(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(nested.AsArray()[1].AsI64s(), (std::vector<int64_t>{3}));
  EXPECT_EQ(nested.AsArray()[1].key_for_errors, "test.arr.nested[1]");
  const Value& nested_str = f->Get("test.arr.nested_str");
  EXPECT_EQ(nested_str.AsArray()[0].AsStrings(), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(nested_str.AsArray()[1].AsStrings(), (std::vector<std::string>{"z"}));
  const Value& nested3 = f->Get("test.arr.nested3");
  EXPECT_EQ(nested3.AsArray()[0].AsArray()[0].AsI64s(), (std::vector<int64_t>{7}));
}

TEST(GgufRoundTrip, EmptyArraysAndStringsAndAlignment16) {
  auto f = RoundTrip(MakeEdgeWriter());
  EXPECT_EQ(f->alignment(), 16u);
  EXPECT_EQ(f->Get("general.alignment").type(), ValueType::kU32);  // set as u8, written as u32
  EXPECT_EQ(f->Get("test.empty.u8").size(), 0u);
  EXPECT_EQ(f->Get("test.empty.u8").array_type(), ValueType::kU8);
  EXPECT_TRUE(f->Get("test.empty.string").AsStrings().empty());
  EXPECT_TRUE(f->Get("test.empty.f32").AsF32s().empty());
  ASSERT_EQ(f->Get("test.empty.nested").size(), 1u);
  EXPECT_EQ(f->Get("test.empty.nested").AsArray()[0].size(), 0u);
  EXPECT_EQ(f->Get("test.empty.arrays").size(), 0u);
  EXPECT_EQ(f->Get("test.empty.arrays").array_type(), ValueType::kArray);
  EXPECT_EQ(f->GetString("test.empty_string"), "");
  EXPECT_EQ(f->data_offset() % 16, 0u);
  EXPECT_EQ(f->tensors()[1].offset, 16u);
}

TEST(GgufRoundTrip, ValuesCompareEqualAfterRoundTrip) {
  const std::vector<uint8_t> bytes = MakeValuesWriter().ToBytes();
  auto f = GgufFile::FromBytes(bytes);
  // Rewriting what was read reproduces the file byte for byte.
  GgufWriter w;
  for (const auto& [key, value] : f->metadata()) w.Set(key, value);
  EXPECT_EQ(w.ToBytes(), bytes);
  auto g = GgufFile::FromBytes(w.ToBytes());
  ASSERT_EQ(g->metadata().size(), f->metadata().size());
  for (size_t i = 0; i < f->metadata().size(); ++i) {
    EXPECT_EQ(g->metadata()[i].first, f->metadata()[i].first);
    EXPECT_TRUE(g->metadata()[i].second == f->metadata()[i].second) << f->metadata()[i].first;
  }
  EXPECT_FALSE(f->Get("test.u8") == f->Get("test.i8"));
  EXPECT_FALSE(f->Get("test.arr.nested") == f->Get("test.arr.nested3"));
}

TEST(GgufRoundTrip, MetadataKeepsInsertionOrderAndSetReplacesInPlace) {
  GgufWriter w;
  w.Set("general.architecture", Value::String("x"));
  w.Set("b", Value::U32(1));
  w.Set("a", Value::String("first"));
  w.Set("b", Value::String("replaced"));  // keeps its position, changes type
  auto f = RoundTrip(w);
  ASSERT_EQ(f->metadata().size(), 3u);
  EXPECT_EQ(f->metadata()[0].first, "general.architecture");
  EXPECT_EQ(f->metadata()[1].first, "b");
  EXPECT_EQ(f->metadata()[2].first, "a");
  EXPECT_EQ(f->GetString("b"), "replaced");
}

TEST(GgufRoundTrip, AccessorErrorsNameTheKey) {
  auto f = RoundTrip(MakeValuesWriter());
  ExpectError([&] { f->GetString("test.u8"); }, {"metadata key 'test.u8'", "type u8", "expected string"});
  ExpectError([&] { f->Get("test.i8").AsU64(); }, {"'test.i8'", "negative"});
  ExpectError([&] { f->Get("test.u64").AsI64(); }, {"'test.u64'", "does not fit"});
  ExpectError([&] { f->Get("test.string").AsF64(); }, {"'test.string'", "expected a number"});
  ExpectError([&] { f->Get("test.u8").AsBool(); }, {"'test.u8'", "expected bool"});
  ExpectError([&] { f->Get("test.u8").size(); }, {"'test.u8'", "expected an array"});
  ExpectError([&] { f->Get("test.arr.i32").AsStrings(); },
              {"'test.arr.i32'", "array of i32", "expected array of string"});
  ExpectError([&] { f->Get("test.arr.string").AsI64s(); }, {"'test.arr.string'", "expected array of integers"});
  ExpectError([&] { f->Get("test.arr.string").AsF32s(); }, {"expected array of numbers"});
  ExpectError([&] { f->Get("test.arr.i32").AsArray(); }, {"expected array of arrays"});
  ExpectError([&] { f->Get("test.arr.i32").AsBools(); }, {"expected array of bool"});
  ExpectError([&] { f->Get("no.such.key"); }, {"missing metadata key 'no.such.key'"});
  ExpectError([&] { f->GetU64("no.such.key"); }, {"missing metadata key"});
  ExpectError([&] { f->GetU64("test.string", 5); }, {"'test.string'"});  // mistyped: still throws
  EXPECT_EQ(f->Find("no.such.key"), nullptr);
  EXPECT_EQ(f->GetU64("no.such.key", 7), 7u);
  EXPECT_EQ(f->GetF64("no.such.key", 0.25), 0.25);
  EXPECT_EQ(f->GetString("no.such.key", "dflt"), "dflt");
  EXPECT_TRUE(f->GetBool("no.such.key", true));
  EXPECT_EQ(f->FindTensor("nope"), nullptr);
}

TEST(GgufRoundTrip, TensorsOfEveryType) {
  const std::vector<uint8_t> bytes = MakeTensorsWriter().ToBytes();
  auto f = GgufFile::FromBytes(bytes);
  const auto specs = testutil::AllTypeTensorSpecs();
  ASSERT_EQ(f->tensors().size(), specs.size());
  const uint8_t* base = f->tensors()[0].data - f->data_offset();
  uint64_t expected_offset = 0;
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorInfo& t = f->tensors()[i];
    SCOPED_TRACE(t.name);
    EXPECT_EQ(t.name, specs[i].name);
    EXPECT_EQ(t.shape, specs[i].shape);
    EXPECT_EQ(t.type, specs[i].type);
    const size_t bytes = testutil::TensorBytes(specs[i].shape, specs[i].type);
    EXPECT_EQ(t.bytes, bytes);
    EXPECT_EQ(t.offset, expected_offset);
    EXPECT_EQ(t.data, base + f->data_offset() + t.offset);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data) % 32, 0u);
    EXPECT_EQ(std::vector<uint8_t>(t.data, t.data + t.bytes), PatternBytes(bytes, static_cast<int>(i)));
    EXPECT_EQ(f->FindTensor(specs[i].name), &t);
    expected_offset += (bytes + 31) / 32 * 32;
  }
  // Known byte sizes from ggml's block layouts.
  EXPECT_EQ(f->FindTensor("t.q4_0")->bytes, 36u);
  EXPECT_EQ(f->FindTensor("t.q8_0")->bytes, 68u);
  EXPECT_EQ(f->FindTensor("t.q4_K")->bytes, 144u);
  EXPECT_EQ(f->FindTensor("t.q6_K")->bytes, 210u);
  EXPECT_EQ(f->FindTensor("t.q2_K")->bytes, 84u);
  EXPECT_EQ(f->FindTensor("t.bf16")->bytes, 32u);
  EXPECT_EQ(f->FindTensor("t.f32_4d")->elements(), 16);
  EXPECT_EQ(f->FindTensor("t.f32_4d")->rows(), 8);
  EXPECT_EQ(f->FindTensor("t.q8_0")->rows(), 2);
  // The writer pads the last tensor too (as llama.cpp and gguf-py do).
  EXPECT_EQ(f->file_size(), f->data_offset() + expected_offset);
  EXPECT_EQ(f->data_offset() % 32, 0u);
  EXPECT_EQ(f->Find("general.alignment"), nullptr);  // default alignment is not written
}

TEST(GgufRoundTrip, Alignment64) {
  auto f = RoundTrip(MakeAlign64Writer());
  EXPECT_EQ(f->alignment(), 64u);
  EXPECT_EQ(f->Get("general.alignment").type(), ValueType::kU32);
  EXPECT_EQ(f->metadata()[1].first, "general.alignment");
  EXPECT_EQ(f->data_offset() % 64, 0u);
  const auto specs = testutil::Align64TensorSpecs();
  uint64_t expected_offset = 0;
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorInfo& t = f->tensors()[i];
    EXPECT_EQ(t.offset, expected_offset) << t.name;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data) % 64, 0u) << t.name;
    EXPECT_EQ(std::vector<uint8_t>(t.data, t.data + t.bytes), PatternBytes(t.bytes, static_cast<int>(i)));
    expected_offset += (t.bytes + 63) / 64 * 64;
  }
  EXPECT_EQ(f->file_size(), f->data_offset() + expected_offset);
}

TEST(GgufRoundTrip, PaddingIsZeros) {
  const std::vector<uint8_t> bytes = MakeAlign64Writer().ToBytes();
  auto f = GgufFile::FromBytes(bytes);
  std::vector<bool> covered(bytes.size(), false);
  for (const TensorInfo& t : f->tensors())
    for (size_t i = 0; i < t.bytes; ++i) covered[f->data_offset() + t.offset + i] = true;
  for (size_t i = f->data_offset(); i < bytes.size(); ++i)
    if (!covered[i]) {
      EXPECT_EQ(bytes[i], 0) << "padding byte " << i;
    }
}

TEST(GgufRoundTrip, NoTensors) {
  GgufWriter w;
  w.Set("general.architecture", Value::String("x"));
  const std::vector<uint8_t> bytes = w.ToBytes();
  EXPECT_EQ(bytes.size() % 32, 0u);  // llama.cpp pads the (empty) data section too
  auto f = GgufFile::FromBytes(bytes);
  EXPECT_TRUE(f->tensors().empty());
  EXPECT_EQ(f->data_offset(), bytes.size());
  // Files without that padding (like llama.cpp's vocab-only files) load as well.
  const size_t unpadded = 24 + 8 + 20 + 4 + 8 + 1;
  auto g = GgufFile::FromBytes(std::span(bytes).first(unpadded));
  EXPECT_EQ(g->architecture(), "x");
  EXPECT_EQ(g->data_offset(), 96u);
}

TEST(GgufRoundTrip, EmptyWriter) {
  const std::vector<uint8_t> bytes = GgufWriter().ToBytes();
  EXPECT_EQ(bytes.size(), 32u);
  auto f = GgufFile::FromBytes(bytes);
  EXPECT_TRUE(f->metadata().empty());
  EXPECT_EQ(f->architecture(), "");
}

TEST(GgufRoundTrip, Version2IsAccepted) {
  std::vector<uint8_t> bytes = testutil::MakeTinyWriter().ToBytes();
  bytes[4] = 2;
  auto f = GgufFile::FromBytes(bytes);
  EXPECT_EQ(f->version(), 2u);
  EXPECT_EQ(f->tensors().size(), 1u);
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "cairn-gguf-XXXXXX").string();
    CAIRN_CHECK(::mkdtemp(tmpl.data()) != nullptr);
    path_ = tmpl;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  size_t EntryCount() const {
    return static_cast<size_t>(std::distance(std::filesystem::directory_iterator(path_), {}));
  }

 private:
  std::filesystem::path path_;
};

TEST(GgufRoundTrip, WriteFileThenOpenMapsTheFile) {
  TempDir dir;
  const std::string path = dir / "model.gguf";
  const GgufWriter w = MakeTensorsWriter();
  w.WriteFile(path);
  EXPECT_EQ(dir.EntryCount(), 1u);  // no temporary left behind
  auto f = GgufFile::Open(path);
  EXPECT_EQ(f->path(), path);
  const std::vector<uint8_t> bytes = w.ToBytes();
  EXPECT_EQ(f->file_size(), bytes.size());
  for (const TensorInfo& t : f->tensors()) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data) % 32, 0u);
    EXPECT_EQ(0, std::memcmp(t.data, bytes.data() + f->data_offset() + t.offset, t.bytes)) << t.name;
  }
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> on_disk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(on_disk, bytes);

  // Overwriting replaces the file; the mapping of the old one stays valid.
  testutil::MakeTinyWriter().WriteFile(path);
  EXPECT_EQ(dir.EntryCount(), 1u);
  EXPECT_EQ(f->FindTensor("t.q4_K")->data[0], PatternBytes(144, 12)[0]);
  EXPECT_EQ(GgufFile::Open(path)->architecture(), "llama");
}

TEST(GgufRoundTrip, WriteFileErrors) {
  TempDir dir;
  ExpectError([&] { MakeValuesWriter().WriteFile(dir / "missing/dir/x.gguf"); },
              {"cannot create a temporary file", "missing/dir/x.gguf"});
}

TEST(GgufRoundTrip, OpenErrors) {
  TempDir dir;
  ExpectError([&] { GgufFile::Open(dir / "absent.gguf"); }, {"cannot open GGUF file", "absent.gguf"});
  ExpectError([&] { GgufFile::Open(dir / ""); }, {"not a regular file"});
  { std::ofstream(dir / "empty.gguf"); }
  ExpectError([&] { GgufFile::Open(dir / "empty.gguf"); }, {"empty.gguf: truncated file", "magic"});
  { std::ofstream(dir / "bad.gguf") << "GGML not a gguf file"; }
  ExpectError([&] { GgufFile::Open(dir / "bad.gguf"); }, {"bad.gguf: bad magic at offset 0"});
}

TEST(GgufWriterTest, RejectsBadTensors) {
  GgufWriter w;
  const std::vector<uint8_t> data(64);
  w.AddTensor("ok", {16}, DType::kF32, data);
  ExpectError([&] { w.AddTensor("ok", {16}, DType::kF32, data); }, {"duplicate tensor name 'ok'"});
  ExpectError([&] { w.AddTensor("x", {15}, DType::kF32, data); }, {"tensor 'x'", "data is 64 bytes", "60"});
  ExpectError([&] { w.AddTensor("x", {33}, DType::kQ4_0, data); },
              {"ne[0] = 33 is not a multiple of the q4_0 block size 32"});
  ExpectError([&] { w.AddTensor("x", {16, 0}, DType::kF32, data); }, {"ne[1] = 0 is not positive"});
  ExpectError([&] { w.AddTensor("x", {}, DType::kF32, data); }, {"n_dims 0"});
  ExpectError([&] { w.AddTensor("x", {1, 1, 1, 1, 16}, DType::kF32, data); }, {"n_dims 5"});
  ExpectError([&] { w.AddTensor(std::string(64, 'n'), {16}, DType::kF32, data); }, {"over ggml's limit of 63"});
  ExpectError([&] { w.AddTensor("x", {16}, static_cast<DType>(4), data); }, {"unknown type id 4"});
  w.AddTensor(std::string(63, 'n'), {16}, DType::kF32, data);
}

TEST(GgufWriterTest, RejectsBadAlignmentAndValues) {
  GgufWriter w;
  ExpectError([&] { w.SetAlignment(48); }, {"power of two", "48"});
  ExpectError([&] { w.SetAlignment(0); }, {"power of two"});
  ExpectError([&] { w.Set("general.alignment", Value::I32(32)); }, {"unsigned integer", "i32"});
  ExpectError([&] { w.Set("general.alignment", Value::U64(uint64_t{1} << 33)); }, {"power of two"});
  w.Set("general.alignment", Value::U16(128));
  auto f = RoundTrip(w);
  EXPECT_EQ(f->alignment(), 128u);
  EXPECT_EQ(f->Get("general.alignment").type(), ValueType::kU32);
  EXPECT_EQ(f->file_size() % 128, 0u);

  Value bad = Value::U8(1);
  bad.u64_ = 300;
  ExpectError([&] { w.Set("k", bad); }, {"'k'", "300", "does not fit type u8"});
  ExpectError([&] { Value::IntArray(ValueType::kI8, {1, 200}); }, {"element 1 (200) does not fit type i8"});
  ExpectError([&] { Value::IntArray(ValueType::kF32, {1}); }, {"not an integer type"});
  ExpectError([&] { Value::Array(ValueType::kI32, {Value::I32(1), Value::U8(2)}); },
              {"element 1 has type u8, expected i32"});
  Value deep = Value::I32Array({1});
  for (int i = 1; i < kMaxArrayNesting; ++i) deep = Value::Array(ValueType::kArray, {deep});
  w.Set("deep", deep);  // 16 levels: the limit
  EXPECT_EQ(RoundTrip(w)->Get("deep"), deep);
  ExpectError([&] { Value::Array(ValueType::kArray, {deep}); }, {"nested deeper than 16"});
  Value deeper;
  deeper.type_ = ValueType::kArray;
  deeper.array_type_ = ValueType::kArray;
  deeper.arrays_.push_back(deep);
  ExpectError([&] { w.Set("deeper", deeper); }, {"metadata key 'deeper[0]", "nested deeper than 16"});
}

TEST(GgufValueTest, GenericArrayConstruction) {
  const Value v = Value::Array(ValueType::kU16, {Value::U16(1), Value::U16(65535)});
  EXPECT_EQ(v.array_type(), ValueType::kU16);
  EXPECT_EQ(v.AsI64s(), (std::vector<int64_t>{1, 65535}));
  const Value s = Value::Array(ValueType::kString, {Value::String("a"), Value::String("b")});
  EXPECT_EQ(s.AsStrings(), (std::vector<std::string>{"a", "b"}));
  const Value b = Value::Array(ValueType::kBool, {Value::Bool(true)});
  EXPECT_EQ(b.AsBools(), (std::vector<bool>{true}));
  const Value d = Value::Array(ValueType::kF64, {Value::F64(0.5)});
  EXPECT_EQ(d.AsF64s(), (std::vector<double>{0.5}));
  EXPECT_TRUE(v == Value::IntArray(ValueType::kU16, {1, 65535}));
  EXPECT_EQ(ValueTypeName(ValueType::kString), "string");
  EXPECT_EQ(ValueTypeName(ValueType::kF64), "f64");
  EXPECT_EQ(ValueTypeName(static_cast<ValueType>(99)), "?");
}

}  // namespace
}  // namespace cairn::gguf
