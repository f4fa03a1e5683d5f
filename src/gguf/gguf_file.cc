// GGUF reader: mmap + strict validation (see gguf_file.h and docs/gguf.md).
#include "gguf/gguf_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <unordered_map>

#include "core/error.h"
#include "gguf/gguf_internal.h"

static_assert(std::endian::native == std::endian::little, "the GGUF reader assumes a little-endian host");

namespace cairn::gguf {

using namespace internal;

namespace internal {

std::string CheckTensorShape(std::span<const int64_t> shape, const DTypeInfo& info, uint64_t* bytes) {
  if (shape.empty() || shape.size() > static_cast<size_t>(kMaxDims))
    return fmt::format("n_dims {} is out of range (must be 1..{})", shape.size(), kMaxDims);
  int64_t elements = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] <= 0) return fmt::format("dimension ne[{}] = {} is not positive", i, shape[i]);
    if (__builtin_mul_overflow(elements, shape[i], &elements))
      return fmt::format("element count overflows at ne[{}] = {}", i, shape[i]);
  }
  if (shape[0] % info.block_elems != 0)
    return fmt::format("ne[0] = {} is not a multiple of the {} block size {}", shape[0], info.name,
                       info.block_elems);
  const uint64_t blocks_per_row = static_cast<uint64_t>(shape[0] / info.block_elems);
  const uint64_t rows = static_cast<uint64_t>(elements / shape[0]);
  uint64_t row_bytes = 0, total = 0;
  if (__builtin_mul_overflow(blocks_per_row, static_cast<uint64_t>(info.block_bytes), &row_bytes) ||
      __builtin_mul_overflow(row_bytes, rows, &total) || total > static_cast<uint64_t>(INT64_MAX))
    return fmt::format("byte size of {} elements of type {} overflows", elements, info.name);
  *bytes = total;
  return {};
}

}  // namespace internal

namespace {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using NameIndex = std::unordered_map<std::string, size_t, StringHash, std::equal_to<>>;

}  // namespace

struct GgufFile::Index {
  NameIndex keys;     // key -> position in metadata_
  NameIndex tensors;  // name -> position in tensors_
};

void GgufFile::FreeDeleter::operator()(uint8_t* p) const { std::free(p); }

// Reads the image front to back. Every read is bounds-checked against the
// image size; every count is checked against the bytes left before anything
// is allocated for it.
class GgufParser {
 public:
  GgufParser(GgufFile& file, std::string_view origin)
      : f_(file), origin_(origin), base_(file.base_), size_(file.size_) {}

  void Run() {
    ReadHeader();
    f_.index_ = std::make_unique<GgufFile::Index>();
    std::vector<size_t> key_offsets;
    for (int64_t i = 0; i < n_kv_; ++i) ReadKeyValue(i, key_offsets);
    ctx_.clear();
    std::vector<size_t> info_offsets;
    uint64_t expected_offset = 0;
    for (int64_t i = 0; i < n_tensors_; ++i) ReadTensorInfo(i, info_offsets, expected_offset);
    ctx_.clear();
    uint64_t data_offset = 0;
    if (!PadUp(pos_, f_.alignment_, &data_offset))
      Fail("{}: data offset overflows when padding {} to alignment {}", origin_, pos_, f_.alignment_);
    f_.data_offset_ = data_offset;
    for (size_t i = 0; i < f_.tensors_.size(); ++i) {
      TensorInfo& t = f_.tensors_[i];
      // offset + bytes cannot overflow: both were bounded by the packed running sum.
      const uint64_t begin = data_offset + t.offset;
      const uint64_t end = begin + t.bytes;
      if (begin < data_offset || end < begin || end > size_)
        Fail("{}: tensor '{}' (info at offset {}): data [{}, {}) extends beyond the end of the file "
             "(size {})",
             origin_, Printable(t.name), info_offsets[i], begin, end, size_);
      t.data = base_ + begin;
    }
  }

 private:
  static constexpr uint64_t kNoIndex = UINT64_MAX;
  // Smallest possible encodings, used to reject counts before allocating.
  static constexpr uint64_t kMinKeyValueBytes = 8 + 4 + 1;          // key length, type, u8
  static constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;  // name, n_dims, ne0, type, offset

  size_t Remaining() const { return size_ - pos_; }

