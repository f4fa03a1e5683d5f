// GGUF v3 writer for Cairn's own tools (converters, random-init models, tests).
// Writes metadata in insertion order, tensor infos in insertion order, and the
// tensor data packed in that same order, each padded to the alignment — the
// layout llama.cpp's reader requires.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "gguf/gguf_file.h"

namespace cairn::gguf {

class GgufWriter {
 public:
  GgufWriter() = default;

  // Sets (or replaces, keeping the original position) a metadata key. Throws
  // cairn::Error for an invalid value (see Value::Validate). "general.alignment"
  // also sets the alignment: any unsigned integer type is accepted, and it is
  // stored as u32 (the only type llama.cpp's reader accepts).
  void Set(const std::string& key, Value value);

  // Adds a tensor. `shape` is ggml ne order (innermost first). `data` must be
  // exactly the tensor's byte size for `type` (copied). Throws on mismatch or
  // duplicate names.
  void AddTensor(const std::string& name, std::vector<int64_t> shape, DType type,
                 std::span<const uint8_t> data);

  // general.alignment (default 32; must be a power of two). Also written as
  // metadata (u32), at the key's position; when never set, the key is omitted.
  void SetAlignment(uint32_t alignment);

  // Serialises the whole file.
  std::vector<uint8_t> ToBytes() const;
  // Writes atomically (temp file + rename). Throws cairn::Error on I/O failure.
  void WriteFile(const std::string& path) const;

 private:
  struct PendingTensor {
    std::string name;
    std::vector<int64_t> shape;
    DType type;
    std::vector<uint8_t> data;
  };
  std::vector<std::pair<std::string, Value>> metadata_;
  std::vector<PendingTensor> tensors_;
  uint32_t alignment_ = 32;
};

}  // namespace cairn::gguf
