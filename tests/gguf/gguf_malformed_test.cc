// Malformed inputs: every truncation of valid files, and one targeted
// corruption per validation rule, with assertions on the error text.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_test_util.h"
#include "gguf/gguf_writer.h"

namespace cairn::gguf {
namespace {

using testutil::ExpectError;
using testutil::Raw;

constexpr uint32_t kF32 = 0;
constexpr uint32_t kQ4_0 = 2;

void ExpectLoadError(const std::vector<uint8_t>& bytes, std::initializer_list<std::string_view> fragments) {
  ExpectError([&] { GgufFile::FromBytes(bytes); }, fragments);
}

// Loads every prefix of `bytes`. Prefixes shorter than `required` must fail
// with a truncation error (never crash); longer ones must load.
void CheckEveryTruncation(const std::vector<uint8_t>& bytes, size_t required) {
  ASSERT_LE(required, bytes.size());
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::span<const uint8_t> prefix(bytes.data(), n);
    if (n < required) {
      try {
        GgufFile::FromBytes(prefix);
        ADD_FAILURE() << "prefix of " << n << " bytes loaded (required " << required << ")";
      } catch (const Error& e) {
        const std::string m = e.what();
        EXPECT_TRUE(m.find("truncated") != std::string::npos || m.find("cannot fit") != std::string::npos ||
                    m.find("beyond the end") != std::string::npos)
            << "n=" << n << ": " << m;
      }
    } else {
      try {
        GgufFile::FromBytes(prefix);
      } catch (const Error& e) {
        ADD_FAILURE() << "prefix of " << n << " bytes (required " << required << ") failed: " << e.what();
      }
    }
  }
}

// Smallest loadable prefix: through the last tensor's data (its trailing
// padding is optional, as in llama.cpp); for files without tensors, through the
// last metadata value (the padding after it is optional).
size_t RequiredPrefix(const std::vector<uint8_t>& bytes) {
  auto f = GgufFile::FromBytes(bytes);
  if (!f->tensors().empty()) {
    const TensorInfo& last = f->tensors().back();
    return f->data_offset() + last.offset + last.bytes;
  }
  size_t n = bytes.size();
  while (n > 0) {
    try {
      GgufFile::FromBytes(std::span(bytes.data(), n - 1));
      --n;
    } catch (const Error&) {
      break;
    }
  }
  EXPECT_GT(n, f->data_offset() - f->alignment());
  return n;
}

TEST(GgufMalformed, EveryTruncationOfEveryReferenceFileFails) {
  for (const auto& image : testutil::ReferenceImages()) {
    SCOPED_TRACE(image.name);
    CheckEveryTruncation(image.bytes, RequiredPrefix(image.bytes));
  }
  // A vocab-style file without tensors, ending without padding.
  GgufWriter w;
  w.Set("general.architecture", Value::String("x"));
  w.Set("tokenizer.ggml.tokens", Value::StringArray({"a", "bc", ""}));
  std::vector<uint8_t> bytes = w.ToBytes();
  const size_t unpadded = 24 + (8 + 20 + 4 + 8 + 1) + (8 + 21 + 4 + 4 + 8 + 9 + 10 + 8);
  CheckEveryTruncation(bytes, unpadded);
}

TEST(GgufMalformed, TruncatedMessagesNameWhatIsMissing) {
  const std::vector<uint8_t> bytes = testutil::MakeVocabWriter().ToBytes();
  ExpectLoadError({bytes.begin(), bytes.begin() + 2}, {"truncated file: magic at offset 0 needs 4 bytes"});
  ExpectLoadError({bytes.begin(), bytes.begin() + 6}, {"truncated file: version at offset 4"});
  ExpectLoadError({bytes.begin(), bytes.begin() + 20}, {"metadata key count at offset 16"});
  // Cut inside the tokens array: the error names the key and element.
  const size_t cut = bytes.size() - 150;
  ExpectLoadError({bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(cut)}, {"truncated file"});
  Raw r;
  r.Header(0, 1).Str("k").U32(8).U64(10).Bytes("abc", 3);
  ExpectLoadError(r.data, {"truncated file: metadata key 'k': string value at offset 45 needs 10 bytes, but "
                           "only 3 remain (file size 48)"});
  Raw a;
  a.Header(0, 1).Str("arr").U32(9).U32(8).U64(2).Str("one").U64(50).Zeros(5);
  ExpectLoadError(a.data, {"metadata key 'arr': array string (element 1)", "needs 50 bytes"});
}

TEST(GgufMalformed, BadMagicAndVersion) {
  Raw r;
  r.Bytes("GGUG", 4).U32(3).I64(0).I64(0);
  ExpectLoadError(r.data, {"bad magic at offset 0", "47 47 55 47"});
  ExpectLoadError(Raw().Header(0, 0, 1).data, {"unsupported GGUF version 1 at offset 4"});
  ExpectLoadError(Raw().Header(0, 0, 4).data, {"unsupported GGUF version 4"});
  ExpectLoadError(Raw().Header(0, 0, 0x03000000).data, {"big-endian GGUF files are not supported"});
  EXPECT_NO_THROW(GgufFile::FromBytes(Raw().Header(0, 0, 2).data));
  EXPECT_NO_THROW(GgufFile::FromBytes(Raw().Header(0, 0, 3).data));
}

TEST(GgufMalformed, CountsThatCannotFit) {
  ExpectLoadError(Raw().Header(-1, 0).data, {"negative tensor count -1 at offset 8"});
  ExpectLoadError(Raw().Header(0, -5).data, {"negative metadata key count -5 at offset 16"});
  // 2^60 must be rejected before anything is allocated.
  ExpectLoadError(Raw().Header(int64_t{1} << 60, 0).data,
                  {"tensor count 1152921504606846976 at offset 8 cannot fit in the file"});
  ExpectLoadError(Raw().Header(0, int64_t{1} << 60).data,
                  {"metadata key count 1152921504606846976 at offset 16 cannot fit in the file"});
  ExpectLoadError(Raw().Header(0, INT64_MAX).data, {"cannot fit"});
  Raw r;
  r.Header(0, 2).KvU32("a", 1);  // claims two keys, room for one
  ExpectLoadError(r.data, {"metadata key count 2 at offset 16 cannot fit"});
}

TEST(GgufMalformed, StringAndArrayLimits) {
  Raw s;
  s.Header(0, 1).Str("k").U32(8).U64((uint64_t{1} << 30) + 1).Zeros(8);
  ExpectLoadError(s.data, {"metadata key 'k': string value at offset 37", "string length 1073741825 exceeds the limit"});
  Raw k;
  k.Header(0, 1).U64(uint64_t{1} << 60).Zeros(8);
  ExpectLoadError(k.data, {"metadata key #0: key at offset 24: string length 1152921504606846976 exceeds"});
  Raw a;
  a.Header(0, 1).Str("arr").U32(9).U32(4).U64(uint64_t{1} << 60).Zeros(8);
  ExpectLoadError(a.data, {"metadata key 'arr': array length 1152921504606846976 at offset 43 exceeds the limit"});
  Raw b;  // within the limit but larger than the file: rejected before allocating
  b.Header(0, 1).Str("arr").U32(9).U32(8).U64(1000000).Zeros(16);
  ExpectLoadError(b.data, {"metadata key 'arr': array of 1000000 string elements at offset 43 cannot fit in the 16 "
                           "bytes that remain"});
  Raw n;  // nested arrays: 1 Gi elements of arrays cannot fit either
  n.Header(0, 1).Str("arr").U32(9).U32(9).U64(uint64_t{1} << 30).Zeros(24);
  ExpectLoadError(n.data, {"array of 1073741824 array elements", "cannot fit"});
}

TEST(GgufMalformed, UnknownValueTypes) {
  Raw r;
  r.Header(0, 1).Str("x").U32(13).U32(0);
  ExpectLoadError(r.data, {"metadata key 'x': unknown value type 13 at offset 33"});
  Raw a;
  a.Header(0, 1).Str("x").U32(9).U32(0xffffffff).U64(0);
  ExpectLoadError(a.data, {"metadata key 'x': unknown array element type 4294967295 at offset 37"});
  Raw n;  // inside a nested array
  n.Header(0, 1).Str("x").U32(9).U32(9).U64(1).U32(77).U64(0);
  ExpectLoadError(n.data, {"metadata key 'x': unknown array element type 77 at offset 49"});
}

TEST(GgufMalformed, InvalidBool) {
  Raw r;
  r.Header(0, 1).Str("b").U32(7).U8(2);
  ExpectLoadError(r.data, {"metadata key 'b': invalid bool value 2 at offset 37"});
  Raw a;
  a.Header(0, 1).Str("b").U32(9).U32(7).U64(3).U8(1).U8(0).U8(9);
  ExpectLoadError(a.data, {"invalid bool value 9 in array element 2"});
}

TEST(GgufMalformed, NestingTooDeep) {
  Raw r;
  r.Header(0, 1).Str("deep").U32(9);
  for (int i = 0; i < 20; ++i) r.U32(9).U64(1);
  r.U32(0).U64(0);
  ExpectLoadError(r.data, {"metadata key 'deep': array at offset", "nested deeper than 16 levels"});
  Raw ok;
  ok.Header(0, 1).Str("deep").U32(9);
  for (int i = 0; i < kMaxArrayNesting - 1; ++i) ok.U32(9).U64(1);
  ok.U32(0).U64(1).U8(42);
  auto f = GgufFile::FromBytes(ok.data);
  const Value* v = &f->Get("deep");
  for (int i = 0; i < kMaxArrayNesting - 1; ++i) v = &v->AsArray()[0];
  EXPECT_EQ(v->AsI64s(), (std::vector<int64_t>{42}));
}

TEST(GgufMalformed, DuplicateKey) {
  Raw r;
  r.Header(0, 3).KvU32("a", 1);
  const size_t second = r.data.size();
  r.KvU32("b", 2);
  const size_t third = r.data.size();
  r.KvString("a", "again");
  (void)second;
  ExpectLoadError(r.data, {"duplicate metadata key 'a' at offset " + std::to_string(third) + " (first at offset 24)"});
}

TEST(GgufMalformed, Alignment) {
  auto with_alignment = [](auto put_value) {
    Raw r;
    r.Header(1, 1).Str("general.alignment");
    put_value(r);
    r.TensorInfo("w", {4}, kF32, 0);
    return r;
  };
  ExpectLoadError(with_alignment([](Raw& r) { r.U32(4).U32(48); }).data,
                  {"general.alignment at offset 24 is 48, which is not a power of two"});
  ExpectLoadError(with_alignment([](Raw& r) { r.U32(4).U32(0); }).data, {"is 0, which is not a power of two"});
  ExpectLoadError(with_alignment([](Raw& r) { r.U32(10).U64(uint64_t{1} << 32); }).data,
                  {"is 4294967296, which is not a power of two in 1..2^31"});
  ExpectLoadError(with_alignment([](Raw& r) { r.U32(5).U32(32); }).data,
                  {"general.alignment at offset 24 has type i32, expected an unsigned integer"});
  ExpectLoadError(with_alignment([](Raw& r) { r.U32(8).Str("32"); }).data, {"has type string"});
  // Any unsigned integer type that fits is accepted.
  for (uint32_t type : {0u, 2u, 4u, 10u}) {
    Raw r = with_alignment([&](Raw& raw) {
      raw.U32(type);
      const uint64_t v = 16;
      raw.Bytes(&v, type == 0 ? 1 : type == 2 ? 2 : type == 4 ? 4 : 8);
    });
    r.PadTo(16).Zeros(16);
    auto f = GgufFile::FromBytes(r.data);
    EXPECT_EQ(f->alignment(), 16u) << "type " << type;
    EXPECT_EQ(f->data_offset() % 16, 0u);
  }
}

// A valid file with two f32 [8] tensors; `info` can alter the second tensor info.
std::vector<uint8_t> TwoTensors(uint64_t second_offset, const std::string& second_name = "b",
                                std::vector<int64_t> second_shape = {8}, uint32_t second_type = kF32) {
  Raw r;
  r.Header(2, 1).KvString("general.architecture", "t");
  r.TensorInfo("a", {8}, kF32, 0);
  r.TensorInfo(second_name, second_shape, second_type, second_offset);
  r.PadTo(32).Zeros(64);
  return r.data;
}

TEST(GgufMalformed, TensorTypes) {
  EXPECT_NO_THROW(GgufFile::FromBytes(TwoTensors(32)));
  ExpectLoadError(TwoTensors(32, "b", {8}, 99), {"tensor 'b' (info at offset 98): unknown tensor type id 99 at offset 119"});
  ExpectLoadError(TwoTensors(32, "b", {256}, 16), {"unknown tensor type id 16"});  // iq2_xxs: not known to Cairn
  ExpectLoadError(TwoTensors(32, "b", {8}, 4), {"unknown tensor type id 4"});     // removed from ggml
  // Known but unsupported by the kernels (q8_K, an activation-only format):
  // loads, with its DType recorded.
  Raw r;
  r.Header(1, 0).TensorInfo("q", {256}, 15, 0).PadTo(32).Zeros(292);
  auto f = GgufFile::FromBytes(r.data);
  EXPECT_EQ(f->tensors()[0].type, DType::kQ8_K);
  EXPECT_EQ(f->tensors()[0].bytes, 292u);
  EXPECT_FALSE(GetDTypeInfo(f->tensors()[0].type).supported);
}

TEST(GgufMalformed, Dimensions) {
  Raw zero;
  zero.Header(1, 0).Str("w").U32(0).U32(kF32).U64(0).Zeros(32);
  ExpectLoadError(zero.data, {"tensor 'w' (info at offset 24): n_dims 0 at offset 33 is out of range (must be 1..4)"});
  ExpectLoadError(TwoTensors(32, "b", {1, 1, 1, 1, 8}), {"tensor 'b'", "n_dims 5 at offset", "out of range"});
  ExpectLoadError(TwoTensors(32, "b", {8, -3}), {"tensor 'b'", "dimension ne[1] = -3 is not positive"});
  ExpectLoadError(TwoTensors(32, "b", {8, 0}), {"dimension ne[1] = 0 is not positive"});
  ExpectLoadError(TwoTensors(32, "b", {int64_t{1} << 40, int64_t{1} << 40}),
                  {"tensor 'b'", "element count overflows at ne[1]"});
  ExpectLoadError(TwoTensors(32, "b", {int64_t{1} << 61}, 28), {"byte size of 2305843009213693952 elements of type f64 overflows"});
  ExpectLoadError(TwoTensors(32, "b", {33}, kQ4_0), {"tensor 'b'", "ne[0] = 33 is not a multiple of the q4_0 block size 32"});
  ExpectLoadError(TwoTensors(32, "b", {32, 3}, 12), {"ne[0] = 32 is not a multiple of the q4_K block size 256"});
}

TEST(GgufMalformed, OffsetsMustBePackedInInfoOrder) {
  ExpectLoadError(TwoTensors(16), {"tensor 'b' (info at offset 98): data offset 16 (field at offset 123) is not a multiple of the alignment 32"});
  ExpectLoadError(TwoTensors(64), {"tensor 'b'", "data offset 64", "differs from the expected 32", "packed in info order"});
  ExpectLoadError(TwoTensors(0), {"data offset 0", "differs from the expected 32"});  // overlapping
  // Swapped order: infos list b before a but offsets follow a, b.
  Raw r;
  r.Header(2, 0).TensorInfo("a", {8}, kF32, 32).TensorInfo("b", {8}, kF32, 0).PadTo(32).Zeros(64);
  ExpectLoadError(r.data, {"tensor 'a'", "data offset 32", "differs from the expected 0"});
  // A huge offset that is aligned.
  ExpectLoadError(TwoTensors(uint64_t{1} << 62), {"differs from the expected 32"});
}

TEST(GgufMalformed, DataBeyondEndOfFile) {
  std::vector<uint8_t> bytes = TwoTensors(32);
  bytes.pop_back();  // second tensor data cut by one byte
  ExpectLoadError(bytes, {"tensor 'b' (info at offset 98): data [192, 224) extends beyond the end of the file (size 223)"});
  Raw big;  // offsets fine, data far larger than the file
  big.Header(1, 0).TensorInfo("w", {1 << 20}, kF32, 0).PadTo(32);
  ExpectLoadError(big.data, {"tensor 'w'", "cannot fit in the file"});
}

TEST(GgufMalformed, DuplicateTensorNames) {
  ExpectLoadError(TwoTensors(32, "a"), {"duplicate tensor name 'a' (info at offset 98; first at offset 65)"});
}

TEST(GgufMalformed, TensorNameTooLong) {
  ExpectLoadError(TwoTensors(32, std::string(64, 'x')), {"name is 64 bytes long, over ggml's limit of 63"});
  EXPECT_NO_THROW(GgufFile::FromBytes(TwoTensors(32, std::string(63, 'x'))));
}

TEST(GgufMalformed, BinaryNamesArePrintedSafely) {
  Raw r;
  r.Header(0, 1).Str(std::string("a\nb\x01", 4)).U32(13);
  ExpectLoadError(r.data, {"metadata key 'a\\x0ab\\x01': unknown value type 13"});
}

}  // namespace
}  // namespace cairn::gguf