  [[noreturn]] void Truncated(size_t need, std::string_view what, uint64_t index) const {
    std::string item(what);
    if (index != kNoIndex) item = fmt::format("{} (element {})", what, index);
    Fail("{}: truncated file: {}{} at offset {} needs {} bytes, but only {} remain (file size {})", origin_,
         ctx_, item, pos_, need, Remaining(), size_);
  }

  void Need(size_t n, std::string_view what, uint64_t index = kNoIndex) const {
    if (Remaining() < n) Truncated(n, what, index);
  }

  template <typename T>
  T Read(std::string_view what, uint64_t index = kNoIndex) {
    Need(sizeof(T), what, index);
    T v;
    std::memcpy(&v, base_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  void ReadString(std::string& out, std::string_view what, uint64_t index = kNoIndex) {
    const size_t at = pos_;
    const uint64_t n = Read<uint64_t>(what, index);
    if (n > kMaxStringOrArrayLength) {
      pos_ = at;
      Fail("{}: {}{}{} at offset {}: string length {} exceeds the limit of {} bytes", origin_, ctx_, what,
           index == kNoIndex ? std::string() : fmt::format(" (element {})", index), at, n,
           kMaxStringOrArrayLength);
    }
    Need(static_cast<size_t>(n), what, index);
    out.assign(reinterpret_cast<const char*>(base_ + pos_), static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
  }

  void ReadHeader() {
    Need(4, "magic");
    if (std::memcmp(base_, kMagic, 4) != 0)
      Fail("{}: bad magic at offset 0: expected \"GGUF\" (47 47 55 46), found {:02x} {:02x} {:02x} {:02x}",
           origin_, base_[0], base_[1], base_[2], base_[3]);
    pos_ = 4;
    const uint32_t version = Read<uint32_t>("version");
    if (version == 0x02000000u || version == 0x03000000u)
      Fail("{}: big-endian GGUF files are not supported (version field at offset 4 reads 0x{:08x})", origin_,
           version);
    if (version != 2 && version != 3)
      Fail("{}: unsupported GGUF version {} at offset 4 (Cairn reads versions 2 and 3)", origin_, version);
    f_.version_ = version;
    const size_t tensors_at = pos_;
    n_tensors_ = Read<int64_t>("tensor count");
    const size_t kv_at = pos_;
    n_kv_ = Read<int64_t>("metadata key count");
    if (n_tensors_ < 0) Fail("{}: negative tensor count {} at offset {}", origin_, n_tensors_, tensors_at);
    if (n_kv_ < 0) Fail("{}: negative metadata key count {} at offset {}", origin_, n_kv_, kv_at);
    const uint64_t rem = Remaining();
    if (static_cast<uint64_t>(n_kv_) > rem / kMinKeyValueBytes)
      Fail("{}: metadata key count {} at offset {} cannot fit in the file (each key/value needs at least {} "
           "bytes; {} bytes remain)",
           origin_, n_kv_, kv_at, kMinKeyValueBytes, rem);
    const uint64_t rem_after_kv = rem - static_cast<uint64_t>(n_kv_) * kMinKeyValueBytes;
    if (static_cast<uint64_t>(n_tensors_) > rem_after_kv / kMinTensorInfoBytes)
      Fail("{}: tensor count {} at offset {} cannot fit in the file (each tensor info needs at least {} "
           "bytes; at most {} bytes remain for them)",
           origin_, n_tensors_, tensors_at, kMinTensorInfoBytes, rem_after_kv);
  }

  void ReadKeyValue(int64_t i, std::vector<size_t>& key_offsets) {
    const size_t at = pos_;
    ctx_ = fmt::format("metadata key #{}: ", i);
    std::string key;
    ReadString(key, "key");
    ctx_ = fmt::format("metadata key '{}': ", Printable(key));
    if (auto it = f_.index_->keys.find(key); it != f_.index_->keys.end())
      Fail("{}: duplicate metadata key '{}' at offset {} (first at offset {})", origin_, Printable(key), at,
           key_offsets[it->second]);
    const size_t type_at = pos_;
    const uint32_t raw_type = Read<uint32_t>("value type");
    if (!IsKnownValueType(raw_type))
      Fail("{}: {}unknown value type {} at offset {}", origin_, ctx_, raw_type, type_at);
    Value value;
    value.key_for_errors = key;
    value.type_ = static_cast<ValueType>(raw_type);
    ReadValueBody(value, 1);
    if (key == kAlignmentKey) SetAlignment(value, at);
    f_.index_->keys.emplace(key, f_.metadata_.size());
    key_offsets.push_back(at);
    f_.metadata_.emplace_back(std::move(key), std::move(value));
  }

  void SetAlignment(const Value& value, size_t at) {
    if (!IsUnsignedInt(value.type_))
      Fail("{}: general.alignment at offset {} has type {}, expected an unsigned integer", origin_, at,
           value.is_array() ? "array" : ValueTypeName(value.type_));
    if (!IsPowerOfTwo(value.u64_) || value.u64_ > UINT32_MAX)
      Fail("{}: general.alignment at offset {} is {}, which is not a power of two in 1..2^31", origin_, at,
           value.u64_);
    f_.alignment_ = static_cast<uint32_t>(value.u64_);
  }

  // Reads the value of `v.type_` (already set) at pos_.
  void ReadValueBody(Value& v, int depth) {
    const size_t at = pos_;
    switch (v.type_) {
      case ValueType::kU8: v.u64_ = Read<uint8_t>("u8 value"); break;
      case ValueType::kU16: v.u64_ = Read<uint16_t>("u16 value"); break;
      case ValueType::kU32: v.u64_ = Read<uint32_t>("u32 value"); break;
      case ValueType::kU64: v.u64_ = Read<uint64_t>("u64 value"); break;
      case ValueType::kI8: v.i64_ = Read<int8_t>("i8 value"); break;
      case ValueType::kI16: v.i64_ = Read<int16_t>("i16 value"); break;
      case ValueType::kI32: v.i64_ = Read<int32_t>("i32 value"); break;
      case ValueType::kI64: v.i64_ = Read<int64_t>("i64 value"); break;
      case ValueType::kF32: v.f64_ = Read<float>("f32 value"); break;
      case ValueType::kF64: v.f64_ = Read<double>("f64 value"); break;
      case ValueType::kBool: {
        const uint8_t b = Read<uint8_t>("bool value");
        if (b > 1) Fail("{}: {}invalid bool value {} at offset {} (must be 0 or 1)", origin_, ctx_, b, at);
        v.u64_ = b;
        break;
      }
      case ValueType::kString: ReadString(v.str_, "string value"); break;
      case ValueType::kArray: ReadArrayBody(v, depth); break;
    }
  }

  void ReadArrayBody(Value& v, int depth) {
    const size_t at = pos_;
    if (depth > kMaxArrayNesting)
      Fail("{}: {}array at offset {} is nested deeper than {} levels", origin_, ctx_, at, kMaxArrayNesting);
    const uint32_t raw = Read<uint32_t>("array element type");
    if (!IsKnownValueType(raw))
      Fail("{}: {}unknown array element type {} at offset {}", origin_, ctx_, raw, at);
    const ValueType et = static_cast<ValueType>(raw);
    v.array_type_ = et;
    const size_t count_at = pos_;
    const uint64_t n = Read<uint64_t>("array length");
    if (n > kMaxStringOrArrayLength)
      Fail("{}: {}array length {} at offset {} exceeds the limit of {} elements", origin_, ctx_, n, count_at,
           kMaxStringOrArrayLength);
    const uint64_t min_size = MinEncodedSize(et);
    if (n > Remaining() / min_size)
      Fail("{}: {}array of {} {} elements at offset {} cannot fit in the {} bytes that remain", origin_, ctx_,
           n, ValueTypeName(et), count_at, Remaining());
    const size_t count = static_cast<size_t>(n);
    switch (et) {
      case ValueType::kU8: ReadInts<uint8_t>(v, count); break;
      case ValueType::kU16: ReadInts<uint16_t>(v, count); break;
      case ValueType::kU32: ReadInts<uint32_t>(v, count); break;
      case ValueType::kU64: ReadInts<uint64_t>(v, count); break;
      case ValueType::kI8: ReadInts<int8_t>(v, count); break;
      case ValueType::kI16: ReadInts<int16_t>(v, count); break;
      case ValueType::kI32: ReadInts<int32_t>(v, count); break;
      case ValueType::kI64: ReadInts<int64_t>(v, count); break;
      case ValueType::kF32: ReadFloats<float>(v, count); break;
      case ValueType::kF64: ReadFloats<double>(v, count); break;
      case ValueType::kBool: {
        v.bools_.assign(base_ + pos_, base_ + pos_ + count);
        for (size_t i = 0; i < count; ++i)
          if (v.bools_[i] > 1)
            Fail("{}: {}invalid bool value {} in array element {} at offset {} (must be 0 or 1)", origin_, ctx_,
                 v.bools_[i], i, pos_ + i);
        pos_ += count;
        break;
      }
      case ValueType::kString:
        v.strings_.resize(count);
        for (size_t i = 0; i < count; ++i) ReadString(v.strings_[i], "array string", i);
        break;
      case ValueType::kArray:
        // Each element is at least 12 bytes in the file but a Value is larger in
        // memory, so grow as elements are read instead of reserving `count`.
        for (size_t i = 0; i < count; ++i) {
          Value e;
          e.type_ = ValueType::kArray;
          e.key_for_errors = fmt::format("{}[{}]", v.key_for_errors, i);
          ReadArrayBody(e, depth + 1);
          v.arrays_.push_back(std::move(e));
        }
        break;
    }
  }

  // The caller has checked that count elements of sizeof(T) are present.
  template <typename T>
  void ReadInts(Value& v, size_t count) {
    v.ints_.resize(count);
    for (size_t i = 0; i < count; ++i) {
      T x;
      std::memcpy(&x, base_ + pos_ + i * sizeof(T), sizeof(T));
      v.ints_[i] = static_cast<int64_t>(x);
    }
    pos_ += count * sizeof(T);
  }

  template <typename T>
  void ReadFloats(Value& v, size_t count) {
    v.floats_.resize(count);
    for (size_t i = 0; i < count; ++i) {
      T x;
      std::memcpy(&x, base_ + pos_ + i * sizeof(T), sizeof(T));
      v.floats_[i] = static_cast<double>(x);
    }
    pos_ += count * sizeof(T);
  }

  void ReadTensorInfo(int64_t i, std::vector<size_t>& info_offsets, uint64_t& expected_offset) {
    const size_t at = pos_;
    ctx_ = fmt::format("tensor info #{}: ", i);
    TensorInfo t;
    ReadString(t.name, "name");
    const std::string where = fmt::format("tensor '{}' (info at offset {})", Printable(t.name), at);
    ctx_ = where + ": ";
    if (auto it = f_.index_->tensors.find(t.name); it != f_.index_->tensors.end())
      Fail("{}: duplicate tensor name '{}' (info at offset {}; first at offset {})", origin_, Printable(t.name),
           at, info_offsets[it->second]);
    if (t.name.size() > kMaxTensorNameBytes)
      Fail("{}: {}: name is {} bytes long, over ggml's limit of {}", origin_, where, t.name.size(),
           kMaxTensorNameBytes);
    const size_t dims_at = pos_;
    const uint32_t n_dims = Read<uint32_t>("n_dims");
    if (n_dims == 0 || n_dims > static_cast<uint32_t>(kMaxDims))
      Fail("{}: {}: n_dims {} at offset {} is out of range (must be 1..{})", origin_, where, n_dims, dims_at,
           kMaxDims);
    t.shape.resize(n_dims);
    for (uint32_t d = 0; d < n_dims; ++d) t.shape[d] = Read<int64_t>("dimension");
    const size_t type_at = pos_;
    const uint32_t type_id = Read<uint32_t>("type");
    const DTypeInfo* info = FindDTypeInfo(type_id);
    if (info == nullptr)
      Fail("{}: {}: unknown tensor type id {} at offset {}", origin_, where, type_id, type_at);
    t.type = info->type;
    const size_t offset_at = pos_;
    t.offset = Read<uint64_t>("offset");
    uint64_t bytes = 0;
    if (std::string problem = CheckTensorShape(t.shape, *info, &bytes); !problem.empty())
      Fail("{}: {}: {} (dimensions at offset {})", origin_, where, problem, dims_at + 4);
    t.bytes = static_cast<size_t>(bytes);
    if (t.offset % f_.alignment_ != 0)
      Fail("{}: {}: data offset {} (field at offset {}) is not a multiple of the alignment {}", origin_, where,
           t.offset, offset_at, f_.alignment_);
    if (t.offset != expected_offset)
      Fail("{}: {}: data offset {} (field at offset {}) differs from the expected {}: tensor data must be "
           "packed in info order, each tensor padded to the alignment {}",
           origin_, where, t.offset, offset_at, expected_offset, f_.alignment_);
    uint64_t padded = 0;
    if (!PadUp(bytes, f_.alignment_, &padded) || padded > size_ || expected_offset > size_ - padded)
      Fail("{}: {}: data of {} bytes at data offset {} cannot fit in the file (size {})", origin_, where, bytes,
           t.offset, size_);
    expected_offset += padded;
    f_.index_->tensors.emplace(t.name, f_.tensors_.size());
    info_offsets.push_back(at);
    f_.tensors_.push_back(std::move(t));
  }

  GgufFile& f_;
  std::string origin_;
  const uint8_t* base_;
  size_t size_;
  size_t pos_ = 0;
  std::string ctx_;  // "metadata key 'k': " etc., prefixed to truncation messages
  int64_t n_tensors_ = 0;
  int64_t n_kv_ = 0;
};

void GgufFile::Parse(std::string_view origin) { GgufParser(*this, origin).Run(); }

std::unique_ptr<GgufFile> GgufFile::Open(const std::string& path) {
  std::unique_ptr<GgufFile> file(new GgufFile());
  file->path_ = path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) Fail("cannot open GGUF file '{}': {}", path, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    Fail("cannot stat GGUF file '{}': {}", path, std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    Fail("'{}' is not a regular file", path);
  }
  const size_t size = static_cast<size_t>(st.st_size);
  if (size > 0) {
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      Fail("cannot map GGUF file '{}' ({} bytes): {}", path, size, std::strerror(err));
    }
    file->base_ = static_cast<const uint8_t*>(p);
    file->mapped_ = true;
  }
  ::close(fd);
  file->size_ = size;
  file->Parse(path);
  return file;
}

std::unique_ptr<GgufFile> GgufFile::FromBytes(std::span<const uint8_t> bytes) {
  std::unique_ptr<GgufFile> file(new GgufFile());
  // Page-aligned copy, so tensor data is as aligned as in a mapping.
  constexpr size_t kPage = 4096;
  const size_t alloc = (bytes.size() / kPage + 1) * kPage;
  auto* copy = static_cast<uint8_t*>(std::aligned_alloc(kPage, alloc));
  if (copy == nullptr) throw std::bad_alloc();
  file->owned_.reset(copy);
  if (!bytes.empty()) std::memcpy(copy, bytes.data(), bytes.size());
  file->base_ = copy;
  file->size_ = bytes.size();
  file->Parse("in-memory GGUF");
  return file;
}

GgufFile::~GgufFile() {
  if (mapped_ && base_ != nullptr) ::munmap(const_cast<uint8_t*>(base_), size_);
}

int64_t TensorInfo::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return shape.empty() ? 0 : n;
}

const Value* GgufFile::Find(std::string_view key) const {
  if (!index_) return nullptr;
  auto it = index_->keys.find(key);
  return it == index_->keys.end() ? nullptr : &metadata_[it->second].second;
}

const Value& GgufFile::Get(std::string_view key) const {
  const Value* v = Find(key);
  if (v == nullptr) Fail("missing metadata key '{}'", Printable(key));
  return *v;
}

std::string GgufFile::GetString(std::string_view key) const { return Get(key).AsString(); }
uint64_t GgufFile::GetU64(std::string_view key) const { return Get(key).AsU64(); }
double GgufFile::GetF64(std::string_view key) const { return Get(key).AsF64(); }

std::string GgufFile::GetString(std::string_view key, std::string_view fallback) const {
  const Value* v = Find(key);
  return v ? v->AsString() : std::string(fallback);
}
uint64_t GgufFile::GetU64(std::string_view key, uint64_t fallback) const {
  const Value* v = Find(key);
  return v ? v->AsU64() : fallback;
}
double GgufFile::GetF64(std::string_view key, double fallback) const {
  const Value* v = Find(key);
  return v ? v->AsF64() : fallback;
}
bool GgufFile::GetBool(std::string_view key, bool fallback) const {
  const Value* v = Find(key);
  return v ? v->AsBool() : fallback;
}

std::string GgufFile::architecture() const { return GetString("general.architecture", ""); }

const TensorInfo* GgufFile::FindTensor(std::string_view name) const {
  if (!index_) return nullptr;
  auto it = index_->tensors.find(name);
  return it == index_->tensors.end() ? nullptr : &tensors_[it->second];
}

}  // namespace cairn::gguf
