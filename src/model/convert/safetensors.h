// Reader for Hugging Face safetensors files (one file or a sharded set with
// model.safetensors.index.json). Layout: u64 little-endian header length N,
// N bytes of JSON {name: {dtype, shape, data_offsets: [begin, end]}, ...},
// then the raw tensor bytes. Tensors are read-only views into a mapping.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace cairn::model {

struct SafeTensor {
  std::string name;
  std::string dtype;            // "F32", "F16", "BF16", ...
  std::vector<int64_t> shape;   // PyTorch order (outermost first)
  const uint8_t* data = nullptr;
  size_t bytes = 0;

  int64_t elements() const;
  // Converts to F32 (F32, F16, BF16 supported); throws otherwise.
  std::vector<float> ToF32() const;
};

class SafeTensorsSet {
 public:
  // Opens `dir`/model.safetensors or every shard named by the index file.
  static SafeTensorsSet OpenDir(const std::string& dir);
  // Opens a single file.
  void AddFile(const std::string& path);

  const SafeTensor* Find(const std::string& name) const;
  const std::map<std::string, SafeTensor>& tensors() const { return tensors_; }

 private:
  struct Mapping;
  std::vector<std::shared_ptr<Mapping>> mappings_;
  std::map<std::string, SafeTensor> tensors_;
};

}  // namespace cairn::model
