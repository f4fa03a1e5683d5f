// GGUF writer: the layout llama.cpp's gguf writer (ggml/src/gguf.cpp) and
// gguf-py's GGUFWriter produce — header, KV pairs, tensor infos, zero padding
// to the alignment, then each tensor's data followed by zero padding.
#include "gguf/gguf_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <tuple>

#include <fmt/ranges.h>

#include "core/error.h"
#include "gguf/gguf_internal.h"

namespace cairn::gguf {

using namespace internal;

namespace {

class ByteSink {
 public:
  explicit ByteSink(std::vector<uint8_t>& out) : out_(out) {}
  void Bytes(const void* p, size_t n) {
    if (n == 0) return;
    const size_t old = out_.size();
    out_.resize(old + n);
    std::memcpy(out_.data() + old, p, n);
  }
  template <typename T>
  void Put(T v) {
    Bytes(&v, sizeof(T));
  }
  void String(std::string_view s) {
    Put<uint64_t>(s.size());
    Bytes(s.data(), s.size());
  }
  void Zeros(size_t n) { out_.resize(out_.size() + n, 0); }

 private:
  std::vector<uint8_t>& out_;
};

void PutScalar(ByteSink& s, ValueType t, uint64_t u, int64_t i, double f) {
  switch (t) {
    case ValueType::kU8: s.Put<uint8_t>(static_cast<uint8_t>(u)); break;
    case ValueType::kU16: s.Put<uint16_t>(static_cast<uint16_t>(u)); break;
    case ValueType::kU32: s.Put<uint32_t>(static_cast<uint32_t>(u)); break;
    case ValueType::kU64: s.Put<uint64_t>(u); break;
    case ValueType::kI8: s.Put<int8_t>(static_cast<int8_t>(i)); break;
    case ValueType::kI16: s.Put<int16_t>(static_cast<int16_t>(i)); break;
    case ValueType::kI32: s.Put<int32_t>(static_cast<int32_t>(i)); break;
    case ValueType::kI64: s.Put<int64_t>(i); break;
    case ValueType::kF32: s.Put<float>(static_cast<float>(f)); break;
    case ValueType::kF64: s.Put<double>(f); break;
    case ValueType::kBool: s.Put<uint8_t>(u ? 1 : 0); break;
    default: CAIRN_CHECK(false);
  }
}

void PutValueBody(ByteSink& s, const Value& v);

void PutArrayBody(ByteSink& s, const Value& v) {
  const ValueType et = v.array_type_;
  s.Put<uint32_t>(static_cast<uint32_t>(et));
  s.Put<uint64_t>(v.size());
  if (IsInt(et)) {
    for (int64_t x : v.ints_) PutScalar(s, et, static_cast<uint64_t>(x), x, 0);
  } else if (IsFloat(et)) {
    for (double x : v.floats_) PutScalar(s, et, 0, 0, x);
  } else if (et == ValueType::kBool) {
    for (uint8_t x : v.bools_) s.Put<uint8_t>(x ? 1 : 0);
  } else if (et == ValueType::kString) {
    for (const std::string& x : v.strings_) s.String(x);
  } else {
    for (const Value& x : v.arrays_) PutArrayBody(s, x);
  }
}

void PutValueBody(ByteSink& s, const Value& v) {
  if (v.type_ == ValueType::kString) {
    s.String(v.str_);
  } else if (v.is_array()) {
    PutArrayBody(s, v);
  } else {
    PutScalar(s, v.type_, v.u64_, v.i64_, v.f64_);
  }
}

size_t PadBytes(uint64_t n, uint32_t alignment) {
  uint64_t padded = 0;
  CAIRN_CHECK(PadUp(n, alignment, &padded));
  return static_cast<size_t>(padded - n);
}

}  // namespace

void GgufWriter::Set(const std::string& key, Value value) {
  value.key_for_errors = key;
  value.Validate();
  if (key == kAlignmentKey) {
    if (!IsUnsignedInt(value.type()))
      Fail("general.alignment must be an unsigned integer, got {}", ValueTypeName(value.type()));
    if (!IsPowerOfTwo(value.u64_) || value.u64_ > UINT32_MAX)
      Fail("general.alignment must be a power of two in 1..2^31, got {}", value.u64_);
    alignment_ = static_cast<uint32_t>(value.u64_);
    // llama.cpp's reader (and gguf-py's) accept only u32 here.
    value = Value::U32(alignment_);
  }
  value.key_for_errors.clear();
  for (auto& [k, v] : metadata_) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  metadata_.emplace_back(key, std::move(value));
}

void GgufWriter::SetAlignment(uint32_t alignment) { Set(kAlignmentKey, Value::U32(alignment)); }

void GgufWriter::AddTensor(const std::string& name, std::vector<int64_t> shape, DType type,
                           std::span<const uint8_t> data) {
  if (name.size() > kMaxTensorNameBytes)
    Fail("tensor '{}': name is {} bytes long, over ggml's limit of {}", Printable(name), name.size(),
         kMaxTensorNameBytes);
  for (const PendingTensor& t : tensors_)
    if (t.name == name) Fail("duplicate tensor name '{}'", Printable(name));
  const DTypeInfo* info = FindDTypeInfo(static_cast<uint32_t>(type));
  if (info == nullptr) Fail("tensor '{}': unknown type id {}", Printable(name), static_cast<uint32_t>(type));
  uint64_t bytes = 0;
  if (std::string problem = CheckTensorShape(shape, *info, &bytes); !problem.empty())
    Fail("tensor '{}': {}", Printable(name), problem);
  if (data.size() != bytes)
    Fail("tensor '{}': data is {} bytes, but {} {} elements of shape [{}] take {}", Printable(name), data.size(),
         info->name, [&] {
           int64_t n = 1;
           for (int64_t d : shape) n *= d;
           return n;
         }(),
         fmt::join(shape, ", "), bytes);
  tensors_.push_back(PendingTensor{name, std::move(shape), type, std::vector<uint8_t>(data.begin(), data.end())});
}

namespace {

// Header, KV pairs and tensor infos, padded to the alignment.
std::vector<uint8_t> SerializeMeta(const std::vector<std::pair<std::string, Value>>& metadata,
                                   const std::vector<std::tuple<const std::string*, const std::vector<int64_t>*,
                                                                DType, size_t>>& tensors,
                                   uint32_t alignment) {
  std::vector<uint8_t> out;
  ByteSink s(out);
  s.Bytes(kMagic, 4);
  s.Put<uint32_t>(kWriteVersion);
  s.Put<int64_t>(static_cast<int64_t>(tensors.size()));
  s.Put<int64_t>(static_cast<int64_t>(metadata.size()));
  for (const auto& [key, value] : metadata) {
    s.String(key);
    s.Put<uint32_t>(static_cast<uint32_t>(value.type()));
    PutValueBody(s, value);
  }
  uint64_t offset = 0;
  for (const auto& [name, shape, type, bytes] : tensors) {
    s.String(*name);
    s.Put<uint32_t>(static_cast<uint32_t>(shape->size()));
    for (int64_t d : *shape) s.Put<int64_t>(d);
    s.Put<uint32_t>(static_cast<uint32_t>(type));
    s.Put<uint64_t>(offset);
    offset += bytes + PadBytes(bytes, alignment);
  }
  s.Zeros(PadBytes(out.size(), alignment));
  return out;
}

}  // namespace

std::vector<uint8_t> GgufWriter::ToBytes() const {
  std::vector<std::tuple<const std::string*, const std::vector<int64_t>*, DType, size_t>> infos;
  for (const PendingTensor& t : tensors_) infos.emplace_back(&t.name, &t.shape, t.type, t.data.size());
  std::vector<uint8_t> out = SerializeMeta(metadata_, infos, alignment_);
  size_t total = out.size();
  for (const PendingTensor& t : tensors_) total += t.data.size() + PadBytes(t.data.size(), alignment_);
  out.reserve(total);
  for (const PendingTensor& t : tensors_) {
    out.insert(out.end(), t.data.begin(), t.data.end());
    out.insert(out.end(), PadBytes(t.data.size(), alignment_), 0);
  }
  return out;
}

namespace {

class TempFile {
 public:
  explicit TempFile(const std::string& path) : path_(path), tmp_(path + ".tmp-XXXXXX") {
    fd_ = ::mkstemp(tmp_.data());
    if (fd_ < 0) Fail("cannot create a temporary file next to '{}': {}", path_, std::strerror(errno));
  }
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(tmp_.c_str());
  }
  void Write(const uint8_t* p, size_t n) {
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        Fail("cannot write '{}': {}", tmp_, std::strerror(errno));
      }
      p += w;
      n -= static_cast<size_t>(w);
    }
  }
  void WriteZeros(size_t n) {
    static const uint8_t kZeros[4096] = {};
    while (n > 0) {
      const size_t k = std::min(n, sizeof(kZeros));
      Write(kZeros, k);
      n -= k;
    }
  }
  void Commit() {
    if (::fchmod(fd_, 0644) != 0) Fail("cannot chmod '{}': {}", tmp_, std::strerror(errno));
    if (::fsync(fd_) != 0) Fail("cannot sync '{}': {}", tmp_, std::strerror(errno));
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) Fail("cannot close '{}': {}", tmp_, std::strerror(errno));
    if (::rename(tmp_.c_str(), path_.c_str()) != 0)
      Fail("cannot rename '{}' to '{}': {}", tmp_, path_, std::strerror(errno));
    committed_ = true;
  }

 private:
  std::string path_;
  std::string tmp_;
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace

void GgufWriter::WriteFile(const std::string& path) const {
  std::vector<std::tuple<const std::string*, const std::vector<int64_t>*, DType, size_t>> infos;
  for (const PendingTensor& t : tensors_) infos.emplace_back(&t.name, &t.shape, t.type, t.data.size());
  const std::vector<uint8_t> meta = SerializeMeta(metadata_, infos, alignment_);
  TempFile file(path);
  file.Write(meta.data(), meta.size());
  for (const PendingTensor& t : tensors_) {
    file.Write(t.data.data(), t.data.size());
    file.WriteZeros(PadBytes(t.data.size(), alignment_));
  }
  file.Commit();
}

}  // namespace cairn::gguf
